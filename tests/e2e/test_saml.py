"""SAML 2.0 (issue 33): Authrim as the identity provider of pysaml2, a service provider nobody
here wrote (it verifies our signatures with the xmlsec1 command, through its own code).

The SP is registered from the metadata pysaml2 writes for itself. Each test plays the browser
(requests): the SP's AuthnRequest goes to ``/saml/sso`` by the HTTP-Redirect or the HTTP-POST
binding, signed or not; Alice signs in on Authrim's login page; the page that comes back posts
a Response to the SP's ACS, which pysaml2 then parses and checks as an SP does: both
signatures (``want_response_signed``, ``want_assertions_signed``) against the certificate in
Authrim's IdP metadata, ``InResponseTo`` against its outstanding request, ``Destination``,
``Recipient``, ``Audience`` and the validity window.
"""

from __future__ import annotations

import base64
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from conftest import HTTP_TIMEOUT_S, admin
from test_authlib import describe, find_form

saml2 = pytest.importorskip("saml2")
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT, BINDING_SOAP  # noqa: E402
from saml2.client import Saml2Client  # noqa: E402
from saml2.config import SPConfig  # noqa: E402
from saml2.metadata import entity_descriptor  # noqa: E402
from saml2.saml import NAMEID_FORMAT_PERSISTENT  # noqa: E402
from saml2.response import StatusNoPassive  # noqa: E402

XMLSEC = shutil.which("xmlsec1")
RSA_SHA256 = "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"
SHA256 = "http://www.w3.org/2001/04/xmlenc#sha256"
pytestmark = pytest.mark.skipif(XMLSEC is None, reason="the xmlsec1 command is not installed (scripts/test.sh installs it)")


class _Inputs(HTMLParser):
    """The hidden inputs and action of the auto-submitting form an HTTP-POST binding page is."""

    def __init__(self):
        super().__init__()
        self.action, self.fields = None, {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form" and self.action is None:
            self.action = a.get("action")
        if tag == "input" and a.get("name"):
            self.fields[a["name"]] = a.get("value", "")


def post_form(html: str) -> tuple[str, dict]:
    p = _Inputs()
    p.feed(html)
    return p.action, p.fields


def sp_keys(tmp: Path, name: str) -> tuple[str, str]:
    key, cert = tmp / f"{name}.key", tmp / f"{name}.crt"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "2", "-subj", f"/CN={name}"], check=True, capture_output=True)
    return str(key), str(cert)


