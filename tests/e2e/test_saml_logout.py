"""SAML 2.0 Single Logout (issue 33, slice 3): pysaml2 as the service provider, front channel,
joined to the OpenID logout.

- SP-initiated: pysaml2's signed LogoutRequest (HTTP-Redirect) ends the browser's session as
  RP-initiated logout does (an OpenID client of the session gets its back-channel logout
  token), and the browser goes on to the SP's SLO URL with a LogoutResponse that pysaml2
  parses and whose Redirect signature it verifies; afterwards IsPassive gets NoPassive.
- IdP-initiated: OpenID RP-initiated logout at ``/logout`` makes the logout page load the
  SAML SP's signed LogoutRequest in a hidden iframe; pysaml2 parses it, verifies it, and
  answers with its own LogoutResponse, which ``/saml/slo`` accepts.
- A LogoutRequest with another NameID, or a broken signature, is refused with a page and
  ends nothing.
- An SP whose SingleLogoutService is HTTP-POST only: the logout page's iframe loads our own
  page, which posts it a LogoutRequest signed in its XML; its SP-initiated logout is answered
  the same way, with a LogoutResponse posted at the end. pysaml2 verifies both against the IdP
  metadata's certificate.
"""

from __future__ import annotations

import base64
import json
import threading
import time
from types import SimpleNamespace
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from html.parser import HTMLParser
from urllib.parse import parse_qs, quote, urlsplit

import pytest
import requests

from conftest import HTTP_TIMEOUT_S, TIME_SCALE
from test_authlib import (ALL_SCOPES, BACKCHANNEL_WAIT_S, POST_LOGOUT_REDIRECT_URI, REDIRECT_URI, add_params_to_uri,
                          backchannel_receiver, describe, run_code_flow, verify_logout_token)  # noqa: F401 (a fixture)
from conftest import admin
from test_upstream import audit
from test_saml import RSA_SHA256, SHA256, XMLSEC, ServiceProvider, idp_metadata, post_form, sign_in  # noqa: F401 (a fixture)

saml2 = pytest.importorskip("saml2")
from saml2 import BINDING_HTTP_POST, BINDING_HTTP_REDIRECT  # noqa: E402
from saml2.pack import make_soap_enveloped_saml_thingy  # noqa: E402
from saml2.samlp import logout_request_from_string  # noqa: E402
from saml2.samlp import STATUS_UNKNOWN_PRINCIPAL  # noqa: E402
from saml2.s_utils import status_message_factory, success_status_factory  # noqa: E402
from saml2.response import StatusNoPassive  # noqa: E402
from saml2.saml import NAMEID_FORMAT_PERSISTENT, NameID  # noqa: E402
from saml2.sigver import verify_redirect_signature  # noqa: E402

SUCCESS = "urn:oasis:names:tc:SAML:2.0:status:Success"
PARTIAL_LOGOUT = "urn:oasis:names:tc:SAML:2.0:status:PartialLogout"
pytestmark = pytest.mark.skipif(XMLSEC is None, reason="the xmlsec1 command is not installed (scripts/test.sh installs it)")


class _Frames(HTMLParser):
    def __init__(self):
        super().__init__()
        self.frames, self.next = [], None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "iframe":
            self.frames.append(a.get("src"))
        if tag == "a" and a.get("id") == "next":
            self.next = a.get("href")


def query(url: str) -> dict:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


def inflate(b64: str) -> str:
    return zlib.decompress(base64.b64decode(b64), -15).decode()


def id_token_claims(token: str) -> dict:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def signed_by_idp(sp: ServiceProvider, msg: dict) -> bool:
    """The Redirect binding's signature, checked by pysaml2 with the IdP metadata's certificates."""
    certs = sp.client.metadata.certs(sp.idp, "any", "signing")
    assert certs, "no IdP signing certificate in the metadata"
    return any(verify_redirect_signature(msg, sp.client.sec.sec_backend, cert) for _, cert in certs)


