"""Authrim's pages in a real browser: Debian's Chromium, headless, driven by Playwright.

``browser/logout.mjs`` (see its header) signs in and consents through the HTML pages, presses
Back after consenting, logs out with front-channel iframes and a way back to the client, and
logs out again through the confirmation page; this test registers the two clients, serves
the relying parties' pages (callbacks, front-channel logout pages, the post-logout page) from
two local HTTP servers on two ports (two origins), runs the program and checks what the
browser saw and what the relying parties' servers were asked for.

``browser/form_post.mjs`` does the same for ``response_mode=form_post``: the relying party's
redirect URI is an HTTP server here that records the form posts it receives, and the program
reports what the page was (headers, the form, the script that submitted it) with scripts on
and off.

Needs ``npm ci`` in ``browser/`` and Chromium at /usr/bin/chromium (``apt-get install
chromium``; ``scripts/test.sh`` does both). Skipped only where Chromium cannot be installed:
a machine without apt-get, or one where ``scripts/test.sh`` tried and failed (it then sets
AUTHRIM_E2E_NO_BROWSER to the reason). AUTHRIM_CHROMIUM names another Chromium binary.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import CHROMIUM, TIME_SCALE

PROGRAM = Path(__file__).resolve().parent / "browser" / "logout.mjs"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 90 * TIME_SCALE  # the whole program (it gives up by itself after 75 s; both times TIME_SCALE)
CSP_WORDS = ("content security policy", "content-security-policy")


def needs_browser():
    if not (PROGRAM.parent / "node_modules" / "playwright-core").is_dir():
        pytest.fail("needs `npm ci` in tests/e2e/browser (scripts/test.sh does it)", pytrace=False)
    if shutil.which("node") is None:
        pytest.fail("needs node (scripts/test.sh installs it)", pytrace=False)
    if os.access(CHROMIUM, os.X_OK):
        return
    reason = os.environ.get("AUTHRIM_E2E_NO_BROWSER")
    if reason:
        pytest.skip(f"Chromium could not be installed here: {reason}")
    if shutil.which("apt-get") is None:
        pytest.skip(f"no Chromium at {CHROMIUM} and no apt-get to install it with")
    pytest.fail(f"no Chromium at {CHROMIUM}: `apt-get install -y chromium` (scripts/test.sh does it)",
                pytrace=False)


@dataclass
class Hit:
    seq: int
    origin: str
    path: str
    query: dict
    fetch_dest: str | None


class RelyingPartyPages:
    """The relying parties' side, as the browser sees it: an HTTP server on 127.0.0.1 that
    answers every GET with a small HTML page and records what was asked for, in order."""

    _seq = 0
    _lock = threading.Lock()

    def __init__(self, hits: list[Hit]):
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlsplit(self.path)
                with RelyingPartyPages._lock:
                    RelyingPartyPages._seq += 1
                    hits.append(Hit(RelyingPartyPages._seq, outer.origin, url.path,
                                    {k: v[0] for k, v in parse_qs(url.query).items()},
                                    self.headers.get("Sec-Fetch-Dest")))
                body = f"<!doctype html><title>{url.path}</title><p>relying party: {url.path}</p>".encode()
                if url.path == "/favicon.ico":  # asked for by the browser; none, without an error
                    body = b""
                self.send_response(200 if body else 204)
                self.send_header("Cache-Control", "no-store")
                if body:
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # keep pytest's output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def relying_parties():
    hits: list[Hit] = []
    first, second = RelyingPartyPages(hits), RelyingPartyPages(hits)
    try:
        yield first, second, hits
    finally:
        first.close()
        second.close()


def verified_claims(token: str, jwks: dict) -> dict:
    return jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["RS256"]).claims


def csp_messages(messages: list[dict]) -> list[dict]:
    return [m for m in messages if any(w in m["text"].lower() for w in CSP_WORDS)]


def test_logout_pages_in_chromium(authrim_server, jwks, relying_parties, tmp_path):
    needs_browser()
    first, second, hits = relying_parties
    issuer = authrim_server.issuer
    username = authrim_server.unique("browser-user")
    password = "browser test password"
    user = authrim_server.create_user(username, password, {"name": "Browser User"})

    post_logout = first.origin + "/logged-out"
    clients = []
    for n, (rp, extra) in enumerate([(first, {"post_logout_redirect_uris": [post_logout]}), (second, {})], 1):
        client_id = authrim_server.unique(f"browser-rp{n}")
        reg = authrim_server.create_client(
            client_id=client_id,
            client_name=f"Browser RP {n}",
            redirect_uris=[rp.origin + "/cb"],
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code"],
            scope="openid",
            frontchannel_logout_uri=rp.origin + "/frontchannel-logout",
            frontchannel_logout_session_required=True,
            **extra,
        )
        clients.append({"client_id": client_id, "client_secret": reg["client_secret"],
                        "redirect_uri": rp.origin + "/cb"})

    env = dict(os.environ, ISSUER=issuer, USERNAME=username, PASSWORD=password,
               CLIENTS=json.dumps(clients), POST_LOGOUT_REDIRECT_URI=post_logout,
               CHROMIUM=CHROMIUM, ARTIFACTS_DIR=str(tmp_path), WAIT_MS=str(WAIT_MS))
    try:
        done = subprocess.run(["node", str(PROGRAM)], cwd=PROGRAM.parent, env=env,
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the browser program ran over {RUN_TIMEOUT_S}s:\n{exc.stderr}\n{exc.stdout}")
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    fc_hits = [h for h in hits if h.path == "/frontchannel-logout"]
    report = f"browser saw: {json.dumps(seen, indent=1)}\nrelying parties were asked for: {hits}"

    # 1. Login form, then the consent page by a redirect after the POST (a GET of its own).
    assert seen["login_page"] == {"status": 200, "heading": "Sign in"}, report
    consent = seen["consent_page"]
    assert "/consent?challenge=" in consent["url"], report
    assert (consent["status"], consent["method"]) == (200, "GET"), report
    assert consent["redirected_from"] == {"method": "POST", "path": "/login", "status": 303}, report
    assert consent["heading"] == "Allow Browser RP 1 access?", report
    assert seen["callback"]["has_code"] and seen["callback"]["state_ok"], report
    # Back from the client: the consent page's URL, fetched afresh by GET, no resubmission;
    # answered already, it says the request is complete and offers no Allow to press again.
    back = seen["back"]
    assert back["url"] == consent["url"], report
    assert (back["status"], back["method"]) == (200, "GET"), report
    assert back["heading"] == "This request is complete" and back["allow_button"] == 0, report
    assert "Browser RP 1" in back["said"] and "/account" in back["links"], report

    # The ID tokens: one session for both clients.
    id1 = verified_claims(seen["id_token_1"], jwks)
    id2 = verified_claims(seen["id_token_2"], jwks)
    sid = id1["sid"]
    assert sid and id2["sid"] == sid, report
    assert id1["sub"] == id2["sub"] == user["id"], report
    assert (id1["iss"], id1["aud"]) == (issuer, clients[0]["client_id"]), report
    assert seen["callback_2"] == {"has_code": True, "state_ok": True}, report

    # 2. Front-channel logout: both relying parties' pages framed by the browser, with iss
    # and sid, from two origins the page's CSP allows, then on to the post-logout URI.
    fc = seen["frontchannel_logout"]
    assert fc["status"] == 200, report
    assert f"frame-src {' '.join(sorted([first.origin, second.origin]))};" in fc["csp"], report
    # Its only script is inline, allowed by the nonce alone (no 'unsafe-inline' for scripts).
    assert "script-src 'nonce-" in fc["csp"] and "'unsafe-inline'" not in fc["csp"].split("script-src")[1].split(";")[0], report
    page = fc["document"]
    assert page is not None, report
    framed = [urlsplit(u) for u in page["iframes"]]
    assert sorted(f"{u.scheme}://{u.netloc}{u.path}" for u in framed) == sorted(
        [first.origin + "/frontchannel-logout", second.origin + "/frontchannel-logout"]), report
    assert all(parse_qs(u.query) == {"iss": [issuer], "sid": [sid]} for u in framed), report
    assert page["scripts"] == [{"inline": True, "nonce": True}], report
    assert page["next"] == post_logout + "?state=xyz", report
    first_logout = [h for h in fc_hits if h.query.get("sid") == sid]
    assert sorted(h.origin for h in first_logout) == sorted([first.origin, second.origin]), report
    for h in first_logout:
        assert h.query == {"iss": issuer, "sid": sid}, report
        assert h.fetch_dest == "iframe", report
    assert sorted(r["url"].split("?")[0] for r in fc["frame_responses"]) == sorted(
        [first.origin + "/frontchannel-logout", second.origin + "/frontchannel-logout"]), report
    assert all(r["status"] == 200 for r in fc["frame_responses"]), report
    assert fc["ended_at"] == post_logout + "?state=xyz", report
    landed = [h for h in hits if h.path == "/logged-out"]
    assert len(landed) == 1 and landed[0].query == {"state": "xyz"}, report
    assert landed[0].fetch_dest == "document", report
    # Moved on by the script once both frames had loaded: after them, and well before the
    # page's five-second fallback.
    assert landed[0].seq > max(h.seq for h in first_logout), report
    assert fc["elapsed_ms"] < 4500, report
    assert not csp_messages(fc["console"]), report

    # 3. Signed in again (consent remembered), then the confirmation page.
    assert seen["consent_asked_again"] is False, report
    assert seen["callback_3"] == {"has_code": True, "state_ok": True}, report
    sid3 = verified_claims(seen["id_token_3"], jwks)["sid"]
    assert sid3 and sid3 != sid, report
    confirm = seen["confirm_page"]
    assert (confirm["status"], confirm["heading"]) == (200, "Sign out of Authrim?"), report
    assert f"Signed in as {username}" in confirm["text"], report
    signed_out = seen["signed_out_page"]
    assert (signed_out["status"], signed_out["method"]) == (200, "POST"), report
    assert signed_out["heading"] == "You are signed out", report
    # A way on from there: "Sign in again" is a sign-in page.
    assert seen["sign_in_again"] == {"status": 200, "heading": "Sign in", "path": "/authorize"}, report
    # Only the first client was in this session: only its front-channel page, with the new sid.
    second_logout = [h for h in fc_hits if h.query.get("sid") == sid3]
    assert [h.origin for h in second_logout] == [first.origin], report
    assert len(fc_hits) == 3, report
    assert seen["silent_after"] == {"error": "login_required", "state_ok": True, "has_code": False}, report

    # Nothing anywhere broke a Content Security Policy, and no script failed.
    assert seen["csp_violations"] == [], report
    assert not csp_messages(seen["console"]), report
    assert seen["page_errors"] == [], report


# --------------------------------------------------------------------------
# response_mode=form_post
# --------------------------------------------------------------------------

FORM_POST_PROGRAM = PROGRAM.parent / "form_post.mjs"


@dataclass
class Received:
    method: str
    path: str
    query: dict
    content_type: str | None
    fields: dict  # name -> list of values, as posted


class FormPostReceiver:
    """The relying party's redirect URI: an HTTP server on 127.0.0.1 that takes the form
    posts (and answers anything else), records every request, and answers each with a small
    HTML page (or, when `respond` is set and gives one for a request, that page)."""

    def __init__(self):
        self.received: list[Received] = []
        received = self.received
        self.respond = None  # (method, path, fields) -> an HTML page as bytes, or None
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, fields: dict):
                url = urlsplit(self.path)
                received.append(Received(self.command, url.path, parse_qs(url.query),
                                         self.headers.get("Content-Type"), fields))
                if url.path == "/favicon.ico":
                    self.send_response(204)
                    self.end_headers()
                    return
                page = receiver.respond(self.command, url.path, fields) if receiver.respond else None
                body = page or b"<!doctype html><title>callback</title><h1>relying party: received</h1>"
                self.send_response(200)
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                self._answer({})

            def do_POST(self):
                length = min(int(self.headers.get("Content-Length") or 0), 65536)
                body = self.rfile.read(length).decode("utf-8", "replace")
                self._answer(parse_qs(body, keep_blank_values=True))

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def form_post_receiver():
    receiver = FormPostReceiver()
    try:
        yield receiver
    finally:
        receiver.close()


def _s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_form_post_response_mode_in_chromium(authrim_server, discovery, jwks, alice,
                                             form_post_receiver, tmp_path):
    """response_mode=form_post in Chromium: the page's nonce-allowed script submits the form
    under its CSP (no violation, nothing else runs), the relying party receives code, state
    and iss by POST (never in a URL), and the code redeems at /token; with scripts off the
    page stays until its <noscript> Continue button is pressed, for an error
    (prompt=none → login_required) as for a code."""
    needs_browser()
    issuer = authrim_server.issuer
    assert "form_post" in discovery.get("response_modes_supported", []), discovery
    rp = form_post_receiver
    callback = rp.origin + "/cb"
    client_id = authrim_server.unique("browser-form-post")
    reg = authrim_server.create_client(
        client_id=client_id, client_name="Form Post RP", redirect_uris=[callback],
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
        scope="openid email")

    requests_made = {}

    def url(name: str, **extra) -> str:
        verifier = secrets.token_urlsafe(48)
        params = {"response_type": "code", "response_mode": "form_post", "client_id": client_id,
                  "redirect_uri": callback, "scope": "openid email",
                  "state": secrets.token_urlsafe(16), "nonce": secrets.token_urlsafe(16),
                  "code_challenge": _s256(verifier), "code_challenge_method": "S256", **extra}
        requests_made[name] = {**params, "verifier": verifier}
        return discovery["authorization_endpoint"] + "?" + urlencode(params)

    urls = {"scripted": url("scripted"), "again": url("again"),
            "silent_noscript": url("silent_noscript", prompt="none"), "noscript": url("noscript")}
    env = dict(os.environ, ISSUER=issuer, USERNAME="alice", PASSWORD=alice["password"],
               CALLBACK=callback, URLS=json.dumps(urls), CHROMIUM=CHROMIUM,
               ARTIFACTS_DIR=str(tmp_path), WAIT_MS=str(WAIT_MS))
    try:
        done = subprocess.run(["node", str(FORM_POST_PROGRAM)], cwd=FORM_POST_PROGRAM.parent,
                              env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the browser program ran over {RUN_TIMEOUT_S}s:\n{exc.stderr}\n{exc.stdout}")
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    posts = [r for r in rp.received if r.method == "POST"]
    report = (f"browser saw: {json.dumps(seen, indent=1)}\n"
              f"the relying party received: {rp.received}")

    # Everything the relying party received: four form posts to its redirect URI, in order,
    # and nothing else but the page loads those posts led to.
    assert [(r.method, r.path) for r in posts] == [("POST", "/cb")] * 4, report
    assert all(r.content_type == "application/x-www-form-urlencoded" for r in posts), report
    assert all(r.query == {} for r in posts), report
    assert not [r for r in rp.received if r.method != "POST" and r.path != "/favicon.ico"], report
    by_name = dict(zip(["scripted", "again", "silent_noscript", "noscript"], posts))

    def check_page(fp: dict, method: str) -> str:
        """The form_post page as served: 200 HTML, not cached, and a CSP that lets one
        script run, by its nonce (returned), and nothing else."""
        assert (fp["status"], fp["method"]) == (200, method), report
        assert fp["content_type"].startswith("text/html"), report
        assert "no-store" in fp["cache_control"], report
        directives = {d.split()[0]: d.split()[1:] for d in fp["csp"].split(";") if d.strip()}
        assert directives["default-src"] == ["'none'"], report
        [nonce_source] = directives["script-src"]
        assert nonce_source.startswith("'nonce-") and nonce_source.endswith("'"), report
        assert directives["frame-ancestors"] == ["'none'"], report
        return nonce_source[len("'nonce-"):-1]

    def check_code(name: str) -> dict:
        """The relying party got exactly code, state, iss and session_state (Session Management 1.0); the code redeems once."""
        req = requests_made[name]
        fields = by_name[name].fields
        assert set(fields) == {"code", "state", "iss", "session_state"}, (name, report)
        assert all(len(v) == 1 for v in fields.values()), (name, report)
        assert fields["state"] == [req["state"]] and fields["iss"] == [issuer], (name, report)
        code = fields["code"][0]
        token_req = {"grant_type": "authorization_code", "code": code, "redirect_uri": callback,
                     "code_verifier": req["verifier"]}
        resp = requests.post(discovery["token_endpoint"], data=token_req, timeout=10,
                             auth=(client_id, reg["client_secret"]))
        assert resp.status_code == 200, (name, resp.status_code, resp.text)
        token = resp.json()
        assert token["scope"] == "openid email", token
        claims = verified_claims(token["id_token"], jwks)
        assert (claims["iss"], claims["aud"], claims["sub"]) == (issuer, client_id, alice["id"]), claims
        assert claims["nonce"] == req["nonce"], claims
        again = requests.post(discovery["token_endpoint"], data=token_req, timeout=10,
                              auth=(client_id, reg["client_secret"]))
        assert again.status_code == 400 and again.json()["error"] == "invalid_grant", again.text
        return claims

    # 1. Scripts on: the consent POST answered with the page, and its script submitted it.
    scripted = seen["scripted"]
    assert seen["login_page"]["status"] == 200, report
    nonce = check_page(scripted["form_post"], "POST")
    assert urlsplit(scripted["form_post"]["url"]).path == "/consent", report
    # The form was submitted by the page's script, with what the relying party then received.
    [submit] = scripted["submits"]
    # The script is inline and carries the CSP's nonce (hidden from the DOM, as browsers do).
    assert submit["by_script"] == {"inline": True, "nonce": nonce, "nonce_attribute": ""}, report
    doc = submit["document"]
    assert doc["heading"] == "Returning to the application", report
    [form] = doc["forms"]
    assert (form["action"], form["method"]) == (callback, "post"), report
    assert sorted(f[0] for f in form["fields"]) == ["code", "iss", "session_state", "state"], report
    assert all(f[1] == "hidden" for f in form["fields"]), report
    # That one script only; the Continue button is inside <noscript> (so, with scripts on,
    # not a button at all).
    assert doc["scripts"] == [{"inline": True, "nonce": nonce}], report
    assert doc["noscripts"] == 1 and doc["buttons"] == 0, report
    assert (submit["action"], submit["method"]) == (callback, "post"), report
    assert {k: [v] for k, v in submit["fields"]} == by_name["scripted"].fields, report
    cb = scripted["callback"]
    assert (cb["method"], cb["navigation"], cb["main_frame"]) == ("POST", True, True), report
    assert cb["url"] == callback, report
    assert cb["content_type"] == "application/x-www-form-urlencoded", report
    assert parse_qs(cb["body"]) == by_name["scripted"].fields, report
    assert scripted["landed"] == {"url": callback, "heading": "relying party: received"}, report
    assert scripted["ms_to_post"] < 5000, report
    first = check_code("scripted")

    # Again, consent remembered: GET /authorize answers the page, submitted the same way.
    again = seen["again"]
    nonce2 = check_page(again["form_post"], "GET")
    assert nonce2 != nonce, report  # a nonce per response
    assert urlsplit(again["form_post"]["url"]).path == "/authorize", report
    [submit] = again["submits"]
    assert submit["by_script"] == {"inline": True, "nonce": nonce2, "nonce_attribute": ""}, report
    assert {k: [v] for k, v in submit["fields"]} == by_name["again"].fields, report
    assert parse_qs(again["callback"]["body"]) == by_name["again"].fields, report
    assert check_code("again")["sid"] == first["sid"], report

    # The codes never appeared in a URL the browser asked for.
    codes = [by_name[n].fields["code"][0] for n in ("scripted", "again", "noscript")]
    for r in seen["requests"] + seen["noscript_requests"]:
        assert not any(c in r["url"] for c in codes), (r, report)

    # 2. Scripts off: the page stays until Continue; an error travels the same way.
    for name, method, path in (("silent_noscript", "GET", "/authorize"),
                               ("noscript", "POST", "/login")):
        step = seen[name]
        check_page(step["form_post"], method)
        assert urlsplit(step["form_post"]["url"]).path == path, report
        assert step["stayed"]["to_client"] == 0, report
        assert step["stayed"]["url"] == step["form_post"]["url"], report
        assert step["shown"]["buttons"] == 1 and step["shown"]["visible"] is True, report
        assert step["callback"]["method"] == "POST" and step["callback"]["url"] == callback, report
        assert parse_qs(step["callback"]["body"]) == by_name[name].fields, report
        assert step["landed"] == callback, report
    silent = by_name["silent_noscript"].fields
    assert silent.get("error") == ["login_required"], report
    assert silent.get("state") == [requests_made["silent_noscript"]["state"]], report
    assert silent.get("iss") == [issuer] and "code" not in silent, report
    check_code("noscript")

    # No Content Security Policy was broken, and no script failed.
    assert seen["csp_violations"] == [], report
    assert not csp_messages(seen["console"]), report
    assert seen["page_errors"] == [], report
