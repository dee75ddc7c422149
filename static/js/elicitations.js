// Elicitation cards (MCP servers asking for input): "Answer by HH:MM" (always shown, beside
// Send) becomes a countdown in the last two minutes; at zero the card says it expired and its buttons stop (the
// server expires it too and every tab gets the locked card). Without JS the static time
// stays.
(function () {
  "use strict";
  var NEAR_MS = 120 * 1000;

  function tick() {
    document.querySelectorAll("[data-elic-expires]").forEach(function (node) {
      var left = Date.parse(node.dataset.elicExpires) - Date.now();
      if (isNaN(left)) return;
      if (!node.dataset.elicStatic) node.dataset.elicStatic = node.textContent;
      if (left > NEAR_MS) return;  // "Answer by HH:MM" stays as the server wrote it
      if (left <= 0) {
        node.textContent = node.dataset.labelExpired;
        var card = node.closest(".elic");
        if (card) card.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
        node.removeAttribute("data-elic-expires");
        return;
      }
      var seconds = Math.ceil(left / 1000);
      var text = Math.floor(seconds / 60) + ":" + String(seconds % 60).padStart(2, "0");
      node.textContent = node.dataset.labelLeft + " " + text;
      // Announce once per minute, not every second.
      node.setAttribute("aria-live", seconds % 60 === 0 || seconds <= 10 ? "polite" : "off");
    });
  }
  document.addEventListener("DOMContentLoaded", tick);
  document.addEventListener("htmx:afterSettle", tick);
  window.setInterval(tick, 1000);
})();