class ServiceProvider:
    """pysaml2 as an SP of Authrim: its client, its ACS, its registration."""

    def __init__(self, server, tmp: Path, name: str, sign_requests: bool, idp_metadata: str, encryption: bool = False,
                 unsolicited: bool = False, slo: bool | str = False, soap_slo: str | None = None):
        self.server = server
        self.entity_id = f"https://{name}.sp.example/metadata"
        self.acs = f"https://{name}.sp.example/acs"
        # Single Logout (test_saml_logout.py): one address for both bindings, or (slo="post")
        # for HTTP-POST alone.
        self.slo = f"https://{name}.sp.example/slo" if slo else None
        slo_bindings = [BINDING_HTTP_POST] if slo == "post" else [BINDING_HTTP_REDIRECT, BINDING_HTTP_POST]
        # (And `soap_slo`: its back channel's address, by the SOAP binding.)
        key, cert = sp_keys(tmp, name)
        conf = {
            "entityid": self.entity_id,
            "xmlsec_binary": XMLSEC,
            "metadata": {"inline": [idp_metadata]},
            "key_file": key,
            "cert_file": cert,
            "signing_algorithm": RSA_SHA256,
            "digest_algorithm": SHA256,
            "allow_unknown_attributes": True,
            **({"encryption_keypairs": [dict(zip(("key_file", "cert_file"), sp_keys(tmp, name + "-enc")))]} if encryption else {}),
            "service": {"sp": {
                "endpoints": {"assertion_consumer_service": [(self.acs, BINDING_HTTP_POST)],
                              **({"single_logout_service": ([(self.slo, b) for b in slo_bindings] if slo else [])
                                  + ([(soap_slo, BINDING_SOAP)] if soap_slo else [])} if slo or soap_slo else {})},
                "logout_requests_signed": True,
                "authn_requests_signed": sign_requests,
                "want_response_signed": True,
                "want_assertions_signed": True,
                "allow_unsolicited": unsolicited,
                "name_id_format": NAMEID_FORMAT_PERSISTENT,
            }},
        }
        self.config = SPConfig()
        self.config.load(conf)
        self.client = Saml2Client(config=self.config)
        self.idp = saml2_idp_entity(idp_metadata)

    def metadata(self) -> str:
        return str(entity_descriptor(self.config))

    def register(self, **extra) -> dict:
        body = {"metadata": self.metadata(), "client_name": "pysaml2 SP",
                "attributes": [{"name": "mail", "claim": "email"}, {"name": "displayName", "claim": "name"},
                               {"name": "uid", "claim": "username"}], **extra}
        resp = admin(self.server, "POST", "/admin/saml/service-providers", body)
        assert resp.status_code == 201, describe(resp)
        self.client_id = resp.json()["client_id"]
        return resp.json()

    def redirect_request(self, relay_state: str = "rs-1", **kw) -> tuple[str, str]:
        """(request id, the URL the SP sends the browser to)."""
        req_id, info = self.client.prepare_for_authenticate(entityid=self.idp, relay_state=relay_state,
                                                             binding=BINDING_HTTP_REDIRECT, sigalg=RSA_SHA256, **kw)
        return req_id, dict(info["headers"])["Location"]

    def post_request(self, relay_state: str = "rs-2", **kw) -> tuple[str, str, dict]:
        """(request id, the form's action, its fields)."""
        req_id, info = self.client.prepare_for_authenticate(entityid=self.idp, relay_state=relay_state,
                                                             binding=BINDING_HTTP_POST, sigalg=RSA_SHA256,
                                                             digest_alg=SHA256, **kw)
        action, fields = post_form(info["data"])
        return req_id, action, fields

    def accept(self, html: str, req_id: str, relay_state: str):
        """What the ACS does with the page Authrim answered with: the Response, parsed and
        checked by pysaml2."""
        action, fields = post_form(html)
        assert action == self.acs, html
        assert fields.get("RelayState") == relay_state, fields
        return self.client.parse_authn_request_response(fields["SAMLResponse"], BINDING_HTTP_POST,
                                                        outstanding={req_id: "/"})


def saml2_idp_entity(idp_metadata: str) -> str:
    start = idp_metadata.index('entityID="') + len('entityID="')
    return idp_metadata[start:idp_metadata.index('"', start)]


def not_taken_by(sp: ServiceProvider, saml_response: str, req_id: str) -> bool:
    """Whether `sp` refuses the Response: pysaml2 raises, or answers one for another
    Destination with no assertion."""
    try:
        taken = sp.client.parse_authn_request_response(saml_response, BINDING_HTTP_POST, outstanding={req_id: "/"})
    except Exception:
        return True
    return taken is None or taken.assertion is None


