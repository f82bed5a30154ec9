// OpenID Connect Session Management 1.0 §3.2: the OP iframe. A relying party's page posts
// "client_id session_state"; the answer, to that window only, is "unchanged" when the
// session_state still matches this browser's session here, "changed" when it does not, and
// "error" for a message that is not of that shape. session_state is
// base64url(SHA-256(client_id " " origin " " opbs " " salt)) "." salt, where opbs is the
// cookie named by this script's data-cookie (endpoints/check_session.rs computes the same).
(function () {
  "use strict";
  var name = document.currentScript.getAttribute("data-cookie");
  function opbs() {
    var found = document.cookie.split(";").map(function (c) { return c.trim(); }).filter(function (c) { return c.indexOf(name + "=") === 0; })[0];
    return found ? found.substring(name.length + 1) : "";
  }
  function b64url(buf) {
    var s = "";
    new Uint8Array(buf).forEach(function (b) { s += String.fromCharCode(b); });
    return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  window.addEventListener("message", function (e) {
    if (typeof e.data !== "string") { return; }
    var parts = e.data.split(" ");
    var state = parts.length === 2 ? parts[1].split(".") : [];
    if (state.length !== 2 || !parts[0] || !state[0] || !state[1]) {
      e.source.postMessage("error", e.origin);
      return;
    }
    var text = parts[0] + " " + e.origin + " " + opbs() + " " + state[1];
    crypto.subtle.digest("SHA-256", new TextEncoder().encode(text)).then(function (digest) {
      e.source.postMessage(b64url(digest) === state[0] ? "unchanged" : "changed", e.origin);
    }, function () {
      e.source.postMessage("error", e.origin);
    });
  }, false);
})();
