// Questionnaire cards: live-state cursor, refusals shown in place, de-duplication,
// aria-live announcements, "Other" convenience. Never moves focus unless this tab's own
// submit just replaced the element that had it.
(function () {
  "use strict";
  // Cards that can still change ("i" answerable, "p" waiting for a tool result): sent
  // with each #messages fetch so the server returns out-of-band replacements.
  window.qcLiveCards = function () {
    var parts = [];
    document.querySelectorAll("#messages article[data-card-state]").forEach(function (n) {
      parts.push(n.id.replace("msg-", "") + ":" + n.dataset.cardState);
    });
    return parts.join(",");
  };

  // The submit response appends the new user message out of band; skip it when the
  // live event stream already added it (and vice versa chat.js drops older copies).
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    if (!evt.detail.target || evt.detail.target.id !== "messages") return;
    var fragment = evt.detail.fragment;
    if (!fragment || !fragment.querySelectorAll) return;
    fragment.querySelectorAll("article[id]").forEach(function (a) {
      if (document.getElementById(a.id)) a.remove();
    });
  });

  // One polite live region; each announcement is a new line (a quick second one never
  // cuts off the first), and only the last few are kept.
  var announcer = null;
  function announce(text) {
    if (!text) return;
    if (!announcer) {
      announcer = document.createElement("div");
      announcer.id = "qc-announcer";
      announcer.className = "visually-hidden";
      announcer.setAttribute("role", "status");
      announcer.setAttribute("aria-live", "polite");
      announcer.setAttribute("aria-relevant", "additions");
      document.body.appendChild(announcer);
    }
    window.setTimeout(function () {
      var line = document.createElement("p");
      line.textContent = text;
      announcer.appendChild(line);
      while (announcer.children.length > 4) announcer.removeChild(announcer.firstChild);
    }, 50);
  }

  var seen = {};
  var focusCard = null;
  // New cards and questions are announced politely (#messages itself is not a live region:
  // swaps and reordering would repeat whole messages); so is the text of a new reply.
  function scan(quiet) {
    var messages = [];
    document.querySelectorAll("#messages > article.msg-assistant").forEach(function (article) {
      var widgets = article.querySelectorAll("[data-announce]");
      if (!widgets.length) {
        if (seen[article.id]) return;
        seen[article.id] = true;
        var body = article.querySelector(".msg-body");
        var text = body ? body.textContent.trim().replace(/\s+/g, " ") : "";
        if (!quiet && text) messages.push(text.length > 200 ? text.slice(0, 199) + "…" : text);
        return;
      }
      seen[article.id] = true;
      widgets.forEach(function (card) {
        var key = card.id + ":" + (card.dataset.cardMode || card.dataset.announce);
        if (seen[key]) return;
        seen[key] = true;
        if (!quiet && card.dataset.announce) messages.push(card.dataset.announce);
      });
    });
    if (messages.length) announce(messages.join(" "));
    if (focusCard) {
      var card = document.getElementById(focusCard.id);
      if (!card || card === focusCard.node) return; // not replaced yet
      focusCard = null;
      var active = document.activeElement;
      if (card && (!active || active === document.body)) {
        var target = card.querySelector(".qcard-alert") || card.querySelector(".qcard-title");
        if (target) {
          if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
          target.focus({ preventScroll: false });
        }
      }
    }
  }
  document.addEventListener("DOMContentLoaded", function () { scan(true); });
  document.addEventListener("htmx:afterSettle", function () { scan(false); });
  document.addEventListener("htmx:oobAfterSwap", function () { scan(false); });

  // Remember which card this tab submitted, to put focus back on it after the swap.
  document.addEventListener("htmx:beforeRequest", function (evt) {
    var form = evt.detail.elt;
    if (form && form.classList && form.classList.contains("qcard-form")) {
      var card = form.closest(".qcard");
      focusCard = card ? { id: card.id, node: card } : null;
    }
  });

  // Typing an "Other" answer selects "Other".
  document.addEventListener("input", function (evt) {
    var t = evt.target;
    if (!t || !t.classList || !t.classList.contains("qcard-other-text")) return;
    var choice = document.getElementById(t.dataset.otherFor);
    if (choice && t.value.trim() && !choice.checked) choice.checked = true;
  });
})();

// The message-list fetch says what this tab has: the last message it shows and its live
// cards. Added here rather than with hx-vals="js:…", which the Content-Security-Policy
// (no eval) forbids.
document.addEventListener("htmx:configRequest", function (evt) {
  if (!evt.detail.elt || evt.detail.elt.id !== "messages") return;
  evt.detail.parameters.after = window.qcLastSeq ? window.qcLastSeq() : 0;
  evt.detail.parameters.live = window.qcLiveCards ? window.qcLiveCards() : "";
});
