// Card drafts: what a person types into an open card is saved on the server (debounced),
// so a reload, another tab or another device shows it again; answering the card deletes
// it (questionnaires/drafts.py). The key is the card form's data-draft-key, so every kind
// of card takes part by rendering that one attribute.
(function () {
  "use strict";
  var DELAY_MS = 600;
  var timers = new WeakMap();
  var pending = new Set(); // forms typed in whose save still waits for the pause

  // Each kind's card form names itself (data-draft-key, from the kind's view model); the
  // conversation says where drafts go (#messages[data-draft-url]).
  function cardKey(form) {
    return form.dataset.draftKey || null;
  }

  function draftUrl(form) {
    var box = form.closest("[data-draft-url]");
    return box ? box.dataset.draftUrl : null;
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (e) {
      return "";
    }
  }

  // `leaving`: the page is going away (reload, close, navigation); keepalive lets the
  // request finish after it (drafts are capped at 50,000 bytes, under keepalive's 64 KiB).
  function save(form, leaving) {
    pending.delete(form);
    var key = cardKey(form);
    var url = draftUrl(form);
    if (!key || !url || !form.isConnected) return;
    var data = new FormData(form);
    data.set("card_key", key);
    fetch(url, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      keepalive: !!leaving,
      headers: { "X-CSRFToken": csrfToken() },
    }).catch(function () { /* offline: the next keystroke tries again */ });
  }

  function typed(evt) {
    var field = evt.target;
    var form = field && (field.form || (field.closest && field.closest("form")));
    if (!form || !form.closest("#messages")) return;
    window.clearTimeout(timers.get(form));
    pending.add(form);
    timers.set(form, window.setTimeout(function () { save(form); }, DELAY_MS));
  }

  document.addEventListener("input", typed);
  document.addEventListener("change", typed);
  // A submitted card is answered: nothing left to save.
  document.addEventListener("submit", function (evt) {
    window.clearTimeout(timers.get(evt.target));
    pending.delete(evt.target);
  }, true);
  // Typed just before a reload or closing the tab: save now rather than after the pause —
  // on beforeunload, which comes before a reload's request (so the new page has it), and
  // on pagehide for what beforeunload misses (a phone's browser discarding the tab).
  // The reloaded page may be served before that save is stored, so this tab also keeps
  // what it sent (sessionStorage, for STASH_MS) and puts it back into the card.
  var STASH_MS = 10000;
  var STASH = "qc-draft-stash:";

  function flush() {
    pending.forEach(function (form) {
      window.clearTimeout(timers.get(form));
      stash(form);
      save(form, true);
    });
  }
  window.addEventListener("beforeunload", flush);
  window.addEventListener("pagehide", flush);

  function stashKey(form) {
    return STASH + location.pathname + "#" + cardKey(form);
  }

  function stash(form) {
    if (!cardKey(form)) return;
    var fields = {};
    new FormData(form).forEach(function (value, name) {
      if (typeof value === "string") (fields[name] = fields[name] || []).push(value);
    });
    try {
      sessionStorage.setItem(stashKey(form), JSON.stringify({ at: Date.now(), fields: fields }));
    } catch (e) { /* storage full or off: the server's copy still comes */ }
  }

  function unstash(form) {
    var kept;
    try {  // (restore then empties the stash)
      kept = JSON.parse(sessionStorage.getItem(stashKey(form)) || "null");
    } catch (e) {
      return;
    }
    if (!kept || !kept.fields || Date.now() - kept.at > STASH_MS) return;
    var seen = {};
    Array.prototype.forEach.call(form.elements, function (el) {
      var values = el.name && kept.fields[el.name];
      if (!values || el.type === "hidden" || el.type === "submit") return;
      if (el.type === "checkbox" || el.type === "radio") {
        el.checked = values.indexOf(el.value) !== -1;
      } else if (el.tagName === "SELECT") {
        Array.prototype.forEach.call(el.options, function (o) {
          o.selected = values.indexOf(o.value) !== -1;
        });
      } else {
        var i = seen[el.name] || 0;
        seen[el.name] = i + 1;
        if (i < values.length) el.value = values[i];
      }
      el.dispatchEvent(new Event("input", { bubbles: true }));
    });
  }

  function restore() {
    document.querySelectorAll("#messages form[data-draft-key]").forEach(unstash);
    try {  // used once: what a card took, and what none did (answered meanwhile)
      for (var i = sessionStorage.length - 1; i >= 0; i--) {
        var key = sessionStorage.key(i);
        if (key && key.indexOf(STASH) === 0) sessionStorage.removeItem(key);
      }
    } catch (e) { /* storage off */ }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", restore);
  } else {
    restore();
  }
})();
