// The playground's "Load an example" (templates/questionnaires/playground.html): a GET form
// that works without JavaScript. Here it only asks before replacing a message the person
// typed or changed (what the page was served with is textarea.defaultValue).
(function () {
  "use strict";
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || form.id !== "pg-examples") return;
    var editor = document.getElementById("pg-content");
    var select = form.querySelector("[data-pg-example]");
    if (!editor || !select) return;
    var typed = editor.value.trim() !== "" && editor.value !== editor.defaultValue;
    if (typed && !window.confirm(select.getAttribute("data-confirm") || "")) {
      event.preventDefault();
    }
  });
})();
