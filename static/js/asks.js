// Ask widgets: keep a slider's shown value in sync (its <output>), and keep keyboard focus
// where the next answer goes. No inline handlers.
(function () {
  "use strict";
  document.addEventListener("input", function (evt) {
    var t = evt.target;
    if (!t || t.type !== "range" || !t.dataset.output) return;
    var out = document.getElementById(t.dataset.output);
    if (out) out.textContent = t.value;
    t.setAttribute("aria-valuetext", t.value);
  });

  // Answering a widget replaces it, which would drop focus to <body>. When this tab's
  // answer had focus, focus moves to the next open question — at once when one is shown,
  // else when the next one arrives. Never while the person is busy elsewhere: waiting stops
  // as soon as focus goes anywhere but where we parked it.
  var CONTROLS = "button.ask-option, select, input[type=range], input[type=text], textarea, " +
    "input[type=radio], input[type=checkbox], button[type=submit]";
  var answering = null; // id of the widget whose answer this tab is sending with focus in it
  var waiting = false;
  var parked = null;

  function nextOpen() {
    var widgets = document.querySelectorAll(
      "#messages .ask:not(.ask-closed) form, #messages .qcard-open form");
    for (var i = 0; i < widgets.length; i++) {
      var controls = widgets[i].querySelectorAll(CONTROLS);
      for (var j = 0; j < controls.length; j++) {
        var c = controls[j];
        if (!c.disabled && c.getAttribute("tabindex") !== "-1" && c.offsetParent !== null &&
            !c.classList.contains("visually-hidden")) return c;
      }
    }
    return null;
  }
  function idle() {
    var active = document.activeElement;
    return !active || active === document.body || active === parked;
  }
  function moveOn() {
    if (!waiting) return;
    if (!idle()) { waiting = false; return; }
    var control = nextOpen();
    if (control) {
      waiting = false;
      parked = null;
      control.focus();
    }
  }

  document.addEventListener("htmx:beforeRequest", function (evt) {
    var form = evt.detail.elt;
    if (!form || !form.closest) return;
    var ask = form.closest(".ask");
    if (ask && form.tagName === "FORM" && ask.contains(document.activeElement)) answering = ask.id;
  });
  document.addEventListener("htmx:afterSettle", function (evt) {
    if (answering && evt.target && evt.target.id === answering) {
      var widget = document.getElementById(answering);
      answering = null;
      if (widget && widget.querySelector(".ask-answered") && idle()) {
        // park focus on the answer, so a screen reader hears it and Tab continues from here
        parked = widget.querySelector(".ask-answered");
        parked.setAttribute("tabindex", "-1");
        parked.focus({ preventScroll: true });
        waiting = true;
        moveOn();
      } else if (widget && widget.querySelector(".form-error")) {
        var field = widget.querySelector("input[type=text], select, button.ask-option");
        if (field && idle()) field.focus();
      }
      return;
    }
    moveOn();
  });
  document.addEventListener("htmx:oobAfterSwap", moveOn);
  document.addEventListener("focusin", function (evt) {
    if (waiting && evt.target !== parked) waiting = false;
  });
})();
