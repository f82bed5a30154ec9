"""SAML upstream identity providers (issue 33, slice 4): Authrim as the service provider of
pysaml2's identity provider (``saml2.server.Server``), code nobody here wrote, which reads
our AuthnRequests (their Redirect-binding signature verified by pysaml2 against the
certificate of our SP metadata) and answers with Responses it signs with xmlsec1.

Three parties: an Authlib relying party at Authrim (an OpenID client, ``idp_hint`` naming
the SAML upstream), Authrim, and pysaml2 as the IdP. Authrim's configuration names the IdP by
its metadata (``kind = "saml"``, ``metadata`` inline); pysaml2 registers Authrim from
``/saml/sp-metadata``. A ``requests.Session`` plays the browser.

* ``test_sign_in_through_pysaml2_idp``: the AuthnRequest (signed, ID, Issuer, ACS, binding,
  Destination), the Response posted to ``/saml/acs``, a code for the client, the user
  provisioned with the mapped attributes (OIDs: mail, displayName, givenName, sn), ``amr``
  fed; a second sign-in of the same NameID is the same user (linked, not duplicated); our SP
  metadata.
* ``test_refusals``: a replayed Response, a wrong audience, an expired assertion, one
  signed with RSA-SHA1, an unsigned Response, one signed by another key, one answering
  another request, the IdP's signed error Response, an unsolicited one (no RelayState), one
  posted from another browser: each a 400 page and an audited ``saml_assertion_refused``,
  no session; then the genuine answer still signs in, once.
* ``test_post_binding_idp``: an IdP with an HTTP-POST SingleSignOnService only: the
  AuthnRequest comes in an auto-submitting form, signed enveloped (pysaml2 verifies it).
* ``test_encrypted_assertions``: pysaml2 encrypts the assertion (xmlsec1) to the encryption
  certificate it read in our SP metadata: AES-256-CBC under a signed Response, AES-128-GCM
  with only the assertion signed (its own signature verified after decryption), and a
  Response encrypted to another key refused.
* ``test_want_assertions_encrypted``: that IdP set to encrypt: an assertion in the clear
  refused, an encrypted one accepted.
"""

from __future__ import annotations

import base64
import functools
import shutil
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests

from conftest import HTTP_TIMEOUT_S, admin
from test_authlib import REDIRECT_URI, describe, find_form
from test_saml import post_form
from test_upstream import RelyingParty, audit, follow, get, new_rp_client, post, users_of

saml2 = pytest.importorskip("saml2")
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT  # noqa: E402
from saml2.config import IdPConfig  # noqa: E402
from saml2.metadata import entity_descriptor  # noqa: E402
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID  # noqa: E402
from saml2.server import Server  # noqa: E402
from saml2 import entity as saml2_entity  # noqa: E402
from saml2.sigver import pre_encryption_part  # noqa: E402

XMLSEC = shutil.which("xmlsec1")
RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
RSA_SHA1 = "http://www.w3.org/2000/09/xmldsig#rsa-sha1"
SHA1 = "http://www.w3.org/2000/09/xmldsig#sha1"
AES256_CBC = "http://www.w3.org/2001/04/xmlenc#aes256-cbc"
AES128_GCM = "http://www.w3.org/2009/xmlenc11#aes128-gcm"
IDP_ENTITY = "https://idp.example/saml/idp"
IDP_SSO = "https://idp.example/saml/sso"
PASSWORD_CLASS = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
PROVIDER = "corp"
OTHER_SP = "https://other.example/sp"
IDENTITY = {
    "mail": ["sally@corp.example"],
    "displayName": ["Sally Saml"],
    "givenName": ["Sally"],
    "sn": ["Saml"],
}
pytestmark = pytest.mark.skipif(XMLSEC is None, reason="the xmlsec1 command is not installed (scripts/test.sh installs it)")


def keys(tmp: Path, name: str) -> tuple[str, str]:
    key, cert = tmp / f"{name}.key", tmp / f"{name}.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", f"/CN={name}"], check=True, capture_output=True)
    return str(key), str(cert)


def idp_config(key: str, cert: str, sp_metadata: list[str] | None, binding: str, lifetime_minutes: int = 15) -> IdPConfig:
    conf = {
        "entityid": IDP_ENTITY,
        "xmlsec_binary": XMLSEC,
        "key_file": key,
        "cert_file": cert,
        "signing_algorithm": RSA_SHA256,
        "digest_algorithm": SHA256,
        "service": {"idp": {
            "endpoints": {"single_sign_on_service": [(IDP_SSO, binding)]},
            "name_id_format": [NAMEID_FORMAT_PERSISTENT],
            "want_authn_requests_signed": True,
            "policy": {"default": {"lifetime": {"minutes": lifetime_minutes}, "attribute_restrictions": None}},
        }},
    }
    if sp_metadata is not None:
        conf["metadata"] = {"inline": sp_metadata}
    config = IdPConfig()
    config.load(conf)
    return config


