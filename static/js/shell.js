// The shell around the thread: the side panel as a dialog (a drawer, a bottom sheet on
// phones) behind the header's pill, and the page title following the conversation's.
// Without JavaScript the pill is a link to #side-panel (CSS :target) and Close a link back.
(function () {
  "use strict";
  function $(sel, root) { return (root || document).querySelector(sel); }
  var opener = null;

  function panel() { return $("#side-panel"); }
  function focusables(root) {
    return Array.prototype.slice.call(root.querySelectorAll(
      "a[href], button:not([disabled]), input:not([disabled]):not([type=hidden]), select:not([disabled]), textarea:not([disabled]), summary, [tabindex]:not([tabindex='-1'])"
    )).filter(function (el) { return el.offsetParent !== null; });
  }
  function open(trigger) {
    var box = panel();
    if (!box) return;
    opener = trigger || document.activeElement;
    box.classList.add("is-open");
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-label", box.dataset.panelTitle || "");
    box.setAttribute("tabindex", "-1");
    var pill = $("#panel-pill");
    if (pill) pill.setAttribute("aria-expanded", "true");
    var close = $(".side-panel-close", box);
    (close || box).focus();
  }
  function close() {
    var box = panel();
    if (!box || !box.classList.contains("is-open")) return false;
    box.classList.remove("is-open");
    ["role", "aria-modal", "aria-label", "tabindex"].forEach(function (a) { box.removeAttribute(a); });
    var pill = $("#panel-pill");
    if (pill) pill.setAttribute("aria-expanded", "false");
    var back = opener && document.contains(opener) ? opener : pill;
    opener = null;
    if (back) back.focus();
    return true;
  }
  document.addEventListener("click", function (evt) {
    var t = evt.target.closest ? evt.target : null;
    if (!t) return;
    if (t.closest("[data-panel-open]")) { evt.preventDefault(); open(t.closest("[data-panel-open]")); return; }
    if (t.closest("[data-panel-close]") && panel() && panel().classList.contains("is-open")) {
      evt.preventDefault();
      close();
    }
  });
  document.addEventListener("keydown", function (evt) {
    var box = panel();
    if (!box || !box.classList.contains("is-open")) return;
    if (evt.key === "Escape") {
      evt.preventDefault();
      evt.stopImmediatePropagation();
      close();
      return;
    }
    if (evt.key !== "Tab") return;
    var items = focusables(box);  // focus stays inside the dialog
    if (!items.length) return;
    var first = items[0], last = items[items.length - 1];
    if (evt.shiftKey && (document.activeElement === first || document.activeElement === box)) {
      evt.preventDefault();
      last.focus();
    } else if (!evt.shiftKey && document.activeElement === last) {
      evt.preventDefault();
      first.focus();
    }
  }, true);

  // The panel changed (an answer, an edit, a live patch): refresh the pill's summary.
  function panelChanged(evt) {
    var target = evt.detail && evt.detail.target;
    if (!target || !target.closest || target.id === "side-panel" || !target.closest("#side-panel")) return;
    var refresh = $("[data-shell-refresh]");
    if (refresh && window.htmx) window.htmx.trigger(refresh, "qc:shell");
  }
  document.addEventListener("htmx:afterSwap", panelChanged);
  document.addEventListener("htmx:oobAfterSwap", panelChanged);
  // A new title (the first message named the conversation, or it was renamed).
  document.addEventListener("htmx:oobAfterSwap", function (evt) {
    var target = evt.detail && evt.detail.target;
    var title = document.getElementById("chat-title");  // (target is the element replaced)
    if (target && target.id === "chat-title" && title) document.title = title.textContent.trim();
  });
  document.addEventListener("DOMContentLoaded", function () {
    if (window.location.hash === "#side-panel") {
      window.history.replaceState(null, "", window.location.pathname + window.location.search);
      open($("#panel-pill"));
    }
  });
})();
