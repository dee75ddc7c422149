// Cards (every kind): live-state cursor, refusals shown in place, de-duplication,
// aria-live announcements, "Other" convenience, and where focus goes after an answer.
// Never moves focus unless this tab's own answer just replaced the element that had it.
(function () {
  "use strict";
  // Cards that can still change ("i" answerable, "p" waiting for a tool result): sent
  // with each #messages fetch so the server returns out-of-band replacements. A card that
  // re-renders itself says what it shows now (`data-card-live`), which the message's
  // state from when it was rendered may no longer be.
  window.qcLiveCards = function () {
    var parts = [];
    document.querySelectorAll("#messages > article[id]").forEach(function (n) {
      var own = n.querySelectorAll("[data-card-live]");
      var state = n.dataset.cardState || "";
      if (own.length) {
        state = "";
        own.forEach(function (c) { state += c.dataset.cardLive; });
      }
      if (state) parts.push(n.id.replace("msg-", "") + ":" + state);
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

  // A folded card the person opened stays open when a live update replaces it (the tool's
  // result arriving on an answered card, say): what they were reading doesn't snap shut.
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var target = evt.detail.target, fragment = evt.detail.fragment;
    if (!target || !target.querySelectorAll || !fragment || !fragment.querySelector) return;
    target.querySelectorAll("details.qcard-fold[open]").forEach(function (fold) {
      var card = fold.closest(".qcard");
      if (!card || !card.id) return;
      var again = fragment.querySelector("#" + CSS.escape(card.id) + " details.qcard-fold");
      if (again) again.open = true;
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
      if (idle()) afterAnswer(card);
    }
    moveOn();
  }

  // Focus after this tab answered a card (any kind): a refusal's alert or the first field
  // with an error; else the next open question; else the composer, parked there until the
  // next question arrives (then focus moves to it, unless the person started typing or
  // went elsewhere meanwhile).
  var CONTROLS = "button.qcard-opt, .qcard-opt input, select, input[type=range], " +
    "input[type=text], input[type=number], input[type=date], input[type=email], textarea, " +
    "button[type=submit]";
  var parked = null;
  function idle() {
    var active = document.activeElement;
    return !active || active === document.body || active === parked;
  }
  function nextOpen() {
    var forms = document.querySelectorAll("#messages .qcard-open form.qcard-form");
    for (var i = 0; i < forms.length; i++) {
      var controls = forms[i].querySelectorAll(CONTROLS);
      for (var j = 0; j < controls.length; j++) {
        var c = controls[j];
        if (!c.disabled && c.getAttribute("tabindex") !== "-1" && c.offsetParent !== null &&
            !c.classList.contains("visually-hidden")) return c;
      }
    }
    return null;
  }
  function firstShown(nodes) {
    for (var i = 0; i < nodes.length; i++) {
      if (nodes[i].getClientRects().length) return nodes[i];
    }
    return null;
  }
  function afterAnswer(card) {
    var article = card.closest("article");
    var notice = article && article.querySelector(".msg-notice");
    if (notice) { // refused (answered elsewhere): say so under the card, where the person is
      // and unfold the answer that counts, with its Change answer
      article.querySelectorAll("details.qcard-fold").forEach(function (d) { d.open = true; });
      notice.focus({ preventScroll: true });
      notice.scrollIntoView({ block: "nearest" });
      return;
    }
    // Only what the person can see: a message inside a closed disclosure cannot take focus.
    var problem = firstShown(card.querySelectorAll(".qcard-alert, [aria-invalid=true], .form-error"));
    if (problem && card.querySelector("form.qcard-form")) {
      var field = firstShown(card.querySelectorAll("[aria-invalid=true]")) || problem;
      if (!field.matches(CONTROLS) && !field.hasAttribute("tabindex")) field.setAttribute("tabindex", "-1");
      field.focus();
      return;
    }
    if (problem) { // refused and closed (answered elsewhere): say so where the person is
      if (!problem.hasAttribute("tabindex")) problem.setAttribute("tabindex", "-1");
      problem.focus({ preventScroll: true });
      problem.scrollIntoView({ block: "nearest" });
      return;
    }
    var next = nextOpen();
    if (next) { parked = null; next.focus(); return; }
    var composer = document.getElementById("id_content");
    if (composer) {
      parked = composer;
      composer.focus({ preventScroll: true });
    }
  }
  function moveOn() {
    if (!parked) return;
    if (!idle()) { parked = null; return; }
    var next = nextOpen();
    if (next) { parked = null; next.focus(); }
  }
  document.addEventListener("input", function (evt) { if (evt.target === parked) parked = null; });
  document.addEventListener("focusin", function (evt) {
    if (parked && evt.target !== parked) parked = null;
  });

  document.addEventListener("DOMContentLoaded", function () { scan(true); });
  document.addEventListener("htmx:afterSettle", function () { scan(false); });
  document.addEventListener("htmx:oobAfterSwap", function () { scan(false); });

  // Remember which card this tab answered (with focus in it), to move focus on after the swap.
  // While a card's answer is on its way, a live update of its message (another tab answered
  // at the same moment) waits: this tab's own response replaces the message anyway, with
  // the answer that counts and, when it lost the race, the notice saying so. (Swapped in
  // first, the live update would detach the element the response is meant for, and the
  // response — the notice included — would land nowhere.)
  var sending = {}, deferred = {};
  function cardForm(elt) {
    return elt && elt.classList && elt.classList.contains("qcard-form") ? elt : null;
  }
  // (only forms whose response replaces their whole message: an inline card's)
  function replacesMessage(form) {
    return form.getAttribute("hx-target") === "closest article";
  }
  document.addEventListener("htmx:beforeRequest", function (evt) {
    var form = cardForm(evt.detail.elt);
    if (form) {
      var card = form.closest(".qcard");
      focusCard = card && card.contains(document.activeElement) ? { id: card.id, node: card } : null;
      var article = replacesMessage(form) && form.closest("article[id]");
      if (article) sending[article.id] = (sending[article.id] || 0) + 1;
    }
  });
  document.addEventListener("htmx:afterRequest", function (evt) {
    var form = cardForm(evt.detail.elt);
    var article = form && form.closest("article[id]");
    if (!article || !sending[article.id]) return;
    sending[article.id] -= 1;
    if (sending[article.id]) return;
    delete sending[article.id];
    var missed = deferred[article.id];
    delete deferred[article.id];
    var xhr = evt.detail.xhr;
    var box = document.getElementById("messages");
    // a live update waited, or no usable answer came (offline, a server error): fetch what
    // this tab may have missed meanwhile (the server sends only what differs from it)
    if (box && window.htmx && (missed || !xhr || xhr.status === 0 || xhr.status >= 500)) {
      window.setTimeout(function () { window.htmx.trigger(box, "qc:refresh"); }, 0);
    }
  });
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var target = evt.detail.target;
    if (target && target.id && sending[target.id]) {
      evt.detail.shouldSwap = false;
      deferred[target.id] = true;
    }
  });

  // A card this tab was answering, answered meanwhile in another tab (the live update
  // arrives before this tab sent anything): say so where the person is, with what they
  // had chosen here that was not sent. The words come with the card (data-elsewhere*).
  function picked(root) {
    var parts = [];
    root.querySelectorAll(".qcard-q").forEach(function (q) {
      var own = q.classList.contains("qcard-q-skipped") ? ["\u0000skip"] : [];
      q.querySelectorAll("input[type=radio]:checked, input[type=checkbox]:checked").forEach(function (i) {
        if (i.closest(".qcard-skip")) { own.push("\u0000skip"); return; }
        var label = root.querySelector("label[for='" + CSS.escape(i.id) + "']");
        own.push(i.value === "__questionnaire_other__" ? "" : (label ? label.textContent.trim() : i.value));
      });
      q.querySelectorAll("textarea, input.qcard-other-text").forEach(function (t) {
        if (t.value.trim()) own.push(t.value.trim());
      });
      var legend = q.querySelector("legend");
      parts.push({ q: legend ? legend.textContent.replace(/^\s*\d+\.\s*/, "").trim() : "",
                   a: own.filter(Boolean) });
    });
    return parts;
  }
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    var target = evt.detail.target, fragment = evt.detail.fragment;
    if (evt.detail.shouldSwap === false || !target || !fragment || !fragment.querySelector) return;
    var open = target.querySelector(".qcard[data-elsewhere] form.qcard-form");
    if (!open || !open.querySelector("input[data-touched][value='1']")) return;
    var card = open.closest(".qcard");
    var again = fragment.querySelector("#" + CSS.escape(card.id) + "[data-card-mode=answered]");
    if (!again) return;
    var text = card.dataset.elsewhere;
    var mine = picked(open), theirs = picked(again), differ = [];
    mine.forEach(function (p, i) {
      var t = theirs[i];
      if (!t || p.a.join("\u0001") !== t.a.join("\u0001")) {
        var shown = p.a.map(function (a) { return a === "\u0000skip" ? card.dataset.skipped : a; });
        differ.push(card.dataset.choice.replace("{question}", p.q)
          .replace("{answer}", shown.join(", ") || card.dataset.noAnswer));
      }
    });
    if (differ.length) {
      text = card.dataset.elsewhereUnsent.replace("{choice}", differ.join(card.dataset.choiceSep));
    }
    var notice = document.createElement("p");
    notice.className = "msg-notice";
    notice.setAttribute("role", "alert");
    notice.setAttribute("tabindex", "-1");
    notice.dataset.errorCode = "questionnaire_answered_elsewhere";
    notice.textContent = text;
    again.after(notice);
    var fold = again.querySelector("details.qcard-fold");
    if (fold) fold.open = true; // the answer that counts, with its Change answer
    var hadFocus = target.contains(document.activeElement);
    if (hadFocus) {
      window.setTimeout(function () {
        var shown = document.querySelector("#" + CSS.escape(target.id) + " .msg-notice");
        if (shown) { shown.focus({ preventScroll: true }); shown.scrollIntoView({ block: "nearest" }); }
      }, 0);
    }
  });

  // Any click or keystroke in a question marks it touched (its hidden touched-N field): the
  // server then never records "kept the default" for it, even when the person clicked the
  // preselected option or changed it and back (DESIGN §4.14).
  function touch(evt) {
    var t = evt.target;
    var q = t && t.closest && t.closest("form.qcard-form .qcard-q");
    var mark = q && q.querySelector("input[data-touched]");
    if (mark && mark.value !== "1") mark.value = "1";
  }
  document.addEventListener("click", touch, true);
  document.addEventListener("input", touch, true);
  document.addEventListener("change", touch, true);

  // "Other" text left in its box after the person picked another option is not sent: the
  // pick is what they chose (the text stays in the box). Without JavaScript the server
  // counts typed text as "Other" (questionnaires.inline.presenter.other_typed_counts).
  document.addEventListener("htmx:configRequest", function (evt) {
    var form = evt.detail.elt;
    if (!form || !form.classList || !form.classList.contains("qcard-form")) return;
    form.querySelectorAll(".qcard-other-text[data-other-for]").forEach(function (box) {
      var choice = document.getElementById(box.dataset.otherFor);
      if (choice && !choice.checked) delete evt.detail.parameters[box.name];
    });
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
