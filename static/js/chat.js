// Tiny glue where htmx can't: the seq cursor for live fetches, de-duplication, Enter to send.
(function () {
  "use strict";
  window.qcLastSeq = function () {
    var nodes = document.querySelectorAll("#messages [data-seq]");
    var last = 0;
    nodes.forEach(function (n) { last = Math.max(last, parseInt(n.dataset.seq, 10) || 0); });
    return last;
  };
  // Reconnects resume after the last event this page saw (htmx's SSE extension opens a
  // fresh EventSource on reconnect, which would otherwise forget Last-Event-ID). The
  // event names are the server's one list (chat.core.stream_events), rendered into the
  // page by `{% sse_event_names %}`.
  function eventNames() {
    var node = document.getElementById("sse-event-names");
    return node ? JSON.parse(node.textContent) : [];
  }
  window.qcLastEventId = null;
  if (window.htmx) {
    window.htmx.createEventSource = function (url) {
      if (window.qcLastEventId !== null) {
        url = url.replace(/([?&])last_event_id=\d*/, "$1last_event_id=" + window.qcLastEventId);
      }
      var source = new EventSource(url);
      eventNames().forEach(function (name) {
        source.addEventListener(name, function (e) {
          var id = parseInt(e.lastEventId, 10);
          if (!isNaN(id) && (window.qcLastEventId === null || id > window.qcLastEventId)) {
            window.qcLastEventId = id;
          }
        });
      });
      // A Retry in any tab replaced a stopped or failed turn: its messages leave this
      // page too, so the retry's reply never shows beside the copy it replaces.
      source.addEventListener("messages_superseded", function (e) {
        var data;
        try { data = JSON.parse(e.data); } catch (err) { return; }
        (data.message_ids || []).forEach(function (pk) {
          var node = document.getElementById("msg-" + pk);
          if (node) node.remove();
        });
      });
      return source;
    };
  }
  // A message fetched twice (two tabs, quick events) replaces its older copy.
  document.addEventListener("htmx:afterSwap", function (evt) {
    var box = document.getElementById("messages");
    if (!box || evt.detail.target !== box) return;
    var seen = {};
    var nodes = Array.prototype.slice.call(box.querySelectorAll(":scope > article[id]")).reverse();
    nodes.forEach(function (n) { if (seen[n.id]) { n.remove(); } else { seen[n.id] = true; } });
    placeAnswers(box);
  });
  // A turn may ask two questions before either is answered; each answer is shown right
  // after its question (the server orders full pages the same way, chat.edge.page).
  // (The first answer of a card only, as the server does: a later one stays where it was said.)
  function placeAnswers(box) {
    var placed = {};
    box.querySelectorAll(":scope > article[data-answers]").forEach(function (answer) {
      var key = answer.dataset.answers;
      var seq = parseInt(answer.dataset.seq, 10) || 0;
      if (placed[key] !== undefined && placed[key] < seq) return;
      placed[key] = seq;
      var card = null;
      box.querySelectorAll(":scope > article[data-answer-key]").forEach(function (a) {
        if (a.dataset.answerKey === key) card = a;
      });
      if (card && card.nextElementSibling !== answer) card.after(answer);
    });
  }
  // A refusal because this tab is behind (409: answered elsewhere, superseded): fetch
  // the messages it missed, so the newer ones it points to appear.
  document.addEventListener("htmx:afterRequest", function (evt) {
    var xhr = evt.detail.xhr;
    var box = document.getElementById("messages");
    if (!box || !xhr || xhr.status !== 409 || !window.htmx) return;
    window.setTimeout(function () { window.htmx.trigger(box, "qc:refresh"); }, 0);
  });
  // A refusal (400 bad input, 409 conflict, 413 too long, 429 past the day's token
  // allowance) comes back as the form, card or run region with its reason and what the
  // user typed: swap it in (htmx skips 4xx by default).
  var SWAPPED_ERRORS = [400, 409, 413, 429];
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var elt = evt.detail.requestConfig && evt.detail.requestConfig.elt;
    if (elt && elt.closest && elt.closest("[data-swap-errors]") &&
        SWAPPED_ERRORS.indexOf(evt.detail.xhr.status) !== -1) {
      evt.detail.shouldSwap = true;
      evt.detail.isError = false;
    }
  });
  // A refusal that went (its card was answered: #composer-refusal came back empty) leaves
  // the composer's text as it was, no longer marked invalid.
  document.addEventListener("htmx:afterSettle", function () {
    var box = document.getElementById("id_content");
    if (box && box.getAttribute("aria-describedby") === "composer-error" &&
        !document.getElementById("composer-error")) {
      box.removeAttribute("aria-invalid");
      box.removeAttribute("aria-describedby");
    }
  });
  // Enter sends, Shift+Enter makes a new line (not while an IME composes).
  document.addEventListener("keydown", function (evt) {
    var t = evt.target;
    if (evt.key === "Enter" && !evt.shiftKey && !evt.isComposing && t && t.id === "id_content") {
      evt.preventDefault();
      // (the home composer may start an assistant that opens by itself with no text)
      var opens = t.form && t.form.querySelector("#id_agent option:checked[data-opens]");
      if (t.form && (t.value.trim() || opens)) t.form.requestSubmit();
    }
  });
})();
