// Passkeys (WebAuthn) on Authrim's pages: the only script they load. A form marked
// data-passkey="get" (sign in) or "create" (register) carries the server's options in
// data-options; its button runs the ceremony and posts the authenticator's answer as JSON in
// the form's "credential" field. data-conditional also offers the passkeys in the username
// field's autofill (conditional mediation) where the browser supports it. Without this script
// the forms stay hidden and the pages work with passwords and codes.
(function () {
  "use strict";
  if (!window.PublicKeyCredential) return;
  function dec(s) {
    s = s.replace(/-/g, "+").replace(/_/g, "/");
    var bin = atob(s + "===".slice((s.length + 3) % 4));
    var out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out.buffer;
  }
  function enc(buf) {
    var bytes = new Uint8Array(buf), bin = "";
    for (var i = 0; i < bytes.length; i++) bin += String.fromCharCode(bytes[i]);
    return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }
  function ids(list) {
    (list || []).forEach(function (c) { c.id = dec(c.id); });
  }
  function answer(c) {
    var r = c.response, out = { id: c.id, rawId: enc(c.rawId), type: c.type, extensions: c.getClientExtensionResults(), response: { clientDataJSON: enc(r.clientDataJSON) } };
    if (r.attestationObject) {
      out.response.attestationObject = enc(r.attestationObject);
      if (r.getTransports) out.response.transports = r.getTransports();
    } else {
      out.response.authenticatorData = enc(r.authenticatorData);
      out.response.signature = enc(r.signature);
      out.response.userHandle = r.userHandle ? enc(r.userHandle) : null;
    }
    return JSON.stringify(out);
  }
  function options(form) {
    var o = JSON.parse(form.getAttribute("data-options")).publicKey;
    o.challenge = dec(o.challenge);
    if (o.user) o.user.id = dec(o.user.id);
    ids(o.excludeCredentials);
    ids(o.allowCredentials);
    return o;
  }
  function done(form, c) {
    form.querySelector("[name=credential]").value = answer(c);
    form.submit();
  }
  function failed(form, e) {
    if (e && e.name === "AbortError") return;
    var note = form.querySelector(".passkey-error");
    if (note) { note.hidden = false; note.focus(); }
  }
  document.querySelectorAll("form[data-passkey]").forEach(function (form) {
    var mode = form.getAttribute("data-passkey"), button = form.querySelector("button"), pending = null;
    form.hidden = false;
    if (form.hasAttribute("data-conditional") && PublicKeyCredential.isConditionalMediationAvailable) {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (ok) {
        if (!ok) return;
        pending = new AbortController();
        navigator.credentials.get({ mediation: "conditional", publicKey: options(form), signal: pending.signal })
          .then(function (c) { done(form, c); }, function (e) { failed(form, e); });
      });
    }
    button.addEventListener("click", function () {
      if (pending) { pending.abort(); pending = null; }
      button.disabled = true;
      var call = mode === "create" ? navigator.credentials.create({ publicKey: options(form) }) : navigator.credentials.get({ publicKey: options(form) });
      call.then(function (c) { done(form, c); }, function (e) { button.disabled = false; failed(form, e); });
    });
  });
})();
