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

Single Logout by HTTP-POST (``browser/saml_logout.mjs``): a pysaml2 SP whose SingleLogoutService
is HTTP-POST only, at another path of the same recording server, registered from its
metadata. Chromium signs in by SAML, then ends the session at Authrim's ``/logout`` (asked
first, "Sign out" by keyboard): the logout page's hidden iframe loads Authrim's own page, whose
nonce-allowed script posts the signed LogoutRequest to the SP inside the iframe. That the post
arrives at all is what only a browser can show: the logout page's CSP frame-src must let the
frame go from Authrim's origin on to the SP's, and the framed page's frame-ancestors 'self' and
X-Frame-Options SAMEORIGIN must let Authrim's page frame it. The SP receives it once, and
pysaml2 verifies its enveloped signature and reads the NameID and SessionIndex of the sign-in;
no CSP violation is reported anywhere, no request fails. Twice: with a post_logout_redirect_uri
(the page's script moves on once the iframe has loaded, after the post was answered; the SP
answers with a plain page), and, signed in again, with ``/logout`` alone (the signed-out page
stays): there the SP answers as pysaml2 does, with its own page posting its signed
LogoutResponse back to Authrim's ``/saml/slo`` in the same frame, which Authrim takes (audited
as Success for that request) and answers with a page its logout page may frame (before that
was so, Chromium blocked it: ERR_BLOCKED_BY_RESPONSE).

Needs Chromium and ``npm ci`` in ``browser/`` as test_browser.py does, and the xmlsec1 command
as test_saml.py does.
"""

from __future__ import annotations

import base64
import json
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from conftest import REPO_ROOT, TIME_SCALE, run_browser_program
from test_browser import FormPostReceiver, csp_messages, needs_browser
from test_upstream import audit
from test_saml import RSA_SHA256, SHA256, XMLSEC, ServiceProvider, idp_metadata  # noqa: F401 (idp_metadata: a fixture)

from saml2 import BINDING_HTTP_POST  # noqa: E402  (test_saml skipped the module without pysaml2)
from saml2.client import Saml2Client  # noqa: E402
from saml2.saml import NAMEID_FORMAT_PERSISTENT  # noqa: E402

PROGRAM = REPO_ROOT / "tests" / "e2e" / "browser" / "saml.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "saml"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 90 * TIME_SCALE  # the program gives up by itself after 75 s (both times TIME_SCALE)
pytestmark = pytest.mark.skipif(XMLSEC is None, reason="the xmlsec1 command is not installed (scripts/test.sh installs it)")


class LoopbackServiceProvider(ServiceProvider):
    """test_saml's pysaml2 SP, its ACS (and, given `slo`, its SingleLogoutService, by HTTP-POST
    only) the test's own HTTP server instead of a name that goes nowhere."""

    def __init__(self, server, tmp, name: str, metadata: str, acs: str, slo: str | None = None):
        super().__init__(server, tmp, name, False, metadata, slo="post" if slo else False)
        self.acs = acs
        endpoints = self.config.getattr("endpoints", "sp")
        endpoints["assertion_consumer_service"] = [(acs, BINDING_HTTP_POST)]
        if slo:
            self.slo = slo
            endpoints["single_logout_service"] = [(slo, BINDING_HTTP_POST)]
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


LOGOUT_PROGRAM = REPO_ROOT / "tests" / "e2e" / "browser" / "saml_logout.mjs"