class Setup:
    """Authrim (``down``) with the SAML upstream ``corp``, pysaml2's IdP (``idp``) knowing
    Authrim from its SP metadata, and an OpenID client of Authrim."""

    def __init__(self, start_authrim, tmp: Path, binding: str = BINDING_HTTP_REDIRECT, name: str = "saml-sp",
                 extra: str = ""):
        self.tmp, self.binding = tmp, binding
        self.key, self.cert = keys(tmp, "idp")
        metadata = str(entity_descriptor(idp_config(self.key, self.cert, None, binding)))
        toml = "\n".join([
            "[[identity_providers]]", f'id = "{PROVIDER}"', 'name = "Corp SAML"', 'kind = "saml"',
            f"metadata = '''{metadata}'''", extra, "",
        ])
        path = tmp / f"{name}.toml"
        path.write_text(toml)
        self.down = start_authrim(name, {"AUTHRIM_CONFIG": str(path)})
        resp = requests.get(self.down.url("/saml/sp-metadata"), timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        assert resp.headers["Content-Type"].startswith("application/samlmetadata+xml"), resp.headers
        self.sp_metadata = resp.text
        self.sp_entity = self.down.issuer + "/saml/sp"
        self.acs = self.down.issuer + "/saml/acs"
        self.idp = self.server()
        self.client = new_rp_client(self.down)

    def server(self, key: str | None = None, cert: str | None = None, lifetime_minutes: int = 15) -> Server:
        # Another SP beside us, for an assertion meant for it.
        other = self.sp_metadata.replace(f'entityID="{self.sp_entity}"', f'entityID="{OTHER_SP}"')
        return Server(config=idp_config(key or self.key, cert or self.cert, [self.sp_metadata, other], self.binding, lifetime_minutes))

    def to_idp(self, browser: requests.Session) -> tuple[RelyingParty, object, str]:
        """The client's authorization request, sent on to the IdP: (the relying party,
        pysaml2's parsed AuthnRequest, our RelayState)."""
        rp = RelyingParty(self.down, self.client, idp_hint=PROVIDER)
        resp = get(browser, rp.url)
        if self.binding == BINDING_HTTP_REDIRECT:
            assert resp.status_code in (302, 303), describe(resp)
            location = resp.headers["Location"]
            assert location.startswith(IDP_SSO + "?"), location
            q = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
            assert q["SigAlg"] == RSA_SHA256, q
            # pysaml2 verifies the signature over the query with our metadata's certificate.
            req = self.idp.parse_authn_request(q["SAMLRequest"], BINDING_HTTP_REDIRECT, relay_state=q["RelayState"],
                                               sigalg=q["SigAlg"], signature=q["Signature"])
            relay = q["RelayState"]
        else:
            assert resp.status_code == 200, describe(resp)
            action, fields = post_form(resp.text)
            assert action == IDP_SSO, resp.text
            req = self.idp.parse_authn_request(fields["SAMLRequest"], BINDING_HTTP_POST)
            relay = fields["RelayState"]
        assert req is not None
        m = req.message
        assert m.issuer.text == self.sp_entity, m
        assert m.assertion_consumer_service_url == self.acs, m
        assert m.protocol_binding == BINDING_HTTP_POST, m
        assert m.destination == IDP_SSO, m
        assert m.id and m.id[0] == "_", m
        return rp, req, relay

    def response(self, in_response_to: str, server: Server | None = None, audience: str | None = None,
                 name: str = "sally-at-corp", signed: bool = True, sign_alg: str = RSA_SHA256) -> str:
        xml = (server or self.idp).create_authn_response(
            IDENTITY, in_response_to, self.acs, audience or self.sp_entity,
            name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text=name),
            authn={"class_ref": PASSWORD_CLASS}, sign_response=signed, sign_assertion=signed,
            sign_alg=sign_alg, digest_alg=SHA256 if sign_alg == RSA_SHA256 else SHA1)
        return base64.b64encode(str(xml).encode()).decode()

    def encrypted_response(self, in_response_to: str, msg_enc: str, session_key: str, sign_response: bool,
                           self_contained: bool = True, encrypt_cert: str | None = None) -> str:
        """A Response whose signed assertion pysaml2 encrypts (xmlsec1 ``--encrypt``) to the
        encryption certificate of our SP metadata (or ``encrypt_cert``). pysaml2 picks Triple
        DES unless told: told AES here, as our metadata's EncryptionMethods offer."""
        server = self.server()
        server.sec.encrypt_assertion = functools.partial(server.sec.encrypt_assertion, key_type=session_key)
        original = saml2_entity.pre_encryption_part
        saml2_entity.pre_encryption_part = functools.partial(pre_encryption_part, msg_enc=msg_enc)
        try:
            xml = server.create_authn_response(
                IDENTITY, in_response_to, self.acs, self.sp_entity,
                name_id=NameID(format=NAMEID_FORMAT_PERSISTENT, text="sally-at-corp"),
                authn={"class_ref": PASSWORD_CLASS}, sign_response=sign_response, sign_assertion=True,
                sign_alg=RSA_SHA256, digest_alg=SHA256, encrypt_assertion=True,
                encrypt_assertion_self_contained=self_contained, encrypt_cert_assertion=encrypt_cert)
        finally:
            saml2_entity.pre_encryption_part = original
        xml = str(xml)
        assert "EncryptedAssertion" in xml and msg_enc in xml, xml
        assert "sally@corp.example" not in xml, "the attributes travel encrypted"
        return base64.b64encode(xml.encode()).decode()

    def finish(self, browser: requests.Session, resp: requests.Response) -> str:
        """After the ACS: our consent page if asked; the redirect to the client."""
        resp, location = follow(browser, resp, lambda u: u.startswith(REDIRECT_URI))
        if location is None and resp.status_code == 200 and urlsplit(resp.url).path == "/consent":
            form = find_form(resp.text, "/consent")
            resp = post(browser, urljoin(resp.url, form.action), {"challenge": form.inputs["challenge"]["value"], "decision": "allow"})
            resp, location = follow(browser, resp, lambda u: u.startswith(REDIRECT_URI))
        assert location, describe(resp)
        return location


