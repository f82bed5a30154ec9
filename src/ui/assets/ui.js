// Small comforts on Authrim's pages; every page works without this script.
// - A form marked submit-once disables its buttons once submitted, so that a double click
//   sends one sign-in, not two.
// - A form marked confirm-delay (consent) takes no click in its first moment, so that the
//   second click of a double click on the previous page's button does not land on Allow.
// - A button with data-copy="ID" copies that element's text.
// - A <time datetime="…Z" data-local> (the console's times, ISO 8601 in UTC as the server
//   writes them) is shown in the browser's time zone, still ISO 8601 (with its offset); the
//   UTC time stays in its title.
// - A button with data-print prints the page (the print style sheet keeps what matters).
(function () {
  "use strict";
  document.querySelectorAll("form.submit-once").forEach(function (form) {
    form.addEventListener("submit", function () {
      setTimeout(function () {
        form.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      }, 0);
    });
  });
  document.querySelectorAll("form.confirm-delay button").forEach(function (b) {
    b.disabled = true;
    setTimeout(function () { b.disabled = false; }, 600);
  });
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var target = document.getElementById(button.getAttribute("data-copy"));
    if (!target || !navigator.clipboard) return;
    button.hidden = false;
    var label = button.textContent;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(target.textContent).then(function () {
        button.textContent = button.getAttribute("data-copied") || "✓";
        setTimeout(function () { button.textContent = label; }, 2000);
      });
    });
  });
  var pad = function (n) { return (n < 10 ? "0" : "") + n; };
  document.querySelectorAll("time[data-local][datetime]").forEach(function (el) {
    var utc = el.getAttribute("datetime");
    var d = new Date(utc);
    if (isNaN(d.getTime())) return;
    var offset = -d.getTimezoneOffset();
    var sign = offset < 0 ? "-" : "+";
    offset = Math.abs(offset);
    el.textContent = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes()) + ":" + pad(d.getSeconds()) +
      sign + pad(Math.floor(offset / 60)) + ":" + pad(offset % 60);
    el.title = utc;
  });
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    if (typeof window.print !== "function") return;
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
  var alert = document.querySelector(".error[role=alert]");
  if (alert && alert.hasAttribute("tabindex")) alert.focus();
})();