def test_single_logout_by_post_reaches_a_post_only_sp_from_the_logout_pages_iframe(authrim_server, alice, idp_metadata,
                                                                                   acs_server, tmp_path):
    """An SP whose SingleLogoutService is HTTP-POST only, told of a logout in Chromium: the
    logout page frames Authrim's own page, whose script posts the signed LogoutRequest to the
    SP inside the iframe. Only a browser shows that the policies let it through: the logout
    page's CSP frame-src must allow both Authrim's origin and the SP's (a frame's every
    navigation is checked against it), and the framed page's frame-ancestors 'self' and
    X-Frame-Options SAMEORIGIN must let Authrim's page frame it. Twice: a logout with a
    post_logout_redirect_uri, whose page's own script moves on once the iframe has loaded
    (the post must have arrived by then, not been cut off by the page leaving), then, signed
    in again, /logout alone, whose signed-out page stays."""
    needs_browser()
    rp = acs_server
    acs, slo, after_logout = rp.origin + "/acs", rp.origin + "/slo", rp.origin + "/logged-out"
    sp = LoopbackServiceProvider(authrim_server, tmp_path, authrim_server.unique("browser-slo"), idp_metadata, acs, slo=slo)
    metadata = sp.metadata()
    assert f'Binding="{BINDING_HTTP_POST}" Location="{slo}"' in metadata and "HTTP-Redirect" not in metadata, metadata
    client = sp.register()
    # Registered from that metadata alone: Authrim knows it can only post to this SP.
    assert (client["saml"]["slo_url"], client["saml"]["slo_binding"]) == (slo, "post"), client
    # An OpenID client only to say where the browser goes after the first logout
    # (RP-Initiated Logout's client_id and post_logout_redirect_uri, no id_token_hint: Authrim
    # asks first).
    oidc = authrim_server.create_client(
        client_id=authrim_server.unique("browser-slo-rp"), redirect_uris=[rp.origin + "/cb"], scope="openid",
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
        post_logout_redirect_uris=[after_logout])
    login_id, login_url = sp.redirect_request(relay_state="rs-login")
    again_id, again_url = sp.redirect_request(relay_state="rs-again")
    # The SP answers the second LogoutRequest as pysaml2 does: its own page, posting its
    # signed LogoutResponse back to Authrim in the same frame (the first is answered with a
    # plain page: that logout page leaves as soon as its iframe has loaded). pysaml2 takes
    # each Response as it arrives, as an SP does, so that it knows the session it is asked
    # to end.
    answered = {}

    def answer_second_logout(method, path, fields):
        if (method, path) == ("POST", "/acs"):
            sp.client.parse_authn_request_response(fields["SAMLResponse"][0], BINDING_HTTP_POST,
                                                   outstanding={login_id: "/", again_id: "/"})
        if (method, path) != ("POST", "/slo") or [r.path for r in rp.received].count("/slo") != 2:
            return None
        request = sp.client.parse_logout_request(fields["SAMLRequest"][0], BINDING_HTTP_POST)
        answered["request_id"] = request.message.id
        info = sp.client.handle_logout_request(fields["SAMLRequest"][0], request.message.name_id, BINDING_HTTP_POST,
                                               sign=True, sign_alg=RSA_SHA256, digest_alg=SHA256)
        return info["data"].encode()
    rp.respond = answer_second_logout
    logout_url = f"{authrim_server.issuer}/logout?" + urlencode(
        {"client_id": oidc["client_id"], "post_logout_redirect_uri": after_logout, "state": "st-slo"})

    seen = run_browser_program(LOGOUT_PROGRAM, {
        "ISSUER": authrim_server.issuer, "USERNAME": alice["username"], "PASSWORD": alice["password"], "ACS": acs,
        "SLO": slo, "NEXT": after_logout, "LOGIN": login_url, "AFTER": again_url, "LOGOUT": logout_url,
        "WAIT_MS": str(WAIT_MS),
    }, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S, stale=ARTIFACTS.glob("slo-failure.*"), failure_prefix="slo-",
        explain=lambda: f"\nthe SP received: {rp.received}")
    received = [r for r in rp.received if r.path != "/favicon.ico"]
    report = f"browser saw (all of it in {tmp_path / 'seen.json'}): {json.dumps(seen, indent=1)}\nthe SP received: {received}"

    # What the SP's server got, in this order: the Response at the ACS, the LogoutRequest at
    # the SLO URL (before the logout page left: it waited for its iframe), the browser itself
    # at the post-logout URI with the state; then, signed in again, a Response and a
    # LogoutRequest. Nothing else, nothing twice.
    assert [(r.method, r.path) for r in received] == [("POST", "/acs"), ("POST", "/slo"), ("GET", "/logged-out"),
                                                      ("POST", "/acs"), ("POST", "/slo")], report
    first_response, first_request, landed, second_response, second_request = received
    assert landed.query == {"state": ["st-slo"]}, report

    # The sign-ins: pysaml2 takes each Response; the NameID and SessionIndex it was issued are
    # what each LogoutRequest must name. The second sign-in is a session of its own: the
    # first one ended (the AuthnRequest met the login page again).
    issued = []
    for signed_in, response, req_id in ((seen["signed_in"], first_response, login_id),
                                        (seen["signed_in_again"], second_response, again_id)):
        assert (signed_in["login_page"]["status"], signed_in["login_page"]["path"], signed_in["login_page"]["heading"],
                signed_in["login_page"]["username_field"]) == (200, "/saml/sso", "Sign in", 1), report
        assert signed_in["landed"] == {"url": acs, "heading": "relying party: received"}, report
        assert parse_qs(signed_in["acs_body"]) == response.fields, report
        info = sp.client.parse_authn_request_response(response.fields["SAMLResponse"][0], BINDING_HTTP_POST,
                                                      outstanding={req_id: "/"}).session_info()
        assert info["name_id"].format == NAMEID_FORMAT_PERSISTENT and info["name_id"].text and info["session_index"], info
        issued.append(info)
    assert issued[0]["name_id"].text == issued[1]["name_id"].text, issued
    assert issued[0]["session_index"] != issued[1]["session_index"], issued

    issuer_origin = urlsplit(authrim_server.issuer)._replace(path="", query="", fragment="").geturl()
    for logout, request, info, next_url in ((seen["logout"], first_request, issued[0], f"{after_logout}?state=st-slo"),
                                            (seen["logout_stays"], second_request, issued[1], None)):
        check_post_logout(logout, request, info, next_url, sp, slo, issuer_origin, seen, report)

    # With a way back, the logout page went on by itself to the post-logout URI, on its
    # iframe's load (not its 5 s timer).
    ended = seen["logout"]["ended"]
    assert (ended["url"], ended["heading"]) == (f"{after_logout}?state=st-slo", "relying party: received"), report
    assert ended["ms_after_enter"] < 5000, report
    # Without, the signed-out page stayed, its iframe on the SP's page, its way on "Sign in
    # again".
    ended = seen["logout_stays"]["ended"]
    assert (urlsplit(ended["url"]).path, ended["heading"]) == ("/logout/confirm", "You are signed out"), report
    assert ended["frames"] == [f"{authrim_server.issuer}/saml/slo"] and ended["sign_in_again"] == 1, report
    # There, the SP's LogoutResponse came back through the iframe, was taken (audited, for the
    # request it answers) and answered with a page the logout page may frame, shown there.
    back = seen["logout_stays"]["answer_back"]
    assert (back["status"], back["frame"], back["navigation"], back["heading"]) == (200, "child", True, "You are signed out"), report
    assert directives(back["csp"])["frame-ancestors"] == ["'self'"] and back["x_frame_options"] == "SAMEORIGIN", report
    assert seen["logout"]["answer_back"] is None, report
    taken = [e["detail"] for e in audit(authrim_server, "saml_logout") if e["detail"].get("in_response_to") == answered["request_id"]]
    assert [(t["sp"], t["response"]) for t in taken] == [(client["client_id"], "urn:oasis:names:tc:SAML:2.0:status:Success")], report

    # No policy was broken in any document (the iframes' included), nothing failed.
    assert seen["csp_violations"] == [], report
    assert not csp_messages(seen["console"]), report
    assert seen["page_errors"] == [] and seen["failed_requests"] == [], report


