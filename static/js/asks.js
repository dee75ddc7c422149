// Ask widgets: keep a slider's shown value in sync (its <output>). No inline handlers.
(function () {
  "use strict";
  document.addEventListener("input", function (evt) {
    var t = evt.target;
    if (!t || t.type !== "range" || !t.dataset.output) return;
    var out = document.getElementById(t.dataset.output);
    if (out) out.textContent = t.value;
    t.setAttribute("aria-valuetext", t.value);
  });

  // Where focus goes after an answer: static/js/cards.js (the same for every card).

  // When the person's own Save replaces the panel, any other slot they are editing stays
  // open with what they chose or typed, and focus stays there (the edit just sent is not
  // kept). Live refreshes wait while an edit is open (below).
  var kept = null;
  function isPanelBody(el) { return el && el.id === "state-panel-body"; }
  function remember(target, sender) {
    if (!isPanelBody(target)) return;
    kept = [];
    target.querySelectorAll("details.state-edit[open]").forEach(function (details) {
      var form = details.querySelector("form");
      var slot = details.closest("[data-field]");
      if (!form || !slot || (sender && (form === sender || form.contains(sender)))) return;
      var values = {};
      form.querySelectorAll("input[name]:not([type=hidden]), select[name], textarea[name]")
        .forEach(function (f) { values[f.name] = f.value; });
      var active = document.activeElement;
      var focus = details.contains(active) ? (active.name || "summary") : null;
      kept.push({ field: slot.dataset.field, values: values, focus: focus });
    });
  }
  function restore(target) {
    if (!isPanelBody(target) || !kept) return;
    kept.forEach(function (k) {
      var slot = target.querySelector('[data-field="' + CSS.escape(k.field) + '"]');
      var details = slot && slot.querySelector("details.state-edit");
      var form = details && details.querySelector("form");
      if (!form) return;
      details.open = true;
      Object.keys(k.values).forEach(function (name) {
        var field = form.querySelector('[name="' + CSS.escape(name) + '"]:not([type=hidden])');
        if (field) field.value = k.values[name];
      });
      if (k.focus) {
        var el = k.focus === "summary" ? details.querySelector("summary")
          : form.querySelector('[name="' + CSS.escape(k.focus) + '"]');
        if (el) el.focus({ preventScroll: true });
      }
    });
    kept = null;
  }

  // A live refresh (the stream's, or the panel an answer in the chat sends along) waits
  // while the person edits a slot (static/js/ui.js qcHoldWhileEditing): it comes when the
  // edit is saved (that response is the panel as it now stands) or closed (fetched again).
  window.qcHoldWhileEditing("state-panel-body", "details.state-edit[open]", function () {
    var panel = document.getElementById("state-panel");
    if (panel && window.htmx) window.htmx.trigger(panel, "sse:consultation_state_patch");
  });
  document.addEventListener("htmx:beforeSwap", function (evt) {
    if (evt.detail.shouldSwap === false) return;
    var config = evt.detail.requestConfig;
    remember(evt.detail.target, config && config.elt);
  });
  document.addEventListener("htmx:afterSwap", function (evt) { restore(evt.detail.target); });
  document.addEventListener("htmx:oobBeforeSwap", function (evt) {
    if (evt.detail.shouldSwap !== false) remember(evt.detail.target, null);
  });
  document.addEventListener("htmx:oobAfterSwap", function (evt) { restore(evt.detail.target); });
})();
