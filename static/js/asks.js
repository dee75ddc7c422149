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
})();
