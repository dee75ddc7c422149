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

  // A slot being edited in the side panel survives a live refresh of the panel (an answer,
  // another tab's edit, the assistant's next question): its Edit stays open with what the
  // person chose or typed, and focus stays there. The edit that was just sent is not kept.
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
  document.addEventListener("htmx:beforeSwap", function (evt) {
    var config = evt.detail.requestConfig;
    remember(evt.detail.target, config && config.elt);
  });
  document.addEventListener("htmx:afterSwap", function (evt) { restore(evt.detail.target); });
  document.addEventListener("htmx:oobBeforeSwap", function (evt) { remember(evt.detail.target, null); });
  document.addEventListener("htmx:oobAfterSwap", function (evt) { restore(evt.detail.target); });
})();
