// The chat's page furniture: sidebar, search, following the conversation ("New messages"),
// composer drafts and height, copy buttons. Everything works without it; this only adds.
(function () {
  "use strict";
  document.documentElement.classList.add("js");

  // A live swap never replaces a region while the person works in it (an open slot edit, a
  // conversation's menu): a click landing as the region is swapped is lost (pressed on the
  // old button, released on the new one), and so is what was typed. The swap waits; the
  // person's own request from inside the region swaps as usual; closing what was open
  // fetches the region again (`refresh`).
  window.qcHoldWhileEditing = function (targetId, busySelector, refresh) {
    var held = false;
    function busy(target) { return target.querySelector(busySelector) !== null; }
    function check(evt, sender) {
      var target = evt.detail.target;
      if (!target || target.id !== targetId) return;
      if (busy(target) && !(sender && target.contains(sender))) {
        evt.detail.shouldSwap = false;
        held = true;
      } else {
        held = false;
      }
    }
    document.addEventListener("htmx:beforeSwap", function (evt) {
      var config = evt.detail.requestConfig;
      check(evt, config && config.elt);
    });
    document.addEventListener("htmx:oobBeforeSwap", function (evt) { check(evt, null); });
    document.addEventListener("toggle", function (evt) {
      if (!held || evt.target.open) return;
      var target = document.getElementById(targetId);
      if (!target || !target.contains(evt.target) || busy(target)) return;
      held = false;
      refresh();
    }, true);
  };
  window.qcHoldWhileEditing("conv-nav", "details.conv-menu[open]", function () {
    var search = document.getElementById("conversation-search");
    if (search && window.htmx) window.htmx.trigger(search, "search");
  });
  // A list refreshed after a message was asked for with the search box as it was then; if
  // the person has typed since, it would overwrite their search's results: keep those.
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var d = evt.detail;
    if (!d || !d.target || d.target.id !== "conv-nav" || !d.fragment) return;
    var nav = d.fragment.querySelector ? d.fragment.querySelector("#conv-nav") : null;
    var search = document.getElementById("conversation-search");
    if (nav && search && (nav.getAttribute("data-query") || "").trim() !== search.value.trim()) d.shouldSwap = false;
  });
  // A rename or delete lists what the search box says now (a list held while the menu was
  // open may be from an earlier search).
  document.addEventListener("htmx:configRequest", function (evt) {
    var form = evt.detail.elt;
    var search = document.getElementById("conversation-search");
    if (search && form && form.closest && form.closest("#conv-nav")) evt.detail.parameters.q = search.value;
  });

  function $(sel, root) { return (root || document).querySelector(sel); }
  function $$(sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); }
  var reducedMotion = window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;

  // --- sidebar (narrow screens: behind the header's menu button) ---------------------------
  function sidebarOpen(open) {
    document.body.classList.toggle("sidebar-open", open);
    $$("[data-sidebar-open]").forEach(function (b) { b.setAttribute("aria-expanded", String(open)); });
    if (open) {
      var first = $("#sidebar .new-chat");
      if (first) first.focus();
    } else {
      var button = $("[data-sidebar-open]");
      if (button && button.offsetParent !== null) button.focus();
    }
  }
  document.addEventListener("click", function (evt) {
    var t = evt.target.closest ? evt.target : null;
    if (!t) return;
    if (t.closest("[data-sidebar-open]")) { evt.preventDefault(); sidebarOpen(true); return; }
    if (t.closest("[data-sidebar-close]")) { evt.preventDefault(); sidebarOpen(false); return; }
    // one conversation menu open at a time; a click elsewhere closes it
    $$("details[data-menu][open]").forEach(function (menu) {
      if (!menu.contains(t)) menu.open = false;
    });
  });
  document.addEventListener("keydown", function (evt) {
    if (evt.key !== "Escape") return;
    var menu = $("details[data-menu][open]");
    if (menu) { menu.open = false; menu.querySelector("summary").focus(); return; }
    if (document.body.classList.contains("sidebar-open")) sidebarOpen(false);
  });

  // --- conversation search: the server searches as you type (htmx, the search input) ---
  document.addEventListener("submit", function (evt) {
    // with JavaScript the list is already searched as you type; Enter needs no new page
    if (evt.target.matches && evt.target.matches(".sidebar-search")) evt.preventDefault();
  });

  // --- language: switch on change ----------------------------------------------------------
  document.addEventListener("change", function (evt) {
    var t = evt.target;
    if (t.matches && t.matches("select[data-autosubmit]") && t.form) t.form.submit();
  });

  // --- following the conversation ----------------------------------------------------------
  // #chat-scroll is a reversed flex column: the browser opens it at the bottom, keeps it there
  // while content grows, and keeps a reader who scrolled up where they are. Here: the
  // "New messages" button for that reader, and back to the bottom after sending.
  function scroller() { return $("[data-chat-scroll]"); }
  function fromBottom(box) {
    if (getComputedStyle(box).flexDirection === "column-reverse") return Math.abs(box.scrollTop);
    return box.scrollHeight - box.clientHeight - box.scrollTop;
  }
  function atBottom() { var box = scroller(); return !box || fromBottom(box) < 48; }
  function toBottom(smooth) {
    var box = scroller();
    if (!box) return;
    var top = getComputedStyle(box).flexDirection === "column-reverse" ? 0 : box.scrollHeight;
    box.scrollTo({ top: top, behavior: smooth && !reducedMotion ? "smooth" : "auto" });
  }
  function pill() { return $("[data-new-pill]"); }
  var justSent = false;
  var known = {};
  function watchMessages() {
    var box = $("#messages");
    if (!box || !window.MutationObserver) return;
    $$(":scope > article[id]", box).forEach(function (a) { known[a.id] = true; });
    new MutationObserver(function (records) {
      var fresh = [];
      records.forEach(function (r) {
        r.addedNodes.forEach(function (n) {
          if (n.nodeType === 1 && n.tagName === "ARTICLE" && n.id && !known[n.id]) {
            known[n.id] = true;
            fresh.push(n);
          }
        });
      });
      if (!fresh.length) return;
      document.body.classList.add("has-messages");
      if (justSent && fresh.some(function (n) { return n.classList.contains("msg-user"); })) {
        justSent = false;
        toBottom(false);
        return;
      }
      if (!atBottom() && pill()) pill().hidden = false;
    }).observe(box, { childList: true });
  }
  document.addEventListener("click", function (evt) {
    if (evt.target.closest && evt.target.closest("[data-new-pill]")) {
      toBottom(true);
      pill().hidden = true;
    }
  });
  document.addEventListener("scroll", function (evt) {
    if (evt.target === scroller() && atBottom() && pill()) pill().hidden = true;
  }, true);

  // --- composer: drafts survive turns and reloads (localStorage), height follows text -------
  var DRAFT = "qc-draft:";
  var sending = null;
  var typedDuringSend = null;
  var hadFocus = false;
  function composer() { return $("#id_content"); }
  function draftKey() {
    var form = $("#composer");
    return form && form.dataset.composer ? DRAFT + form.dataset.composer : null;
  }
  function draftSave() {
    var key = draftKey(), box = composer();
    if (!key || !box) return;
    try {
      if (box.value) window.localStorage.setItem(key, box.value);
      else window.localStorage.removeItem(key);
    } catch (e) { /* storage full or disabled: the text stays in the box */ }
  }
  function draftRestore() {
    var key = draftKey(), box = composer();
    if (!key || !box || box.value) return;
    try {
      var saved = window.localStorage.getItem(key);
      if (saved) box.value = saved;
    } catch (e) { /* no storage */ }
  }
  function autosize() {
    var box = composer();
    if (!box) return;
    box.style.height = "auto";
    box.style.height = box.scrollHeight + 2 + "px";
  }
  document.addEventListener("input", function (evt) {
    if (evt.target === composer()) { draftSave(); autosize(); }
  });
  document.addEventListener("htmx:beforeRequest", function (evt) {
    var elt = evt.detail.elt;
    if (elt && elt.closest && elt.closest("#composer")) {
      sending = composer() ? composer().value : null;
      justSent = true;
    }
  });
  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (!evt.detail.target || evt.detail.target.id !== "composer") return;
    var box = composer();
    hadFocus = document.activeElement === box;
    typedDuringSend = box && sending !== null && box.value !== sending ? box.value : null;
  });
  document.addEventListener("htmx:afterSettle", function (evt) {
    var box = composer();
    if (!box || !evt.detail.elt || (evt.detail.elt.id !== "composer" && !evt.detail.elt.contains(box))) return;
    var ok = evt.detail.xhr && evt.detail.xhr.status < 300;
    if (ok) {
      justSent = true;
      toBottom(false);
      var key = draftKey();
      try {
        // only the text that was sent: another tab's newer draft stays
        if (key && window.localStorage.getItem(key) === sending) window.localStorage.removeItem(key);
      } catch (e) { /* no storage */ }
      if (typedDuringSend) { box.value = typedDuringSend; draftSave(); }
    } else {
      justSent = false;
    }
    sending = null;
    typedDuringSend = null;
    autosize();
    if (hadFocus) box.focus();
    hadFocus = false;
  });

  // --- copy: a message's text, a code block -----------------------------------------------
  function copyText(text, button) {
    function done() {
      var label = button.querySelector("span");
      if (!label) return;
      var before = label.textContent;
      label.textContent = button.dataset.copied || before;
      button.classList.add("is-copied");
      window.setTimeout(function () { label.textContent = before; button.classList.remove("is-copied"); }, 1500);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, function () { legacyCopy(text); done(); });
    } else { legacyCopy(text); done(); }
  }
  function legacyCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.style.position = "fixed";
    area.style.opacity = "0";
    document.body.appendChild(area);
    area.select();
    try { document.execCommand("copy"); } catch (e) { /* nothing else to try */ }
    area.remove();
  }
  document.addEventListener("click", function (evt) {
    var button = evt.target.closest && evt.target.closest("[data-copy-message], [data-copy-code]");
    if (!button) return;
    if (button.hasAttribute("data-copy-code")) {
      var code = button.closest(".code-block").querySelector("pre");
      copyText(code ? code.innerText : "", button);
    } else {
      var body = button.closest("article").querySelector(".msg-body");
      copyText(body ? body.innerText.trim() : "", button);
    }
  });

  document.addEventListener("DOMContentLoaded", function () {
    watchMessages();
    draftRestore();
    autosize();
    if ($("#messages > article")) document.body.classList.add("has-messages");
  });
})();
