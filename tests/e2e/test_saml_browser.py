"""SAML 2.0 Web Browser SSO (issue 33) in a real browser: Debian's Chromium, headless, driven by
Playwright (``browser/saml.mjs``), with pysaml2 as the service provider.

test_saml.py plays the browser with requests and reads the answer page's form itself; here the
browser does what a browser does with it. The SP's Assertion Consumer Service is a real HTTP
server on 127.0.0.1 (loopback http is accepted for an ACS URL) that records every request it
gets; the SP is registered from pysaml2's own metadata naming it. Chromium opens pysaml2's
AuthnRequest URL (HTTP-Redirect binding), lands on Authrim's login page and fills it in with
the keyboard alone (the username field, Tab, the password, Enter); Authrim's answer page then
posts the signed SAMLResponse and the RelayState to the ACS by its inline script, which its
CSP allows by a nonce (no violation may be reported, nothing else may run). What the ACS
received is then handed to pysaml2, which verifies both signatures against Authrim's metadata
certificate, InResponseTo against its outstanding request, Destination, Audience and the
validity window, and reads the NameID and attributes. With scripts off (a second context with
the first's cookies, so signed in) the page stays put until its <noscript> Continue button is
reached by Tab and pressed with Enter, and the post still arrives.

Back from the ACS, as Chromium does it: the answer page's script submits the form while the
page is still loading, so Chromium replaces the page's history entry with that post (a client
redirect) and Back goes to the AuthnRequest URL itself, fetched again by GET (nothing is
stored). Signed in by then, Authrim answers it with a new Response to the same request, and
the page's script posts that to the ACS too. So the ACS gets a second post; what is checked is
that the password was never sent again and that the second Response is for the same request
ID, never another one: an SP that has used that request (pysaml2 with it no longer
outstanding) refuses it. With scripts off, Back shows the answer page again, waiting for
Continue, and nothing is sent.

Needs Chromium and ``npm ci`` in ``browser/`` as test_browser.py does, and the xmlsec1 command
as test_saml.py does.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs

import pytest

from conftest import REPO_ROOT, TIME_SCALE, run_browser_program
from test_browser import FormPostReceiver, csp_messages, needs_browser
from test_saml import XMLSEC, ServiceProvider, idp_metadata  # noqa: F401 (idp_metadata: a fixture)

from saml2 import BINDING_HTTP_POST  # noqa: E402  (test_saml skipped the module without pysaml2)
from saml2.client import Saml2Client  # noqa: E402
from saml2.saml import NAMEID_FORMAT_PERSISTENT  # noqa: E402

PROGRAM = REPO_ROOT / "tests" / "e2e" / "browser" / "saml.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "saml"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 90 * TIME_SCALE  # the program gives up by itself after 75 s (both times TIME_SCALE)
pytestmark = pytest.mark.skipif(XMLSEC is None, reason="the xmlsec1 command is not installed (scripts/test.sh installs it)")


class LoopbackServiceProvider(ServiceProvider):
    """test_saml's pysaml2 SP, its ACS the test's own HTTP server instead of a name that
    goes nowhere."""

    def __init__(self, server, tmp, name: str, metadata: str, acs: str):
        super().__init__(server, tmp, name, False, metadata)
        self.acs = acs
        self.config.getattr("endpoints", "sp")["assertion_consumer_service"] = [(acs, BINDING_HTTP_POST)]
        self.client = Saml2Client(config=self.config)


@pytest.fixture
def acs_server():
    receiver = FormPostReceiver()
    try:
        yield receiver
    finally:
        receiver.close()


def test_sso_by_redirect_in_chromium_posts_the_response_to_the_acs(authrim_server, alice, idp_metadata, acs_server,
                                                                    tmp_path):
    needs_browser()
    acs = acs_server.origin + "/acs"
    sp = LoopbackServiceProvider(authrim_server, tmp_path, authrim_server.unique("browser"), idp_metadata, acs)
    assert acs in sp.metadata()
    client = sp.register()
    assert client["saml"]["entity_id"] == sp.entity_id, client
    scripted_id, scripted_url = sp.redirect_request(relay_state="rs-scripted")
    noscript_id, noscript_url = sp.redirect_request(relay_state="rs-noscript")
    assert scripted_id != noscript_id

    seen = run_browser_program(PROGRAM, {
        "ISSUER": authrim_server.issuer, "USERNAME": alice["username"], "PASSWORD": alice["password"], "ACS": acs,
        "URLS": json.dumps({"scripted": scripted_url, "noscript": noscript_url}), "WAIT_MS": str(WAIT_MS),
    }, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S, stale=ARTIFACTS.glob("failure.*"),
        explain=lambda: f"\nthe ACS received: {acs_server.received}")
    received = acs_server.received
    report = f"browser saw (all of it in {tmp_path / 'seen.json'}): {json.dumps(seen, indent=1)}\nthe ACS received: {received}"
    posts = [r for r in received if r.method == "POST"]
    assert not [r for r in received if r.method != "POST" and r.path != "/favicon.ico"], report
    assert all((r.path, r.query, r.content_type) == ("/acs", {}, "application/x-www-form-urlencoded") for r in posts), report
    assert all(set(r.fields) == {"SAMLResponse", "RelayState"} and all(len(v) == 1 for v in r.fields.values())
               for r in posts), report
    by_relay = {rs: [r.fields["SAMLResponse"][0] for r in posts if r.fields["RelayState"] == [rs]]
                for rs in ("rs-scripted", "rs-noscript")}
    assert len(posts) == sum(len(v) for v in by_relay.values()), report

    # 1. Scripts on. The login page is where the AuthnRequest URL landed (no redirect), its
    # username field focused on load; the keyboard alone filled it in and sent it.
    login = seen["login_page"]
    assert (login["status"], login["path"], login["heading"]) == (200, "/saml/sso", "Sign in"), report
    assert login["focused_on_load"]["id"] == "username", report
    scripted = seen["scripted"]
    assert scripted["tab_focused"]["id"] == "password", report
    # The login POST was answered with the page itself: HTML, not stored, a CSP that lets one
    # script run, by its nonce, and nothing else.
    answer = scripted["answer"]
    nonce = check_answer_page(answer, "POST", report)
    assert answer["path"] == "/login", report
    # Its inline script (carrying the nonce, hidden from the DOM as browsers do) submitted the
    # one form, to the ACS, with the Response and the RelayState the ACS then received.
    [submit] = scripted["submits"]
    assert submit["by_script"] == {"inline": True, "nonce": nonce, "nonce_attribute": ""}, report
    doc = submit["document"]
    assert doc["heading"] == "Returning to the application", report
    assert doc["forms"] == [{"action": acs, "method": "post",
                             "fields": [["SAMLResponse", "hidden"], ["RelayState", "hidden"]]}], report
    assert doc["scripts"] == [{"inline": True, "nonce": nonce}], report
    assert doc["noscripts"] == 1 and doc["buttons"] == 0, report  # Continue is inside <noscript>
    assert (submit["action"], submit["method"]) == (acs, "post"), report
    # Exactly one post for this request reached the ACS on the way (a second one came only
    # with Back, below), a top-level navigation, the body the script's form held.
    sent = scripted["acs"]
    assert (sent["url"], sent["method"], sent["navigation"], sent["main_frame"]) == (acs, "POST", True, True), report
    assert parse_qs(sent["body"]) == {k: [v] for k, v in submit["fields"]}, report
    assert [r for r in scripted["requests"] if r["url"] == acs and r["method"] == "POST"] == [
        {"url": acs, "method": "POST", "navigation": True}], report
    first = posts[0]
    assert first.fields == {k: [v] for k, v in submit["fields"]} and first.fields["RelayState"] == ["rs-scripted"], report
    assert scripted["landed"] == {"url": acs, "heading": "relying party: received"}, report
    assert scripted["ms_to_post"] < 5000, report

    # pysaml2 verifies it (signatures, InResponseTo, Destination, Audience, validity) and
    # reads Alice from it.
    response = sp.client.parse_authn_request_response(first.fields["SAMLResponse"][0], BINDING_HTTP_POST,
                                                      outstanding={scripted_id: "/"})
    persistent = check_alice(response, scripted_id, alice, report)

    # 2. Scripts off, signed in: GET /saml/sso answered the page at once; it stayed put, its
    # Continue button shown, reached by Tab and pressed with Enter; then the post arrived.
    noscript = seen["noscript"]
    check_answer_page(noscript["answer"], "GET", report)
    assert noscript["answer"]["path"] == "/saml/sso", report
    assert noscript["stayed"] == {"url": noscript["answer"]["url"], "to_acs": 0,
                                  "heading": "Returning to the application"}, report
    assert noscript["shown"] == {"buttons": 1, "visible": True}, report
    assert 0 <= noscript["tabs_to_continue"] <= 10, report
    assert noscript["acs"]["method"] == "POST" and noscript["acs"]["url"] == acs, report
    assert noscript["landed"] == {"url": acs, "heading": "relying party: received"}, report
    [posted] = by_relay["rs-noscript"]
    assert in_response_to(posted) == noscript_id, report
    assert parse_qs(noscript["acs"]["body"]) == {"SAMLResponse": [posted], "RelayState": ["rs-noscript"]}, report
    response = sp.client.parse_authn_request_response(posted, BINDING_HTTP_POST, outstanding={noscript_id: "/"})
    assert check_alice(response, noscript_id, alice, report) == persistent, report
    # Back from the ACS there: the answer page again (fetched afresh: it is not stored), still
    # waiting for Continue; nothing is sent.
    nb = seen["noscript_back"]
    assert nb["response"]["url"] == noscript["answer"]["url"] and nb["response"]["method"] == "GET", report
    assert nb["heading"] == "Returning to the application" and nb["posts_to_acs"] == 0, report

    # 3. Back from the ACS with scripts on. The password is never sent again (no POST /login
    # resubmitted): Chromium replaced the answer page's history entry with the post its script
    # made while the page loaded, so Back goes to the AuthnRequest URL itself, fetched afresh
    # by GET. Whatever the ACS received because of it is for the same request only: a new
    # Response to it, which an SP that has already used that request refuses.
    back = seen["back"]
    assert back["error"] is None, report
    assert not [r for r in back["requests"] if r["method"] == "POST" and not r["url"].startswith(acs)], report
    assert back["posts_to_acs"] == len(by_relay["rs-scripted"]) - 1, report
    if back["posts_to_acs"]:
        assert back["response"] == {"url": scripted_url, "status": 200, "method": "GET"}, report
    for again in by_relay["rs-scripted"][1:]:
        assert again != first.fields["SAMLResponse"][0], report
        assert in_response_to(again) == scripted_id, report
        with pytest.raises(Exception) as refused:
            sp.client.parse_authn_request_response(again, BINDING_HTTP_POST, outstanding={})
        assert "Unsolicited" in type(refused.value).__name__ or "InResponseTo" in str(refused.value), repr(refused.value)

    # No Content Security Policy was broken anywhere, no script failed.
    assert seen["csp_violations"] == [], report
    assert not csp_messages(seen["console"]), report
    assert seen["page_errors"] == [], report


def check_answer_page(page: dict, method: str, report: str) -> str:
    """The answer page as served: 200 HTML, not stored, a CSP that lets one script run, by
    its nonce (returned), and nothing else."""
    assert (page["status"], page["method"]) == (200, method), report
    assert page["content_type"].startswith("text/html"), report
    assert "no-store" in page["cache_control"], report
    directives = {d.split()[0]: d.split()[1:] for d in page["csp"].split(";") if d.strip()}
    assert directives["default-src"] == ["'none'"], report
    [nonce_source] = directives["script-src"]
    assert nonce_source.startswith("'nonce-") and nonce_source.endswith("'"), report
    assert directives["frame-ancestors"] == ["'none'"], report
    return nonce_source[len("'nonce-"):-1]


def check_alice(response, req_id: str, alice: dict, report: str) -> str:
    """The Response pysaml2 accepted is for `req_id` and names Alice; her persistent NameID."""
    assert response.in_response_to == req_id, report
    assert response.assertion is not None, report
    info = response.session_info()
    assert info["name_id"].format == NAMEID_FORMAT_PERSISTENT and info["name_id"].text, info
    assert response.ava["mail"] == [alice["claims"]["email"]], response.ava
    assert response.ava["uid"] == [alice["username"]], response.ava
    assert response.ava["displayName"] == [alice["claims"]["name"]], response.ava
    return info["name_id"].text


def in_response_to(saml_response: str) -> str | None:
    """The InResponseTo of a Response as posted (base64), read without judging it."""
    xml = base64.b64decode(saml_response).decode()
    start = xml.index("<saml2p:Response")
    head = xml[start:xml.index(">", start)]
    marker = 'InResponseTo="'
    return head[head.index(marker) + len(marker):].split('"')[0] if marker in head else None
