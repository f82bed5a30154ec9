// The relying party's side of OpenID Connect Session Management 1.0 §3.1, reduced to what
// the test needs: the OP's iframe (its URL from discovery), and askOp(message), which posts
// a message to it and resolves with the answer that comes back from the OP's origin.
(function () {
  "use strict";
  var waiting = [];
  window.addEventListener("message", function (e) {
    if (e.origin !== window.RP.op_origin) { return; }
    var next = waiting.shift();
    if (next) { next(e.data); }
  });
  window.opReady = fetch(window.RP.issuer + "/.well-known/openid-configuration")
    .then(function (r) { return r.json(); })
    .then(function (d) {
      return new Promise(function (resolve) {
        var frame = document.createElement("iframe");
        frame.src = d.check_session_iframe;
        frame.style.display = "none";
        frame.addEventListener("load", function () { resolve(frame); });
        document.body.appendChild(frame);
      });
    });
  window.askOp = function (message) {
    return window.opReady.then(function (frame) {
      return new Promise(function (resolve) {
        waiting.push(resolve);
        frame.contentWindow.postMessage(message, window.RP.op_origin);
      });
    });
  };
})();
