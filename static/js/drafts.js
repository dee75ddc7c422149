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
  // Typed just before a reload or closing the tab: save now rather than after the pause.
  window.addEventListener("pagehide", function () {
    pending.forEach(function (form) {
      window.clearTimeout(timers.get(form));
      save(form, true);
    });
  });
})();
