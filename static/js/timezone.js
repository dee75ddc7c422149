// The browser's time zone for the server (chat/edge/timezones.py): pages show times in it
// and a typed local date-time means this clock. Without JavaScript the server uses UTC.
(function () {
  "use strict";
  var zone = "";
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone || ""; } catch (e) { return; }
  if (!zone || /[^A-Za-z0-9_+\-\/]/.test(zone)) return;
  var current = document.cookie.split("; ").filter(function (c) { return c.indexOf("tz=") === 0; })[0];
  if (current === "tz=" + zone) return;
  document.cookie = "tz=" + zone + "; path=/; max-age=31536000; SameSite=Lax" +
    (location.protocol === "https:" ? "; Secure" : "");
}());