def acs(setup: Setup, browser: requests.Session, response: str, relay: str) -> requests.Response:
    return post(browser, setup.acs, {"SAMLResponse": response, "RelayState": relay})


def test_sign_in_through_pysaml2_idp(start_authrim, tmp_path):
    s = Setup(start_authrim, tmp_path)
    assert "AuthnRequestsSigned=\"true\"" in s.sp_metadata and "WantAssertionsSigned=\"true\"" in s.sp_metadata, s.sp_metadata
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    resp = acs(s, browser, s.response(req.message.id), relay)
    claims, userinfo = rp.redeem(s.finish(browser, resp))
    assert userinfo.get("email") == "sally@corp.example", userinfo
    assert userinfo.get("name") == "Sally Saml", userinfo
    assert userinfo.get("given_name") == "Sally" and userinfo.get("family_name") == "Saml", userinfo
    made = [u for u in users_of(s.down) if u.get("claims", {}).get("email") == "sally@corp.example"]
    assert len(made) == 1, made
    assert made[0]["id"] == claims["sub"], (made, claims)
    assert audit(s.down, "saml_assertion_accepted"), "the accepted assertion is audited"

    # Again, in a new browser: the same user (linked by NameID), not a second one.
    browser = requests.Session()
    rp2, req, relay = s.to_idp(browser)
    claims2, _ = rp2.redeem(s.finish(browser, acs(s, browser, s.response(req.message.id), relay)))
    assert claims2["sub"] == claims["sub"], (claims, claims2)
    assert len([u for u in users_of(s.down) if u.get("claims", {}).get("email") == "sally@corp.example"]) == 1


def refused(s: Setup, resp: requests.Response, why: str, seen: list):
    """A 400 page, no session, and one more ``saml_assertion_refused`` (the newest) saying
    ``why``."""
    assert resp.status_code == 400, describe(resp)
    assert "authrim_session" not in resp.cookies, resp.headers
    events = audit(s.down, "saml_assertion_refused")
    assert len(events) == len(seen) + 1, (why, events)
    newest = events[0]  # newest first
    reason = newest.get("detail", {}).get("reason", "")
    assert why in reason, (why, reason)
    seen.append(reason)


