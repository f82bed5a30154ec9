"""The device authorization grant (RFC 8628) with a third-party client: panva's openid-client
polls as the device (``openid-client/device.mjs``) while this test plays the user's browser
on the verification page over HTTP: the verification URI, Authrim's own sign-in, the page
that shows the application and the code, and the answer. ``test_device_grant_in_chromium``
has Chromium (``browser/device.mjs``) play the user instead, and type wrong codes until the
page refuses any more.

The server is one of the test's own, with a one-second polling interval, so that the
library's waits (it sleeps the interval before every poll) stay short.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from urllib.parse import urlsplit

import pytest
import requests

from conftest import ALICE_PASSWORD, HTTP_TIMEOUT_S, REPO_ROOT, TIME_SCALE, run_browser_program
from test_authlib import find_form
from test_browser import WAIT_MS, needs_browser
from test_openid_client import FLOW, needs_npm_ci

DEVICE = FLOW.parent / "device.mjs"
GRANT = "urn:ietf:params:oauth:grant-type:device_code"


@pytest.fixture
def device_server(start_authrim):
    server = start_authrim("device", {"AUTHRIM_DEVICE_POLL_INTERVAL": "1"})
    user = server.create_user("alice", ALICE_PASSWORD, {"email": "alice@example.com", "name": "Alice Liddell"})
    return server, user


def start_device(server, client_id: str, secret: str | None, scope: str, dpop: bool) -> tuple[subprocess.Popen, dict]:
    """Start device.mjs; returns it running (polling) and its device authorization response."""
    needs_npm_ci()
    if shutil.which("node") is None:
        pytest.fail("needs node", pytrace=False)
    env = dict(os.environ, ISSUER=server.issuer, CLIENT_ID=client_id, CLIENT_SECRET=secret or "",
               SCOPE=scope, DPOP="1" if dpop else "")
    proc = subprocess.Popen(["node", str(DEVICE)], cwd=DEVICE.parent, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        pytest.fail(f"device.mjs printed nothing:\n{proc.stderr.read()}")
    return proc, json.loads(line)["device"]


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, f"device.mjs failed:\n{err}\n{out}"
    return json.loads(out.strip().splitlines()[-1])


def answer(server, uri: str, decision: str) -> requests.Response:
    """The user: opens ``uri``, signs in (the page asks first), checks the code, answers."""
    browser = requests.Session()
    page = browser.get(uri, timeout=HTTP_TIMEOUT_S)
    assert page.status_code == 200, page.text
    login = find_form(page.text, "/login")
    page = browser.post(server.url("/login"), timeout=HTTP_TIMEOUT_S, data={
        "challenge": login.inputs["challenge"]["value"], "username": "alice", "password": ALICE_PASSWORD})
    # Redirected through the page's callback back to the verification URI with the code.
    assert page.status_code == 200, page.text
    assert page.url.startswith(server.url("/device?user_code=")), page.url
    form = find_form(page.text, "/device/decide")
    return browser.post(server.url("/device/decide"), timeout=HTTP_TIMEOUT_S,
                        data={"state": form.inputs["state"]["value"], "decision": decision})


def test_openid_client_device_flow_public_client_with_dpop(device_server):
    server, alice = device_server
    client = server.create_client(client_id=server.unique("tv"), token_endpoint_auth_method="none",
                                  grant_types=[GRANT, "refresh_token"], redirect_uris=[],
                                  scope="openid profile email offline_access")
    proc, device = start_device(server, client["client_id"], None, "openid profile email offline_access", dpop=True)
    try:
        assert re.fullmatch(r"[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}", device["user_code"]), device
        assert device["verification_uri"] == server.url("/device"), device
        assert device["interval"] == 1 and device["expires_in"] == 600, device
        # The user types the code in lower case, without the dash, on the bare verification URI.
        browser = requests.Session()
        page = browser.get(device["verification_uri"], timeout=HTTP_TIMEOUT_S)
        login = find_form(page.text, "/login")
        page = browser.post(server.url("/login"), timeout=HTTP_TIMEOUT_S, data={
            "challenge": login.inputs["challenge"]["value"], "username": "alice", "password": ALICE_PASSWORD})
        entry = find_form(page.text, "/device")
        page = browser.post(server.url("/device"), timeout=HTTP_TIMEOUT_S, data={
            "csrf": entry.inputs["csrf"]["value"], "user_code": device["user_code"].replace("-", "").lower()})
        assert page.status_code == 200 and device["user_code"] in page.text, page.text
        form = find_form(page.text, "/device/decide")
        done = browser.post(server.url("/device/decide"), timeout=HTTP_TIMEOUT_S,
                            data={"state": form.inputs["state"]["value"], "decision": "allow"})
        assert done.status_code == 200 and "Device connected" in done.text, done.text
    except BaseException:
        proc.kill()
        raise
    seen = finish(proc)
    assert seen.get("token_type", "").lower() == "dpop", seen
    assert seen["refresh_token"] is True, seen
    claims = seen["id_token"]
    assert claims["sub"] == alice["id"] and claims["aud"] == client["client_id"], seen
    assert claims["iss"] == server.issuer and claims["amr"] == ["pwd"] and claims["auth_time"], seen
    assert seen["userinfo"]["email"] == "alice@example.com", seen
    # The library waited for the user, polling at the interval (no slow_down needed).
    assert seen["waited_ms"] >= 1000, seen


def test_openid_client_device_flow_denied(device_server):
    server, _ = device_server
    client = server.create_client(client_id=server.unique("cli"), token_endpoint_auth_method="client_secret_basic",
                                  grant_types=[GRANT], redirect_uris=[], scope="openid")
    proc, device = start_device(server, client["client_id"], client["client_secret"], "openid", dpop=False)
    try:
        done = answer(server, device["verification_uri_complete"], "deny")
        assert done.status_code == 200 and "Request denied" in done.text, done.text
    except BaseException:
        proc.kill()
        raise
    seen = finish(proc)
    assert (seen["error"], seen["status"]) == ("access_denied", 400), seen


CHROMIUM_PROGRAM = REPO_ROOT / "tests" / "e2e" / "browser" / "device.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "device"
MAX_FAILURES = 3
# Of a user code's shape (eight letters of the server's alphabet), so each is looked up and
# counted; the chance one is a waiting request's code is nil (two waiting, 20^8 codes).
WRONG_CODES = ["BBBB-BBBB", "CCCC-CCCC", "DDDD-DDDD", "FFFF-FFFF"]


def test_device_grant_in_chromium(start_authrim, tmp_path):
    """Two devices (openid-client, a confidential client named "Living Room TV") wait while
    Chromium opens each one's ``verification_uri_complete``, signs in and sees the application
    and the code: the first is allowed and its device gets tokens, the second denied and its
    device gets ``access_denied``; each kept to the one-second interval. Then, on the bare
    verification URI, wrong codes are "not recognised" until the limit, and the next is refused
    as too many. Screenshots go to ``target/e2e-artifacts/device/``."""
    needs_browser()
    server = start_authrim("device-chromium", {"AUTHRIM_DEVICE_POLL_INTERVAL": "1",
                                               "AUTHRIM_DEVICE_USER_CODE_MAX_FAILURES": str(MAX_FAILURES)})
    alice = server.create_user("alice", ALICE_PASSWORD, {"email": "alice@example.com", "name": "Alice Liddell"})
    client = server.create_client(client_id="tv", client_name="Living Room TV", token_endpoint_auth_method="client_secret_basic",
                                  grant_types=[GRANT], redirect_uris=[], scope="openid email")
    devices = []
    try:
        for _ in ("allow", "deny"):
            devices.append(start_device(server, "tv", client["client_secret"], "openid email", dpop=False))
        (_, allowed), (_, denied) = devices
        walks = [{"name": "allow", "kind": "allow", "uri": allowed["verification_uri_complete"]},
                 {"name": "deny", "kind": "deny", "uri": denied["verification_uri_complete"]},
                 {"name": "guess", "kind": "guess", "uri": allowed["verification_uri"], "codes": WRONG_CODES}]
        env = dict(WALKS=json.dumps(walks), USERNAME="alice", PASSWORD=ALICE_PASSWORD, WAIT_MS=str(WAIT_MS))
        seen = run_browser_program(CHROMIUM_PROGRAM, env, tmp_path, ARTIFACTS, timeout=120 * TIME_SCALE,
                                   stale=[*ARTIFACTS.glob("*.png"), *ARTIFACTS.glob("failure.*")])
    except BaseException:
        for proc, _ in devices:
            proc.kill()
        raise
    got_allowed, got_denied = (finish(proc) for proc, _ in devices)
    report = json.dumps({"browser": seen, "allowed": got_allowed, "denied": got_denied}, indent=1)
    assert seen["seen"]["page_errors"] == [], report
    assert seen["seen"]["screenshots"] == ["allow-01-asked.png", "allow-02-answered.png", "deny-01-asked.png",
                                           "deny-02-answered.png", *(f"guess-0{n}-tried.png" for n in range(1, 5))], report
    for name in seen["seen"]["screenshots"]:
        assert (ARTIFACTS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name

    allow, deny, guess = seen["walks"]
    # The page that asks names the application, shows the device's code and what it wants.
    for walk, device in ((allow, allowed), (deny, denied)):
        asked = walk["asked"]
        assert (asked["status"], asked["path"], asked["heading"], asked["alert"]) == (200, "/device", "Connect Living Room TV?", None), report
        assert asked["user_code"] == device["user_code"], report
        assert asked["buttons"] == ["Allow", "Deny"] and len(asked["scopes"]) == 2, report
    assert (allow["answered"]["status"], allow["answered"]["heading"]) == (200, "Device connected"), report
    assert "Living Room TV is allowed" in allow["answered"]["status_text"], report
    assert (deny["answered"]["status"], deny["answered"]["heading"]) == (200, "Request denied"), report

    # The allowed device got Alice's tokens; the denied one access_denied.
    assert got_allowed["id_token"]["sub"] == alice["id"] and got_allowed["id_token"]["aud"] == "tv", report
    assert got_allowed["userinfo"]["email"] == "alice@example.com", report
    assert (got_denied["error"], got_denied["status"]) == ("access_denied", 400), report
    # Both polled while the user was on the page (authorization_pending), never faster than
    # the interval (so never told slow_down), and stopped at the answer.
    for got, last in ((got_allowed, (200, None)), (got_denied, (400, "access_denied"))):
        polls = got["polls"]
        assert len(polls) >= 2, report
        assert [(p["status"], p["error"]) for p in polls[:-1]] == [(400, "authorization_pending")] * (len(polls) - 1), report
        assert (polls[-1]["status"], polls[-1]["error"]) == last, report
        gaps = [b["at"] - a["at"] for a, b in zip(polls, polls[1:])]
        assert min(gaps) >= 1000, (gaps, report)

    # Wrong codes: "not recognised" up to the limit, then too many (429), on the entry form.
    assert (guess["entry"]["status"], guess["entry"]["heading"], guess["entry"]["alert"]) == (200, "Connect a device", None), report
    tries = [(t["status"], t["alert"]) for t in guess["tries"]]
    unknown = "That code is not recognised, or has expired. Check it against your device's screen, or start again on the device."
    too_many = "Too many codes that did not match. Wait a few minutes and try again."
    assert tries == [(400, unknown)] * MAX_FAILURES + [(429, too_many)], report
    assert all(t["heading"] == "Connect a device" for t in guess["tries"]), report
    assert [(urlsplit(r["url"]).path, r["status"]) for r in seen["seen"]["error_responses"]] == [("/device", 400)] * MAX_FAILURES + [("/device", 429)], report