def openid_client(server, backchannel=None) -> dict:
    extra = {"backchannel_logout_uri": backchannel.url, "backchannel_logout_session_required": True} if backchannel else {}
    return server.create_client(client_id=server.unique("slo-oidc"), redirect_uris=[REDIRECT_URI],
                                token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
                                scope=ALL_SCOPES, post_logout_redirect_uris=[POST_LOGOUT_REDIRECT_URI], **extra)


def signed_in_both(server, discovery, alice, idp_metadata, tmp_path, name, backchannel=None, slo=True):
    """One browser signed in to an OpenID client and then, through the same session, to a
    pysaml2 SP with an SLO endpoint (both bindings, or `slo="post"`): (flow, sid, sp, the
    SP's NameID)."""
    reg = openid_client(server, backchannel)
    flow = run_code_flow(server, discovery, alice, reg["client_id"], reg["client_secret"], "client_secret_basic", "openid profile")
    sid = id_token_claims(flow.token["id_token"])["sid"]
    sp = ServiceProvider(server, tmp_path, server.unique(name), False, idp_metadata, slo=slo)
    sp.register()
    req_id, url = sp.redirect_request()
    resp = flow.browser.get(url, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    info = sp.accept(resp.text, req_id, "rs-1").session_info()
    assert info["session_index"] == sid, (info, sid)
    return flow, reg, sid, sp, info["name_id"]


def sp_logout_url(sp: ServiceProvider, name_id) -> str:
    """pysaml2's own signed LogoutRequest by the Redirect binding: where it sends the browser."""
    responses = sp.client.do_logout(name_id, [sp.idp], reason="", expire=None, sign=True,
                                    expected_binding=BINDING_HTTP_REDIRECT, sign_alg=RSA_SHA256, digest_alg=SHA256)
    binding, http_info = responses[sp.idp]
    assert binding == BINDING_HTTP_REDIRECT, responses
    url = dict(http_info["headers"])["Location"]
    assert url.split("?")[0].endswith("/saml/slo") and "Signature=" in url, url
    return url


def test_metadata_lists_the_single_logout_service_by_both_bindings(idp_metadata):
    assert "SingleLogoutService" in idp_metadata, idp_metadata
    for binding in ("HTTP-Redirect", "HTTP-POST"):
        assert f'Binding="urn:oasis:names:tc:SAML:2.0:bindings:{binding}" Location="' in idp_metadata
    assert idp_metadata.count("/saml/slo\"") == 2, idp_metadata


def test_sp_initiated_logout_by_redirect_ends_the_session_for_everyone(authrim_server, discovery, jwks, alice, idp_metadata,
                                                                       tmp_path, backchannel_receiver):
    flow, reg, sid, sp, name_id = signed_in_both(authrim_server, discovery, alice, idp_metadata, tmp_path, "slo-sp",
                                                 backchannel_receiver)
    url = sp_logout_url(sp, name_id)
    sent = query(url)
    request_id = inflate(sent["SAMLRequest"]).split(' ID="')[1].split('"')[0]

    # No front-channel party is left (the OpenID client has a back channel): straight on to
    # the SP's SLO URL with the LogoutResponse, RelayState as sent.
    resp = flow.browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    location = resp.headers["Location"]
    assert location.startswith(sp.slo + "?"), location
    answer = query(location)
    assert answer["RelayState"] == sent["RelayState"], answer
    assert answer["SigAlg"] == RSA_SHA256, answer
    assert signed_by_idp(sp, answer), "the LogoutResponse's Redirect signature does not verify"
    tampered = {**answer, "RelayState": answer["RelayState"] + "x"}
    assert not signed_by_idp(sp, tampered)
    logout = sp.client.parse_logout_request_response(answer["SAMLResponse"], BINDING_HTTP_REDIRECT)
    assert logout is not None
    assert logout.response.status.status_code.value == SUCCESS, logout.response
    assert logout.response.in_response_to == request_id, logout.response
    assert logout.response.destination == sp.slo, logout.response

    # The OpenID client of the session is told by its back channel.
    delivery = backchannel_receiver.next(BACKCHANNEL_WAIT_S)
    claims = verify_logout_token(delivery.form["logout_token"][0], jwks, authrim_server.issuer, reg["client_id"], alice["id"], sid)
    assert claims["sid"] == sid
    # The session is over: IsPassive cannot be honoured.
    req_id, url = sp.redirect_request(relay_state="rs-5", is_passive="true")
    resp = flow.browser.get(url, timeout=HTTP_TIMEOUT_S)
    with pytest.raises(StatusNoPassive):
        sp.accept(resp.text, req_id, "rs-5")


def test_openid_logout_sends_the_saml_sp_a_logout_request_it_verifies(authrim_server, discovery, alice, idp_metadata, tmp_path):
    flow, reg, sid, sp, name_id = signed_in_both(authrim_server, discovery, alice, idp_metadata, tmp_path, "slo-idp")
    logout_url = add_params_to_uri(discovery["end_session_endpoint"], [
        ("id_token_hint", flow.token["id_token"]), ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI), ("state", "st-1")])
    resp = flow.browser.get(logout_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    page = _Frames()
    page.feed(resp.text)
    frames = [f for f in page.frames if f.startswith(sp.slo + "?")]
    assert len(frames) == 1, page.frames
    assert page.next and page.next.startswith(POST_LOGOUT_REDIRECT_URI), page.next
    assert urlsplit(sp.slo).netloc in resp.headers.get("Content-Security-Policy", ""), resp.headers

    msg = query(frames[0])
    assert set(msg) == {"SAMLRequest", "SigAlg", "Signature"}, msg
    assert msg["SigAlg"] == RSA_SHA256
    request = sp.client.parse_logout_request(msg["SAMLRequest"], BINDING_HTTP_REDIRECT, sigalg=msg["SigAlg"], signature=msg["Signature"])
    assert request is not None
    assert request._do_redirect_sig_check(msg), "pysaml2 does not verify the LogoutRequest's signature"
    assert not request._do_redirect_sig_check({**msg, "SAMLRequest": msg["SAMLRequest"][:-4] + "AAAA"})
    assert request.message.name_id.text == name_id.text, request.message
    assert request.message.name_id.format == NAMEID_FORMAT_PERSISTENT
    assert [s.text for s in request.message.session_index] == [sid], request.message
    assert request.message.destination == sp.slo
    assert request.message.issuer.text == sp.idp

    # pysaml2 ends its own session and answers: its signed LogoutResponse, which /saml/slo takes.
    http_info = sp.client.handle_logout_request(msg["SAMLRequest"], name_id, BINDING_HTTP_REDIRECT, sign=True, sign_alg=RSA_SHA256,
                                                sigalg=msg["SigAlg"], signature=msg["Signature"])
    back = dict(http_info["headers"])["Location"]
    assert back.split("?")[0].endswith("/saml/slo") and "SAMLResponse=" in back, back
    resp = requests.get(back, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    # Its signature broken: refused.
    broken = back.split("&Signature=")[0] + "&Signature=" + quote(base64.b64encode(b"\0" * 256).decode())
    resp = requests.get(broken, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400, describe(resp)


def test_logout_requests_with_another_name_id_or_a_broken_signature_are_refused(authrim_server, alice, idp_metadata, tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-bad"), False, idp_metadata, slo=True)
    sp.register()
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    name_id = sp.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1").session_info()["name_id"]

    # Another principal's NameID (properly signed by the SP): a page, no LogoutResponse.
    other = NameID(format=NAMEID_FORMAT_PERSISTENT, text="somebody-else")
    resp = browser.get(sp_logout_url(sp, other), allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)
    # The right NameID, the signature replaced: a page.
    url = sp_logout_url(sp, name_id)
    broken = url.split("&Signature=")[0] + "&Signature=" + quote(base64.b64encode(b"\0" * 256).decode())
    resp = browser.get(broken, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)
    # Unsigned (the signature parameters dropped): LogoutRequests must be signed, whatever
    # the SP's require_signed_requests (off here).
    unsigned = url.split("&SigAlg=")[0]
    assert "Signature" not in unsigned
    resp = browser.get(unsigned, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)
    # None of them ended the session: IsPassive is still answered with an assertion.
    req_id, url = sp.redirect_request(relay_state="rs-2", is_passive="true")
    assert sp.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-2").session_info()["name_id"].text == name_id.text
    # Garbage is a page too, never a 500.
    here = url.split("/saml/sso")[0] + "/saml/slo"
    for params in ({"SAMLRequest": "not base64!"}, {"SAMLResponse": base64.b64encode(b"<x/>").decode()}, {},
                   {"SAMLRequest": base64.b64encode(zlib.compress(b"<!DOCTYPE x><x/>")[2:-4]).decode()}):
        resp = browser.get(here, params=params, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 400, (params, describe(resp))
    resp = browser.post(here, data={"SAMLRequest": base64.b64encode(b"<samlp:LogoutRequest/>").decode()}, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400, describe(resp)
    # The genuine request still works: on to the SP with Success.
    resp = browser.get(sp_logout_url(sp, name_id), allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302 and resp.headers["Location"].startswith(sp.slo), describe(resp)


def test_sp_initiated_logout_by_post_signed_in_the_xml_and_partial_when_an_sp_cannot_be_told(authrim_server, alice, idp_metadata,
                                                                                             tmp_path):
    """The HTTP-POST binding: pysaml2 signs the LogoutRequest itself (enveloped, RSA-SHA256),
    which is verified and read from what the signature covers. Another SP of the session has
    no SLO URL: the answer is Success with PartialLogout."""
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-post"), False, idp_metadata, slo=True)
    sp.register()
    mute = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-mute"), False, idp_metadata)
    mute.register()
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    name_id = sp.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1").session_info()["name_id"]
    req_id, url = mute.redirect_request()
    mute.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-1")

    responses = sp.client.do_logout(name_id, [sp.idp], reason="", expire=None, sign=True,
                                    expected_binding=BINDING_HTTP_POST, sign_alg=RSA_SHA256, digest_alg=SHA256)
    binding, http_info = responses[sp.idp]
    assert binding == BINDING_HTTP_POST, responses
    action, fields = post_form(http_info["data"])
    assert action.endswith("/saml/slo"), action
    assert "Signature" in base64.b64decode(fields["SAMLRequest"]).decode()
    # Tampered after signing (another NameID): refused, and nothing ends.
    xml = base64.b64decode(fields["SAMLRequest"]).decode()
    tampered = xml.replace(name_id.text, "somebody-else")
    assert tampered != xml
    resp = browser.post(action, data={**fields, "SAMLRequest": base64.b64encode(tampered.encode()).decode()},
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400, describe(resp)

    # A real browser leaves the SameSite=Lax session cookie off the SP's cross-site POST: the
    # answer is our own page posting the same fields again (same-site, so with the cookie).
    resp = requests.post(action, data=fields, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    again, again_fields = post_form(resp.text)
    assert again == action and again_fields == {**fields, "authrim_reposted": "1"}, (again, again_fields)
    resp = browser.post(again, data=again_fields, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 303, describe(resp)
    answer = query(resp.headers["Location"])
    assert resp.headers["Location"].startswith(sp.slo + "?") and signed_by_idp(sp, answer), answer
    assert answer["RelayState"] == fields["RelayState"], answer
    logout = sp.client.parse_logout_request_response(answer["SAMLResponse"], BINDING_HTTP_REDIRECT)
    assert logout.response.status.status_code.value == SUCCESS, logout.response
    assert logout.response.status.status_code.status_code.value == PARTIAL_LOGOUT, logout.response
    # Over for the SP without an SLO URL too.
    req_id, url = mute.redirect_request(relay_state="rs-5", is_passive="true")
    with pytest.raises(StatusNoPassive):
        mute.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-5")


def test_sp_initiated_logout_tells_the_other_sp_in_an_iframe_then_answers(authrim_server, alice, idp_metadata, tmp_path):
    """Two SAML SPs in one session: the one that asks gets no LogoutRequest of its own; the
    other's is loaded in the page's iframe, and the page then goes on to the first's
    LogoutResponse."""
    a = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-a"), False, idp_metadata, slo=True)
    b = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-b"), False, idp_metadata, slo=True)
    a.register()
    b.register()
    browser = requests.Session()
    req_id, url = a.redirect_request()
    name_a = a.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1").session_info()["name_id"]
    req_id, url = b.redirect_request()
    info_b = b.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-1").session_info()
    assert info_b["name_id"].text != name_a.text, "persistent NameIDs are per SP"

    resp = browser.get(sp_logout_url(a, name_a), allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    page = _Frames()
    page.feed(resp.text)
    assert len(page.frames) == 1 and page.frames[0].startswith(b.slo + "?"), page.frames
    msg = query(page.frames[0])
    request = b.client.parse_logout_request(msg["SAMLRequest"], BINDING_HTTP_REDIRECT)
    assert request._do_redirect_sig_check(msg)
    assert request.message.name_id.text == info_b["name_id"].text
    assert [s.text for s in request.message.session_index] == [info_b["session_index"]]
    assert page.next and page.next.startswith(a.slo + "?"), page.next
    answer = query(page.next)
    assert signed_by_idp(a, answer)
    logout = a.client.parse_logout_request_response(answer["SAMLResponse"], BINDING_HTTP_REDIRECT)
    assert logout.response.status.status_code.value == SUCCESS and logout.response.status.status_code.status_code is None


def post_page(browser, url: str) -> tuple[requests.Response, str, dict]:
    """Our page that posts a Single Logout message by HTTP-POST: (its response, the form's
    action, its fields)."""
    resp = browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    action, fields = post_form(resp.text)
    return resp, action, fields


def test_an_sp_with_a_post_only_slo_service_is_sent_a_logout_request_our_page_posts(authrim_server, discovery, alice,
                                                                                   idp_metadata, tmp_path):
    flow, reg, sid, sp, name_id = signed_in_both(authrim_server, discovery, alice, idp_metadata, tmp_path, "slo-postonly",
                                                 slo="post")
    got = admin(authrim_server, "GET", f"/admin/clients/{sp.client_id}")
    assert got.json()["saml"]["slo_binding"] == "post", got.json()
    logout_url = add_params_to_uri(discovery["end_session_endpoint"], [
        ("id_token_hint", flow.token["id_token"]), ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI)])
    resp = flow.browser.get(logout_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    page = _Frames()
    page.feed(resp.text)
    ours = f"{authrim_server.issuer}/saml/slo/post?m="
    frames = [f for f in page.frames if f.startswith(ours)]
    assert len(frames) == 1 and not any(f.startswith(sp.slo) for f in page.frames), page.frames
    # The page may frame our page, the SP it posts to, and nothing else of theirs.
    frame_src = resp.headers["Content-Security-Policy"].split("frame-src ")[1].split(";")[0].split()
    assert sorted(frame_src) == sorted({urlsplit(authrim_server.issuer)._replace(path="", query="").geturl(),
                                        f"https://{urlsplit(sp.slo).netloc}"}), frame_src

    framed, action, fields = post_page(flow.browser, frames[0])
    # Our own page may frame it; no one else's.
    assert "frame-ancestors 'self'" in framed.headers["Content-Security-Policy"], framed.headers
    assert framed.headers["X-Frame-Options"] == "SAMEORIGIN", framed.headers
    assert action == sp.slo and set(fields) == {"SAMLRequest"}, (action, fields)
    xml = base64.b64decode(fields["SAMLRequest"]).decode()
    assert sp.client.sec.correctly_signed_logout_request(xml, must=True), "pysaml2 does not verify the enveloped signature"
    with pytest.raises(Exception):
        sp.client.sec.correctly_signed_logout_request(xml.replace(name_id.text, "somebody-else"), must=True)
    request = sp.client.parse_logout_request(fields["SAMLRequest"], BINDING_HTTP_POST)
    assert request is not None
    assert request.message.name_id.text == name_id.text, request.message
    assert [s.text for s in request.message.session_index] == [sid], request.message
    assert request.message.destination == sp.slo and request.message.issuer.text == sp.idp

    # pysaml2 answers by POST too: its signed LogoutResponse, which /saml/slo takes.
    http_info = sp.client.handle_logout_request(fields["SAMLRequest"], name_id, BINDING_HTTP_POST, sign=True,
                                                sign_alg=RSA_SHA256, digest_alg=SHA256)
    back, back_fields = post_form(http_info["data"])
    assert back.endswith("/saml/slo") and "SAMLResponse" in back_fields, (back, back_fields)
    resp = requests.post(back, data=back_fields, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    # It arrives in the logout page's iframe: the answer is a page that page may frame.
    assert resp.headers["X-Frame-Options"] == "SAMEORIGIN", resp.headers
    assert "frame-ancestors 'self'" in resp.headers["Content-Security-Policy"], resp.headers
    # A link that is not ours, or one cut short: a page, nothing posted.
    for bad in (ours + "forged", frames[0][:-8], ours):
        resp = flow.browser.get(bad, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 400 and "SAMLRequest" not in resp.text, describe(resp)
    # The link is its tenant's: another tenant with an SP of the same client id and settings
    # posts nothing for it (its sealer is its own).
    other = authrim_server.create_tenant(authrim_server.unique("slo-other").replace("_", "-").lower()[:30])
    resp = admin(other, "POST", "/admin/clients", {"client_id": sp.client_id, "saml": got.json()["saml"]})
    assert resp.status_code == 201, describe(resp)
    resp = flow.browser.get(f"{other.base_url}/saml/slo/post?{urlsplit(frames[0]).query}", allow_redirects=False,
                            timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLRequest" not in resp.text, describe(resp)


def test_sp_initiated_logout_of_a_post_only_sp_is_answered_by_a_posted_logout_response(authrim_server, alice, idp_metadata,
                                                                                      tmp_path):
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-postans"), False, idp_metadata, slo="post")
    sp.register()
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    name_id = sp.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1").session_info()["name_id"]

    # pysaml2 sends its request by the Redirect binding (ours takes both); the answer goes by
    # the only one the SP takes: on to our page, which posts it.
    url = sp_logout_url(sp, name_id)
    sent = query(url)
    request_id = inflate(sent["SAMLRequest"]).split(' ID="')[1].split('"')[0]
    resp = browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    answer_page = resp.headers["Location"]
    assert answer_page.startswith(f"{authrim_server.issuer}/saml/slo/post?m="), resp.headers
    _, action, fields = post_page(browser, answer_page)
    assert action == sp.slo and set(fields) == {"SAMLResponse", "RelayState"}, (action, fields)
    assert fields["RelayState"] == sent["RelayState"], fields
    xml = base64.b64decode(fields["SAMLResponse"]).decode()
    assert sp.client.sec.correctly_signed_logout_response(xml, must=True), "pysaml2 does not verify the enveloped signature"
    with pytest.raises(Exception):
        sp.client.sec.correctly_signed_logout_response(xml.replace(request_id, request_id + "x"), must=True)
    logout = sp.client.parse_logout_request_response(fields["SAMLResponse"], BINDING_HTTP_POST)
    assert logout.response.status.status_code.value == SUCCESS, logout.response
    assert logout.response.in_response_to == request_id and logout.response.destination == sp.slo, logout.response
    # The session is over: IsPassive cannot be honoured.
    req_id, url = sp.redirect_request(relay_state="rs-5", is_passive="true")
    with pytest.raises(StatusNoPassive):
        sp.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-5")

    # Loaded again, the page posts a new LogoutResponse to the same request (the session is
    # over already, the message says no more). Once the SP's registration has changed to the
    # Redirect binding, it posts nothing.
    assert post_page(browser, answer_page)[1] == sp.slo
    got = admin(authrim_server, "GET", f"/admin/clients/{sp.client_id}").json()
    resp = admin(authrim_server, "PATCH", f"/admin/clients/{sp.client_id}", {"saml": {**got["saml"], "slo_binding": "redirect"}})
    assert resp.status_code == 200, describe(resp)
    resp = browser.get(answer_page, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 400 and "SAMLResponse" not in resp.text, describe(resp)


class SoapEndpoint:
    """An SP's SingleLogoutService by the SOAP binding: an HTTP server on 127.0.0.1 that
    records each POST (headers and body) and answers with `answer(body)`: (status, body)."""

    def __init__(self):
        self.received: list[dict] = []
        self.answer = lambda body: (500, b"")
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(min(int(self.headers.get("Content-Length") or 0), 1 << 20)).decode()
                endpoint.received.append({"path": self.path, "content_type": self.headers.get("Content-Type"),
                                          "soap_action": self.headers.get("SOAPAction"), "body": body})
                status, out = endpoint.answer(body)
                self.send_response(status)
                self.send_header("Content-Type", "text/xml; charset=utf-8")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/slo/soap"
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()

    def wait_for(self, n: int, timeout: float) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.received) < n and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.received

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def soap_endpoint():
    endpoint = SoapEndpoint()
    try:
        yield endpoint
    finally:
        endpoint.close()


def soap_body(envelope: str) -> str:
    """The one element of a SOAP envelope's Body, as it was written (its namespaces declared on
    itself: our messages need nothing of the envelope's)."""
    start = envelope.index(">", envelope.index("<SOAP-ENV:Body")) + 1
    return envelope[start:envelope.index("</SOAP-ENV:Body>")]


def soap_request(envelope: str):
    """The LogoutRequest of a SOAP envelope, read by pysaml2. Not by its SOAP binding: that
    one serializes the body's element again under its own prefixes (ns0, ns1...) before
    checking the signature, which then fails for any message signed under other prefixes;
    the tests check the signature of the element as sent (`soap_body`) instead."""
    return logout_request_from_string(soap_body(envelope))


def pysaml2_soap_answer(sp: ServiceProvider, envelope: str) -> bytes:
    """What pysaml2 answers a SOAP LogoutRequest with: it ends its session for the NameID and
    says so in a signed LogoutResponse, enveloped."""
    assert sp.client.sec.correctly_signed_logout_request(soap_body(envelope), must=True)
    request = SimpleNamespace(message=soap_request(envelope))
    ended = sp.client.local_logout(request.message.name_id)
    status = success_status_factory() if ended else status_message_factory("unknown", STATUS_UNKNOWN_PRINCIPAL)
    # pysaml2 would address its answer to the IdP's SOAP endpoint, which Authrim does not
    # have (it takes no LogoutRequest by SOAP): this one goes back in the HTTP response.
    response = sp.client.create_logout_response(request.message, bindings=[BINDING_HTTP_POST], status=status, sign=True,
                                                sign_alg=RSA_SHA256, digest_alg=SHA256)
    return make_soap_enveloped_saml_thingy(response).encode()


def test_an_sp_with_a_soap_endpoint_is_told_from_the_server_when_an_operator_ends_the_session(
        authrim_server, alice, idp_metadata, tmp_path, soap_endpoint):
    """No browser: an operator ends the user's sessions. The SP with a SOAP SingleLogoutService
    gets a signed LogoutRequest from the server (through the durable outbox), which pysaml2
    verifies and answers; a first failure (503) is retried."""
    sp = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-soap"), False, idp_metadata,
                         soap_slo=soap_endpoint.url)
    client = sp.register()
    assert client["saml"].get("slo_soap_url") == soap_endpoint.url and "slo_url" not in client["saml"], client
    browser = requests.Session()
    req_id, url = sp.redirect_request()
    info = sp.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id, "rs-1").session_info()
    name_id, sid = info["name_id"], info["session_index"]

    answers = iter([(503, b"")])
    soap_endpoint.answer = lambda body: next(answers, None) or (200, pysaml2_soap_answer(sp, body))
    resp = admin(authrim_server, "DELETE", f"/admin/users/{alice['id']}/sessions")
    assert resp.status_code in (200, 204), describe(resp)

    # Refused once (503), then taken: the same request made again and signed afresh.
    got = soap_endpoint.wait_for(2, 15 * TIME_SCALE)
    assert len(got) == 2, got
    for r in got:
        assert r["content_type"].startswith("text/xml") and r["soap_action"] == '"http://www.oasis-open.org/committees/security"', r
        xml = soap_body(r["body"])
        assert sp.client.sec.correctly_signed_logout_request(xml, must=True), "pysaml2 does not verify the enveloped signature"
        with pytest.raises(Exception):
            sp.client.sec.correctly_signed_logout_request(xml.replace(name_id.text, "somebody-else"), must=True)
        request = soap_request(r["body"])
        assert (request.name_id.text, request.name_id.format) == (name_id.text, NAMEID_FORMAT_PERSISTENT), request
        assert [s.text for s in request.session_index] == [sid], request
        assert (request.destination, request.issuer.text) == (soap_endpoint.url, sp.idp), request
    # pysaml2 ended its session for that NameID (no session of it is left to end).
    assert not sp.client.users.subjects(), sp.client.users.subjects()
    delivered = wait_for_audit(authrim_server, "saml_soap_logout_delivered", client["client_id"])
    assert delivered["detail"]["sid"] == sid and delivered["detail"]["attempts"] == 2, delivered
    # Authrim's session is over too: IsPassive cannot be honoured.
    req_id, url = sp.redirect_request(relay_state="rs-5", is_passive="true")
    with pytest.raises(StatusNoPassive):
        sp.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-5")


def test_a_browser_logout_tells_a_soap_sp_by_soap_and_not_in_the_logout_page(authrim_server, alice, idp_metadata, tmp_path,
                                                                             soap_endpoint):
    """One session, two SPs: one asks to sign out by the Redirect binding; the other, with a
    SOAP endpoint, is not framed in the page (the answer goes straight on, Success: nobody was
    left untold) and gets its LogoutRequest by SOAP; the first gets none by SOAP."""
    asking = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-asks"), False, idp_metadata, slo=True)
    told = ServiceProvider(authrim_server, tmp_path, authrim_server.unique("slo-soap2"), False, idp_metadata,
                           slo=True, soap_slo=soap_endpoint.url)
    asking.register()
    client = told.register()
    assert client["saml"]["slo_soap_url"] == soap_endpoint.url and client["saml"]["slo_url"] == told.slo, client
    browser = requests.Session()
    req_id, url = asking.redirect_request()
    name_id = asking.accept(sign_in(browser, browser.get(url, timeout=HTTP_TIMEOUT_S), alice).text, req_id,
                            "rs-1").session_info()["name_id"]
    req_id, url = told.redirect_request()
    told_name_id = told.accept(browser.get(url, timeout=HTTP_TIMEOUT_S).text, req_id, "rs-1").session_info()["name_id"]
    soap_endpoint.answer = lambda body: (200, pysaml2_soap_answer(told, body))

    resp = browser.get(sp_logout_url(asking, name_id), allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    # No frame to load: straight on to the asking SP, with Success and no PartialLogout.
    assert resp.status_code == 302 and resp.headers["Location"].startswith(asking.slo + "?"), describe(resp)
    logout = asking.client.parse_logout_request_response(query(resp.headers["Location"])["SAMLResponse"], BINDING_HTTP_REDIRECT)
    assert logout.response.status.status_code.value == SUCCESS and logout.response.status.status_code.status_code is None
    [r] = soap_endpoint.wait_for(1, 10 * TIME_SCALE)
    xml = soap_body(r["body"])
    assert told.client.sec.correctly_signed_logout_request(xml, must=True)
    request = soap_request(r["body"])
    assert request.name_id.text == told_name_id.text and request.destination == soap_endpoint.url, request
    wait_for_audit(authrim_server, "saml_soap_logout_delivered", client["client_id"])
    time.sleep(0.5)
    assert len(soap_endpoint.received) == 1, soap_endpoint.received


def wait_for_audit(server, event: str, client_id: str, timeout: float = 10) -> dict:
    deadline = time.monotonic() + timeout * TIME_SCALE
    while time.monotonic() < deadline:
        found = [e for e in audit(server, event) if e.get("client_id") == client_id]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no {event} for {client_id}: {audit(server, event)}")