@pytest.fixture(scope="module")
def idp_metadata(authrim_server) -> str:
    resp = requests.get(f"{authrim_server.base_url}/saml/metadata", timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.headers["Content-Type"].startswith("application/samlmetadata+xml")
    return resp.text


def sign_in(browser: requests.Session, resp: requests.Response, alice: dict) -> requests.Response:
    """The login page in front of us, filled in; then on to the page that comes back."""
    assert resp.status_code == 200, describe(resp)
    login = find_form(resp.text, "/login")
    resp = browser.post(requests.compat.urljoin(resp.url, login.action),
                        data={"challenge": login.inputs["challenge"]["value"], "username": alice["username"],
                              "password": alice["password"]}, allow_redirects=True, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    return resp


def test_metadata_is_signed_by_the_key_it_lists(idp_metadata, tmp_path):
    """The metadata's signature verifies (xmlsec1) with the certificate it lists."""
    start = idp_metadata.index("<ds:X509Certificate>") + len("<ds:X509Certificate>")
    cert = "".join(idp_metadata[start:idp_metadata.index("</ds:X509Certificate>", start)].split())
    pem = tmp_path / "idp.pem"
    lines = "\n".join(cert[i:i + 64] for i in range(0, len(cert), 64))
    pem.write_text("-----BEGIN CERTIFICATE-----\n" + lines + "\n-----END CERTIFICATE-----\n")
    doc = tmp_path / "md.xml"
    doc.write_text(idp_metadata)
    run = subprocess.run([XMLSEC, "--verify", "--pubkey-cert-pem", str(pem), "--id-attr:ID",
                          "urn:oasis:names:tc:SAML:2.0:metadata:EntityDescriptor", str(doc)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "/saml/sso" in idp_metadata and "HTTP-Redirect" in idp_metadata and "HTTP-POST" in idp_metadata


def encryption_certificate(metadata: str) -> str:
    """The base64 certificate of the metadata's ``KeyDescriptor use="encryption"``."""
    part = metadata.split('use="encryption"', 1)[1]
    start = part.index("X509Certificate>") + len("X509Certificate>")
    return "".join(part[start:part.index("<", start)].split())


def test_metadata_lists_an_encryption_certificate_of_the_jwks_rsa_oaep_key(authrim_server, idp_metadata):
    """The IdP metadata lists the tenant's RSA encryption key (the JWKS's RSA-OAEP-256 one) as a
    self-signed certificate, with the algorithms an SP may encrypt to it with."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import padding

    cert = x509.load_der_x509_certificate(base64.b64decode(encryption_certificate(idp_metadata)))
    public = cert.public_key()
    # Self-signed by the key it holds (SHA-256, PKCS#1 v1.5).
    public.verify(cert.signature, cert.tbs_certificate_bytes, padding.PKCS1v15(), cert.signature_hash_algorithm)
    discovery = requests.get(f"{authrim_server.base_url}/.well-known/openid-configuration", timeout=HTTP_TIMEOUT_S).json()
    jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    enc = [k for k in jwks["keys"] if k.get("alg") == "RSA-OAEP-256"]
    assert enc, jwks

    def n_of(jwk: dict) -> int:
        return int.from_bytes(base64.urlsafe_b64decode(jwk["n"] + "=" * (-len(jwk["n"]) % 4)), "big")

    assert public.public_numbers().n in [n_of(k) for k in enc], "the certificate holds the JWKS's RSA-OAEP-256 key"
    assert public.public_numbers().n not in [n_of(k) for k in jwks["keys"] if k.get("use") == "sig" and k.get("kty") == "RSA"]
    for alg in ["xmlenc11#aes256-gcm", "xmlenc11#aes128-gcm", "xmlenc#aes256-cbc", "xmlenc#aes128-cbc",
                "xmlenc#rsa-oaep-mgf1p", "xmlenc11#rsa-oaep"]:
        assert alg + '"' in idp_metadata, alg


def test_sp_initiated_sso_by_redirect_then_post_with_one_session(authrim_server, alice, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("redirect"), False, idp_metadata)
    client = sp.register()
    assert client["saml"]["entity_id"] == sp.entity_id and client["grant_types"] == [], client
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    resp = sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice)
    response = sp.accept(resp.text, req_id, "rs-1")
    info = response.session_info()
    assert info["name_id"].format == NAMEID_FORMAT_PERSISTENT
    persistent = info["name_id"].text
    assert persistent, info
    assert response.ava["mail"] == [alice["claims"]["email"]], response.ava
    assert response.ava["uid"] == [alice["username"]], response.ava
    assert response.ava["displayName"] == [alice["claims"]["name"]], response.ava
    assert info["session_index"], info

    # The same browser, now signed in: the POST binding is answered at once, the same NameID.
    req_id, action, fields = sp.post_request()
    assert action.endswith("/saml/sso"), action
    resp = browser.post(action, data=fields, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    response = sp.accept(resp.text, req_id, "rs-2")
    assert response.session_info()["name_id"].text == persistent

    # ForceAuthn: the login page again, though signed in.
    req_id, url = sp.redirect_request(relay_state="rs-3", force_authn="true")
    resp = browser.get(url, timeout=HTTP_TIMEOUT_S)
    assert 'action="/login"' in resp.text or "/login" in resp.text, resp.text[:500]
    response = sp.accept(sign_in(browser, resp, alice).text, req_id, "rs-3")
    assert response.session_info()["name_id"].text == persistent


def test_a_response_is_for_its_request_only(authrim_server, alice, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("inresponseto"), False, idp_metadata)
    sp.register()
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    html = sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text
    _, fields = post_form(html)
    with pytest.raises(Exception) as refused:
        sp.client.parse_authn_request_response(fields["SAMLResponse"], BINDING_HTTP_POST, outstanding={"_other": "/"})
    assert "Unsolicited" in type(refused.value).__name__ or "InResponseTo" in str(refused.value), repr(refused.value)
    # Another SP (another audience) refuses it too.
    other = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("other"), False, idp_metadata)
    assert not_taken_by(other, fields["SAMLResponse"], req_id), "another SP took the assertion of a Response that was not for it"
    # The genuine one is still good for its own request.
    assert sp.client.parse_authn_request_response(fields["SAMLResponse"], BINDING_HTTP_POST, outstanding={req_id: "/"})


def test_signed_requests_by_both_bindings_and_refusals(authrim_server, alice, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("signed"), True, idp_metadata)
    client = sp.register()
    assert client["saml"]["require_signed_requests"] is True, client
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    assert "Signature=" in url and "SigAlg=" in url
    sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice)

    # A signed POST: answered (the browser is signed in).
    req_id, action, fields = sp.post_request()
    resp = browser.post(action, data=fields, timeout=HTTP_TIMEOUT_S)
    sp.accept(resp.text, req_id, "rs-2")

    # The Redirect signature no longer matches once RelayState is changed: a page, not a Response.
    _, url = sp.redirect_request(relay_state="rs-9")
    resp = browser.get(url.replace("RelayState=rs-9", "RelayState=rs-8"), timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)
    # Unsigned, from an SP that must sign: refused.
    unsigned = url.split("&SigAlg=")[0]
    resp = browser.get(unsigned, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)
    # The signed POST request with another ACS URL put in after signing: refused.
    _, action, fields = sp.post_request()
    xml = base64.b64decode(fields["SAMLRequest"]).decode()
    tampered = xml.replace(sp.acs, "https://attacker.example/acs")
    assert tampered != xml
    resp = browser.post(action, data={**fields, "SAMLRequest": base64.b64encode(tampered.encode()).decode()}, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "attacker.example" not in resp.text, describe(resp)


def test_unregistered_acs_and_unknown_sp_are_refused_with_a_page(authrim_server, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("acs"), False, idp_metadata)
    sp.register()
    _, url = sp.redirect_request(assertion_consumer_service_url="https://attacker.example/acs")
    resp = requests.get(url, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "attacker.example" not in resp.text, describe(resp)
    stranger = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("stranger"), False, idp_metadata)
    _, url = stranger.redirect_request()
    resp = requests.get(url, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400, describe(resp)


def test_is_passive_without_a_session_is_no_passive(authrim_server, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("passive"), False, idp_metadata)
    sp.register()
    req_id, url = sp.redirect_request(is_passive="true")
    resp = requests.get(url, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    with pytest.raises(StatusNoPassive):
        sp.accept(resp.text, req_id, "rs-1")


def test_entity_id_is_registered_once_and_the_client_is_not_an_oauth_one(authrim_server, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("twice"), False, idp_metadata)
    client = sp.register()
    resp = admin(authrim_server, "POST", "/admin/saml/service-providers", {"metadata": sp.metadata()})
    assert resp.status_code == 400 and resp.json()["error"] == "invalid_client_metadata", describe(resp)
    resp = admin(authrim_server, "POST", "/admin/saml/service-providers", {"metadata": "<!DOCTYPE x [<!ENTITY a 'b'>]><x>&a;</x>"})
    assert resp.status_code == 400, describe(resp)
    # Nothing of OAuth opens to it: /authorize with its ACS as a redirect URI is refused.
    resp = requests.get(f"{authrim_server.base_url}/authorize", params={"client_id": client["client_id"], "redirect_uri": sp.acs,
                        "response_type": "code", "scope": "openid"}, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "Location" not in resp.headers, describe(resp)


def test_requested_authn_context_is_met_or_answered_no_authn_context(authrim_server, alice, idp_metadata, tmp_path):
    from saml2.response import StatusNoAuthnContext
    from saml2.samlp import RequestedAuthnContext
    from saml2.saml import AuthnContextClassRef

    def asking(*classes, comparison="minimum"):
        return RequestedAuthnContext(authn_context_class_ref=[AuthnContextClassRef(text=c) for c in classes], comparison=comparison)

    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("context"), False, idp_metadata)
    sp.register()
    browser = requests.Session()
    password = "urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport"
    req_id, url = sp.redirect_request(requested_authn_context=asking(password))
    response = sp.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1")
    assert [a[0] for a in response.authn_info()] == [password], response.authn_info()
    # A second factor Alice does not have: the SP is told NoAuthnContext, not shown an error.
    req_id, url = sp.redirect_request(requested_authn_context=asking("https://refeds.org/profile/mfa"))
    resp = browser.get(url, timeout=HTTP_TIMEOUT_S)
    if "SAMLResponse" not in resp.text:  # asked to sign in again first (a step-up)
        resp = sign_in(browser, resp, alice)
    with pytest.raises(StatusNoAuthnContext):
        sp.accept(resp.text, req_id, "rs-1")
    # A class this server has no way to give, exactly: NoAuthnContext at once.
    req_id, url = sp.redirect_request(requested_authn_context=asking("urn:example:smartcard", comparison="exact"))
    with pytest.raises(StatusNoAuthnContext):
        sp.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-1")


def test_encrypted_assertions_are_decrypted_and_verified_by_the_sp(authrim_server, alice, idp_metadata, tmp_path):
    """AES-256-GCM under RSA-OAEP to the encryption certificate in the SP's metadata: pysaml2
    decrypts it (xmlsec1) and verifies the assertion's own signature inside."""
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("encrypted"), False, idp_metadata, encryption=True)
    client = sp.register(encrypt_assertions=True)
    assert client["saml"]["encrypt_assertions"] is True and client["saml"]["encryption_certificates"], client
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    html = sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text
    _, fields = post_form(html)
    raw = base64.b64decode(fields["SAMLResponse"]).decode()
    assert "EncryptedAssertion" in raw and "aes256-gcm" in raw and alice["claims"]["email"] not in raw, raw[:2000]
    assert "<saml2:Assertion" not in raw
    response = sp.accept(html, req_id, "rs-1")
    assert response.assertion is not None
    assert response.ava["mail"] == [alice["claims"]["email"]], response.ava
    # An SP without the key cannot read it.
    other = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("nokey"), False, idp_metadata, encryption=True)
    assert not_taken_by(other, fields["SAMLResponse"], req_id)


def test_idp_initiated_sso_from_the_start_page_only_where_allowed(authrim_server, alice, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("tile"), False, idp_metadata, unsolicited=True)
    client = sp.register(client_name="Tile app", idp_initiated=True, default_relay_state="/welcome")
    closed = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("closed"), False, idp_metadata, unsolicited=True)
    closed_client = closed.register(client_name="Closed app")
    browser = requests.Session()
    landing = browser.get(f"{authrim_server.base_url}/", headers={"Accept": "text/html"}, timeout=HTTP_TIMEOUT_S)
    link = f"/saml/start/{client['client_id']}"
    assert link in landing.text, landing.text[:3000]
    assert f"/saml/start/{closed_client['client_id']}" not in landing.text
    html = sign_in(browser, browser.get(authrim_server.base_url + link, timeout=HTTP_TIMEOUT_S), alice).text
    action, fields = post_form(html)
    assert action == sp.acs and fields.get("RelayState") == "/welcome", fields
    response = sp.client.parse_authn_request_response(fields["SAMLResponse"], BINDING_HTTP_POST, outstanding={})
    assert response.assertion is not None and response.ava["mail"] == [alice["claims"]["email"]]
    # The browser's own RelayState is not taken; an SP that did not allow it is not started.
    again = browser.get(authrim_server.base_url + link, params={"RelayState": "https://evil.example/"}, timeout=HTTP_TIMEOUT_S)
    assert post_form(again.text)[1].get("RelayState") == "/welcome"
    resp = browser.get(f"{authrim_server.base_url}/saml/start/{closed_client['client_id']}", timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 404 and "SAMLResponse" not in resp.text, describe(resp)


def test_consent_where_the_sp_asks_for_it(authrim_server, alice, idp_metadata, tmp_path):
    """An SP registered with consent: the first sign-in shows the consent page naming what its
    attributes carry (e-mail, profile); allowed once, it is not asked again; denied, the SP
    is told RequestDenied."""
    from saml2.response import StatusRequestDenied

    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("consent"), False, idp_metadata)
    sp.register(consent=True)
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    page = sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice)
    consent = find_form(page.text, "/consent")
    resp = browser.post(requests.compat.urljoin(page.url, consent.action),
                        data={"challenge": consent.inputs["challenge"]["value"], "decision": "deny"}, timeout=HTTP_TIMEOUT_S)
    with pytest.raises(StatusRequestDenied):
        sp.accept(resp.text, req_id, "rs-1")
    req_id, url = sp.redirect_request()
    page = browser.get(url, timeout=HTTP_TIMEOUT_S)
    consent = find_form(page.text, "/consent")
    assert "see your e-mail address" in page.text and "see your name and profile" in page.text, page.text[:2000]
    resp = browser.post(requests.compat.urljoin(page.url, consent.action),
                        data={"challenge": consent.inputs["challenge"]["value"], "decision": "allow"}, timeout=HTTP_TIMEOUT_S)
    assert sp.accept(resp.text, req_id, "rs-1").ava["mail"] == [alice["claims"]["email"]]
    req_id, url = sp.redirect_request()
    assert sp.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-1").assertion is not None


