// Card drafts: what a person types into an open card is saved on the server (debounced),
// so a reload, another tab or another device shows it again; answering the card deletes
// it (questionnaires/drafts.py). The key is read from the card's own form, so every kind
// of card takes part without any markup of its own.
(function () {
  "use strict";
  var DELAY_MS = 600;
  var timers = new WeakMap();

  function cardKey(form) {
    var questionnaire = form.querySelector('input[name="questionnaire_id"]');
    if (questionnaire && questionnaire.value) return "q:" + questionnaire.value;
    var elicitation = form.querySelector('input[name="elicitation_id"]');
    if (elicitation && elicitation.value) return "elic:" + elicitation.value;
    var ask = form.querySelector('input[name="ask_id"]');
    if (ask && ask.value) return "form:" + ask.value;
    var match = (form.getAttribute("action") || "").match(/\/asks\/(\d+)\/answer$/);
    return match ? "ask:" + match[1] : null;
  }

  function draftUrl(form) {
    var match = (form.getAttribute("action") || "").match(/^(.*\/conversations\/\d+)\//);
    return match ? match[1] + "/drafts" : null;
  }

  function csrfToken() {
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch (e) {
      return "";
    }
  }

  function save(form) {
    var key = cardKey(form);
    var url = draftUrl(form);
    if (!key || !url || !form.isConnected) return;
    var data = new FormData(form);
    data.set("card_key", key);
    fetch(url, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { "X-CSRFToken": csrfToken() },
    }).catch(function () { /* offline: the next keystroke tries again */ });
  }

  function typed(evt) {
    var field = evt.target;
    var form = field && (field.form || (field.closest && field.closest("form")));
    if (!form || !form.closest("#messages")) return;
    window.clearTimeout(timers.get(form));
    timers.set(form, window.setTimeout(function () { save(form); }, DELAY_MS));
  }

  document.addEventListener("input", typed);
  document.addEventListener("change", typed);
  // A submitted card is answered: nothing left to save.
  document.addEventListener("submit", function (evt) {
    window.clearTimeout(timers.get(evt.target));
  }, true);
})();
