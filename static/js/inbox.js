/* The inbox (docs/inbox.md): countdowns to deadlines, the shell's count on the menu button,
   browser notifications from the count's poll, the settings page's permission button, and
   a card reached by its link scrolled into view and marked. Without JavaScript: the plain
   deadline, the count in the sidebar, no browser notifications, :target marks the card. */
(function () {
  "use strict";
  var lang = document.documentElement.lang || "en";

  // --- countdowns ------------------------------------------------------------------------
  var rtf = window.Intl && Intl.RelativeTimeFormat ? new Intl.RelativeTimeFormat(lang, { numeric: "auto" }) : null;
  function left(ms) {
    var s = Math.round(ms / 1000), units = [["day", 86400], ["hour", 3600], ["minute", 60], ["second", 1]];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(s) >= units[i][1] || units[i][1] === 1) return rtf.format(Math.trunc(s / units[i][1]), units[i][0]);
    }
    return "";
  }
  function tick() {
    if (!rtf) return;
    document.querySelectorAll("time[data-countdown]").forEach(function (t) {
      var ms = Date.parse(t.getAttribute("datetime")) - Date.now();
      if (isNaN(ms)) return;
      t.textContent = left(ms);
      t.classList.toggle("is-soon", ms < 10 * 60 * 1000);
    });
  }
  tick();
  window.setInterval(tick, 1000);
  document.addEventListener("htmx:afterSettle", tick);

  // --- the live list: its poll waits while the person is in it (a swap would take the focus)
  document.addEventListener("htmx:beforeRequest", function (evt) {
    var list = evt.detail.elt;
    if (list && list.id === "inbox-list" && evt.detail.requestConfig.verb === "get" &&
        list.contains(document.activeElement)) evt.preventDefault();
  });

  // --- the count: the menu button's dot, and browser notifications ------------------------
  function badge() {
    var link = document.getElementById("inbox-link");
    if (!link) return;
    var waiting = (link.getAttribute("data-count") || "0") !== "0";
    document.querySelectorAll(".menu-btn").forEach(function (b) {
      if (waiting) b.setAttribute("data-inbox-waiting", ""); else b.removeAttribute("data-inbox-waiting");
    });
    var raw = link.getAttribute("data-notices");
    if (!raw || !("Notification" in window) || Notification.permission !== "granted") return;
    var notices = [];
    try { notices = JSON.parse(raw); } catch (e) { return; }
    notices.forEach(function (n) {
      // `tag`: every open tab gets the same question; the browser shows it once.
      var shown = new Notification(n.title, { body: n.body, tag: n.tag, lang: lang });
      shown.onclick = function () { window.focus(); window.location.assign(n.url); shown.close(); };
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    badge();
    // Say at once that this tab is open (no email about a question it already shows).
    var link = document.getElementById("inbox-link");
    if (link && window.htmx) window.htmx.trigger(link, "inbox:poll");
  });
  document.addEventListener("htmx:afterSettle", function (evt) {
    var elt = evt.detail.elt;
    if (elt && elt.id === "inbox-link") badge();
    // an answer given in the inbox: the count follows at once, not at the next poll
    if (elt && elt.id === "inbox-list" && evt.detail.requestConfig &&
        evt.detail.requestConfig.verb === "post") {
      var link = document.getElementById("inbox-link");
      if (link && window.htmx) window.htmx.trigger(link, "inbox:poll");
    }
  });

  // --- the settings page: ask for permission only when the person clicks -----------------
  function permissionUi() {
    var ask = document.querySelector("[data-notify-ask]"), state = document.querySelector("[data-notify-state]");
    if (!ask || !state) return;
    var supported = "Notification" in window, p = supported ? Notification.permission : "unsupported";
    ask.hidden = p !== "default";
    state.hidden = p === "default";
    state.textContent = state.getAttribute("data-" + p) || "";
  }
  document.addEventListener("click", function (evt) {
    var ask = evt.target.closest && evt.target.closest("[data-notify-ask]");
    if (!ask || !("Notification" in window)) return;
    var asked = Notification.requestPermission(permissionUi);
    if (asked && asked.then) asked.then(permissionUi);
  });
  document.addEventListener("DOMContentLoaded", permissionUi);

  // --- a card reached by its link --------------------------------------------------------
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var card = id && document.getElementById(id);
    if (!card || !card.classList.contains("qcard")) return;
    document.querySelectorAll(".qcard.is-target").forEach(function (c) { c.classList.remove("is-target"); });
    card.classList.add("is-target");
    card.scrollIntoView({ block: "center" });
    var title = document.getElementById(id + "-title");
    if (title) title.focus({ preventScroll: true });
  }
  document.addEventListener("DOMContentLoaded", function () { window.requestAnimationFrame(reveal); });
  window.addEventListener("hashchange", reveal);
})();