def test_each_tenant_is_an_identity_provider_of_its_own(authrim_server, path_tenant, alice, idp_metadata, tmp_path):
    """A tenant's metadata has its own entity ID and key; an SP registered with the default
    tenant is unknown to the tenant, and a Response of one tenant's does not verify as the
    other's (pysaml2 trusting the tenant's metadata refuses it)."""
    resp = requests.get(f"{path_tenant.base_url}/saml/metadata", timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    tenant_md = resp.text
    assert saml2_idp_entity(tenant_md) == f"{path_tenant.issuer}/saml/metadata" != saml2_idp_entity(idp_metadata)
    cert = lambda md: md.split("<ds:X509Certificate>")[1].split("<")[0]  # noqa: E731
    assert cert(tenant_md) != cert(idp_metadata)

    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("tenanted"), False, idp_metadata)
    sp.register()
    _, url = sp.redirect_request()
    # The same AuthnRequest, sent to the tenant's SSO service: the tenant never heard of the SP.
    query = url.split("?", 1)[1]
    resp = requests.get(f"{path_tenant.base_url}/saml/sso?{query}", timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)

    # The default tenant's Response, given to an SP that trusts the tenant's metadata.
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    html = sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text
    trusting_tenant = ServiceProvider(authrim_server, tmp_path, sp.entity_id.split("//")[1].split(".")[0], False, tenant_md)
    _, fields = post_form(html)
    assert not_taken_by(trusting_tenant, fields["SAMLResponse"], req_id)


def test_a_cross_site_post_is_posted_again_to_find_the_session(authrim_server, alice, idp_metadata, tmp_path):
    """The POST binding from the SP's page is cross-site: a browser sends no SameSite=Lax
    session cookie with it. Authrim's page posts the same fields once more, same-site, and the
    signed-in user is answered at once (IsPassive too) instead of being asked to sign in."""
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("crosssite"), False, idp_metadata)
    sp.register()
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice)
    req_id, action, fields = sp.post_request(is_passive="true")
    # As the browser sends it cross-site: no cookies.
    page = requests.post(action, data=fields, timeout=HTTP_TIMEOUT_S)
    again_to, again = post_form(page.text)
    assert again_to == action and again.get("authrim_reposted") == "1" and again["SAMLRequest"] == fields["SAMLRequest"], page.text
    # Our page's post is same-site: the cookies come, and the session answers.
    resp = browser.post(again_to, data=again, timeout=HTTP_TIMEOUT_S)
    assert sp.accept(resp.text, req_id, "rs-2").assertion is not None
