// The live run (issue 5): a streaming preview bubble from `text_delta`, collapsed tool
// calls and results, cleared when the real message arrives or the run ends. Events are
// handled once each, by SSE id, so a replay after a reconnect never duplicates text.
(function () {
  "use strict";
  var NAMES = ["run_started", "text_delta", "tool_call", "tool_progress", "tool_result",
    "message_done", "run_suspended", "run_finished", "error"];
  var lastHandled = 0;
  var iteration = null;

  function live() { return document.getElementById("run-live"); }

  function reset(keepTools) {
    var box = live();
    if (!box) return;
    box.querySelector(".run-preview-text").textContent = "";
    box.querySelector(".run-preview").hidden = true;
    if (!keepTools) box.querySelector(".run-tools").textContent = "";
    box.hidden = !box.querySelector(".run-tools").children.length;
    iteration = null;
  }

  function appendText(data) {
    var box = live();
    var text = box.querySelector(".run-preview-text");
    if (iteration !== data.iteration) { text.textContent = ""; iteration = data.iteration; }
    // A turn resumed on another worker whose model call came out differently.
    if (data.replace) text.textContent = "";
    text.textContent += data.text || "";
    box.querySelector(".run-preview").hidden = false;
    box.hidden = false;
  }

  // A tool step for people: its label ("Preparing a question…", from the tool's title)
  // while it runs; once it is done the line goes (what it made shows in the thread; a
  // step that failed is the assistant's to retry, and a turn that fails says so in the
  // run status). How it went ("· done", "· failed"), the tool's name, arguments and
  // result (machinery) only with "developer details" on (body.dev-details).
  function developer() { return document.body.classList.contains("dev-details"); }

  function toolLabel(box, data) {
    return box.getAttribute("data-tool-" + (data.name || "")) || data.label || data.name || "";
  }

  function toolItem(data) {
    var box = live();
    var list = box.querySelector(".run-tools");
    var id = "run-tool-" + String(data.tool_call_id || "").replace(/[^A-Za-z0-9_-]/g, "_");
    var item = document.getElementById(id);
    if (!item) {
      item = document.createElement("li");
      item.id = id;
      var holder = document.createElement(developer() ? "details" : "div");
      var summary = document.createElement(developer() ? "summary" : "span");
      var label = document.createElement("span");
      label.className = "run-tool-name";
      label.textContent = toolLabel(box, data) + "…";
      summary.appendChild(label);
      if (developer()) {
        var name = document.createElement("code");
        name.textContent = " " + (data.name || "");
        summary.appendChild(name);
      }
      var state = document.createElement("span");
      state.className = "run-tool-state";
      state.textContent = "";
      summary.appendChild(state);
      holder.className = "run-tool";
      holder.appendChild(summary);
      item.appendChild(holder);
      list.appendChild(item);
    }
    box.hidden = false;
    return item;
  }

  // An MCP server's progress notes on its call (chat.mcphost.progress, throttled there):
  // a bar when the server says how far is done, and its words.
  function showProgress(item, data) {
    var box = live();
    var holder = item.querySelector(".run-tool");
    var wrap = item.querySelector(".run-tool-progress");
    if (!wrap) {
      wrap = document.createElement("div");
      wrap.className = "run-tool-progress";
      var bar = document.createElement("progress");
      bar.setAttribute("aria-label", item.querySelector(".run-tool-name").textContent);
      var text = document.createElement("span");
      text.className = "run-tool-progress-text";
      text.setAttribute("role", "status");
      wrap.appendChild(bar);
      wrap.appendChild(text);
      holder.appendChild(wrap);
    }
    var progress = wrap.querySelector("progress");
    var total = typeof data.total === "number" && data.total > 0 ? data.total : null;
    var words = [];
    if (total !== null) {
      progress.max = total;
      progress.value = Math.min(Math.max(data.progress, 0), total);
      words.push((box.dataset.labelProgress || "%(done)s of %(total)s")
        .replace("%(done)s", String(data.progress)).replace("%(total)s", String(total)));
    } else {
      progress.removeAttribute("value");  // indeterminate: the server gave no total
    }
    if (data.message) words.push(data.message);
    wrap.querySelector(".run-tool-progress-text").textContent = words.join(" · ");
  }

  function block(item, label, value) {
    var details = item.querySelector("details");
    if (!details) return;  // no developer details: no arguments, no raw result
    var heading = document.createElement("div");
    heading.className = "run-tool-label";
    heading.textContent = label;
    var pre = document.createElement("pre");
    pre.textContent = value;
    details.appendChild(heading);
    details.appendChild(pre);
  }

  function pretty(value) {
    try {
      return JSON.stringify(typeof value === "string" ? JSON.parse(value) : value, null, 2);
    } catch (e) { return String(value); }
  }

  var handlers = {
    run_started: function () { reset(false); },
    text_delta: appendText,
    tool_call: function (data) {
      block(toolItem(data), live().dataset.labelArguments, pretty(data.arguments));
    },
    tool_progress: function (data) {
      // only on a call still running here (a late note never brings a done one back)
      var id = "run-tool-" + String(data.tool_call_id || "").replace(/[^A-Za-z0-9_-]/g, "_");
      var item = document.getElementById(id);
      if (item) showProgress(item, data);
    },
    tool_result: function (data) {
      if (!developer()) {
        var line = toolItem(data);
        line.remove();
        var rest = live();
        rest.hidden = !rest.querySelector(".run-tools").children.length &&
          rest.querySelector(".run-preview").hidden;
        return;
      }
      var item = toolItem(data);
      var box = live();
      item.querySelector(".run-tool-state").textContent =
        " · " + (data.success ? box.dataset.labelOk : box.dataset.labelFailed);
      item.classList.toggle("run-tool-failed", !data.success);
      block(item, box.dataset.labelResult, pretty(data.result));
    },
    message_done: function (data) { if (data.role === "assistant") reset(true); },
    run_finished: function () { reset(false); },
    run_suspended: function () { reset(true); },
    error: function () { reset(true); }
  };

  function listen(source) {
    NAMES.forEach(function (name) {
      source.addEventListener(name, function (e) {
        var id = parseInt(e.lastEventId, 10);
        if (!isNaN(id)) {
          if (id <= lastHandled) return;
          lastHandled = id;
        }
        if (!live()) return;
        var data = {};
        try { data = JSON.parse(e.data); } catch (err) { return; }
        handlers[name](data);
      });
    });
  }

  // Chain onto the EventSource factory (chat.js wraps it too): every stream the page
  // opens, including reconnects, gets our listeners.
  if (window.htmx) {
    var create = window.htmx.createEventSource;
    window.htmx.createEventSource = function (url) {
      var source = create ? create(url) : new EventSource(url);
      listen(source);
      return source;
    };
  }
})();