def check_post_logout(logout: dict, received, issued: dict, next_url: str | None, sp: LoopbackServiceProvider, slo: str,
                      issuer_origin: str, seen: dict, report: str):
    """One logout of the walk: the page, its iframe, our page in it, and the LogoutRequest it
    posted, as the SP `received` it: pysaml2 verifies it and reads the `issued` NameID and
    SessionIndex."""
    # The confirmation page, then the logout page: POST /logout/confirm answered 200, its CSP
    # framing Authrim's origin and the SP's and nothing else, itself framed by nobody; its one
    # script (only with a way back) by nonce.
    assert (logout["confirm_page"]["status"], logout["confirm_page"]["heading"]) == (200, "Sign out of Authrim?"), report
    assert (logout["status"], logout["method"], urlsplit(logout["url"]).path) == (200, "POST", "/logout/confirm"), report
    policy = directives(logout["csp"])
    assert sorted(policy["frame-src"]) == sorted([issuer_origin, urlsplit(slo)._replace(path="").geturl()]), report
    assert policy["frame-ancestors"] == ["'none'"] and logout["x_frame_options"] == "DENY", report
    # (Each logout's page is the one whose iframe this logout loaded.)
    [page] = [d for d in seen["documents"] if d["frame"] == "main" and d["url"] == logout["url"] and d["iframes"]
              and any(r["url"] == d["iframes"][0]["src"] for r in logout["requests"])]
    assert page["heading"] == "You are signed out" and page["next"] == next_url, report
    [frame] = page["iframes"]
    assert frame["src"].startswith(f"{issuer_origin}/saml/slo/post?m=") and frame["hidden"], report
    if next_url:
        [script] = page["scripts"]
        assert script["inline"] and [f"'nonce-{script['nonce']}'"] == policy["script-src"], report
    else:
        assert page["scripts"] == [], report

    # In the iframe: Authrim's page, 200, not stored, framable by Authrim's pages alone, its
    # script (by its nonce) submitting the one form to the SLO URL with the SAMLRequest the SP
    # received.
    [framed] = [r for r in logout["responses"] if r["url"] == frame["src"]]
    assert (framed["status"], framed["method"], framed["frame"], framed["navigation"]) == (200, "GET", "child", True), report
    assert framed["content_type"].startswith("text/html") and "no-store" in framed["cache_control"], report
    framed_policy = directives(framed["csp"])
    assert framed_policy["frame-ancestors"] == ["'self'"] and framed["x_frame_options"] == "SAMEORIGIN", report
    [submit] = [s for s in seen["submits"] if s["url"] == frame["src"]]
    assert submit["frame"] == "child" and (submit["action"], submit["method"]) == (slo, "post"), report
    [nonce_source] = framed_policy["script-src"]
    assert submit["by_script"] == {"inline": True, "nonce": nonce_source[len("'nonce-"):-1], "nonce_attribute": ""}, report
    # The browser's post: a navigation of the iframe (not of the page), once, the body the SP
    # got, answered (by the SP's page) rather than cut off.
    sent = logout["slo"]
    assert (sent["url"], sent["method"], sent["frame"], sent["navigation"]) == (slo, "POST", "child", True), report
    assert sent["content_type"] == "application/x-www-form-urlencoded" and sent["status"] == 200, report
    assert [(r["frame"], r["method"]) for r in logout["requests"] if r["url"] == slo] == [("child", "POST")], report
    assert (received.query, received.content_type) == ({}, "application/x-www-form-urlencoded"), report
    assert parse_qs(sent["body"]) == received.fields == {"SAMLRequest": [submit["fields"][0][1]]}, report
    assert [name for name, _ in submit["fields"]] == ["SAMLRequest"], report

    # The LogoutRequest, as the SP got it: signed in its XML by Authrim's metadata key (a
    # changed NameID breaks the signature), from Authrim to this SP's SLO URL, naming the
    # NameID and the session of that sign-in.
    value = received.fields["SAMLRequest"][0]
    xml = base64.b64decode(value).decode()
    assert sp.client.sec.correctly_signed_logout_request(xml, must=True), "pysaml2 does not verify the enveloped signature"
    with pytest.raises(Exception):
        sp.client.sec.correctly_signed_logout_request(xml.replace(issued["name_id"].text, "somebody-else"), must=True)
    request = sp.client.parse_logout_request(value, BINDING_HTTP_POST)
    assert request is not None, xml
    assert request.message.name_id.text == issued["name_id"].text, request.message
    assert request.message.name_id.format == NAMEID_FORMAT_PERSISTENT, request.message
    assert [s.text for s in request.message.session_index] == [issued["session_index"]], request.message
    assert (request.message.destination, request.message.issuer.text) == (slo, sp.idp), request.message


def directives(csp: str) -> dict[str, list[str]]:
    """A Content-Security-Policy header's directives, by name."""
    return {d.split()[0]: d.split()[1:] for d in csp.split(";") if d.strip()}