def test_refusals(start_authrim, tmp_path):
    s = Setup(start_authrim, tmp_path)
    seen: list = []
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    rid = req.message.id

    # Audience: another SP's.
    refused(s, acs(s, browser, s.response(rid, audience=OTHER_SP), relay), "Audience", seen)
    # Expired: the IdP's assertions lived until ten minutes ago.
    refused(s, acs(s, browser, s.response(rid, server=s.server(lifetime_minutes=-10)), relay), "expired", seen)
    # Signed with RSA-SHA1 (pysaml2's default): refused, SHA-256 at least.
    refused(s, acs(s, browser, s.response(rid, sign_alg=RSA_SHA1), relay), "signature", seen)
    # Unsigned.
    refused(s, acs(s, browser, s.response(rid, signed=False), relay), "signature", seen)
    # Signed by another key (its certificate in KeyInfo, as pysaml2 puts it).
    other_key, other_cert = keys(tmp_path, "other")
    refused(s, acs(s, browser, s.response(rid, server=s.server(other_key, other_cert)), relay), "signature", seen)
    # An answer to another request of the same browser.
    _, req2, relay2 = s.to_idp(browser)
    refused(s, acs(s, browser, s.response(rid), relay2), "InResponseTo", seen)
    # The IdP's refusal (a signed error Response): nobody signed in.
    error = s.idp.create_error_response(rid, s.acs, ("urn:oasis:names:tc:SAML:2.0:status:Responder", "denied"),
                                        sign=True, sign_alg=RSA_SHA256, digest_alg=SHA256)
    refused(s, acs(s, browser, base64.b64encode(str(error).encode()).decode(), relay), "status:Responder", seen)
    # Unsolicited (no RelayState): not accepted.
    refused(s, post(browser, s.acs, {"SAMLResponse": s.response(rid)}), "unsolicited", seen)
    # The genuine answer, posted from another browser (no cookie: our page posts it again,
    # still without one).
    genuine = s.response(rid)
    other = requests.Session()
    page = acs(s, other, genuine, relay)
    assert page.status_code == 200, describe(page)
    action, fields = post_form(page.text)
    assert action == s.acs and fields.get("authrim_reposted") == "1", page.text
    refused(s, post(other, action, fields), "RelayState", seen)

    # The genuine answer signs in once; replayed, it is refused.
    location = s.finish(browser, acs(s, browser, genuine, relay))
    rp.redeem(location)
    refused(s, acs(s, browser, genuine, relay), "answered already", seen)
    # The other request's genuine answer still works (its own request id).
    s.finish(browser, acs(s, browser, s.response(req2.message.id), relay2))


def test_post_binding_idp(start_authrim, tmp_path):
    s = Setup(start_authrim, tmp_path, binding=BINDING_HTTP_POST, name="saml-sp-post")
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    assert req.message.signature is not None, "signed enveloped"
    rp.redeem(s.finish(browser, acs(s, browser, s.response(req.message.id), relay)))


def test_encrypted_assertions(start_authrim, tmp_path):
    s = Setup(start_authrim, tmp_path, name="saml-sp-enc")
    assert 'use="encryption"' in s.sp_metadata, s.sp_metadata
    seen: list = []
    # Encrypted to another key (not ours): refused, audited.
    _, other_cert = keys(tmp_path, "stranger")
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    stranger = "".join(l for l in Path(other_cert).read_text().splitlines() if not l.startswith("-----"))
    resp = acs(s, browser, s.encrypted_response(req.message.id, AES256_CBC, "aes-256", True, encrypt_cert=stranger), relay)
    refused(s, resp, "not encrypted to any of our keys", seen)
    # AES-256-CBC, the Response signed over the ciphertext (and the assertion inside).
    rp.redeem(s.finish(browser, acs(s, browser, s.encrypted_response(req.message.id, AES256_CBC, "aes-256", True), relay)))
    accepted = audit(s.down, "saml_assertion_accepted")
    assert len(accepted) == 1, accepted
    # AES-128-GCM, only the assertion signed (verified once decrypted), its namespaces left to
    # the Response's (not self-contained).
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    resp = acs(s, browser, s.encrypted_response(req.message.id, AES128_GCM, "aes-128", False, self_contained=False), relay)
    claims, userinfo = rp.redeem(s.finish(browser, resp))
    assert userinfo.get("email") == "sally@corp.example", userinfo
    assert len([u for u in users_of(s.down) if u.get("claims", {}).get("email") == "sally@corp.example"]) == 1


def test_want_assertions_encrypted(start_authrim, tmp_path):
    """``want_assertions_encrypted = true``: an assertion in the clear is refused, an encrypted
    one accepted."""
    s = Setup(start_authrim, tmp_path, name="saml-sp-want-enc", extra="want_assertions_encrypted = true")
    browser = requests.Session()
    rp, req, relay = s.to_idp(browser)
    refused(s, acs(s, browser, s.response(req.message.id), relay), "unencrypted", [])
    rp.redeem(s.finish(browser, acs(s, browser, s.encrypted_response(req.message.id, AES256_CBC, "aes-256", True), relay)))
