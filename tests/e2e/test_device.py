"""The device authorization grant (RFC 8628) with a third-party client: panva's openid-client
polls as the device (``openid-client/device.mjs``) while this test plays the user's browser
on the verification page over HTTP: the verification URI, Authrim's own sign-in, the page
that shows the application and the code, and the answer.

The server is one of the test's own, with a one-second polling interval, so that the
library's waits (it sleeps the interval before every poll) stay short.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess

import pytest
import requests

from conftest import ALICE_PASSWORD, HTTP_TIMEOUT_S
from test_authlib import find_form
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
    assert finish(proc) == {"error": "access_denied", "status": 400}
