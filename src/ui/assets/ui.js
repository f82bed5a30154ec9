// Small comforts on Authrim's pages; every page works without this script.
// - A form marked submit-once disables its buttons once submitted, so that a double click
//   sends one sign-in, not two.
// - A form marked confirm-delay (consent) takes no click in its first moment, so that the
//   second click of a double click on the previous page's button does not land on Allow.
// - A button with data-copy="ID" copies that element's text.
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
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    if (typeof window.print !== "function") return;
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
  var alert = document.querySelector(".error[role=alert]");
  if (alert && alert.hasAttribute("tabindex")) alert.focus();
})();
