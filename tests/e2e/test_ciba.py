"""CIBA (OpenID Connect Client-Initiated Backchannel Authentication Core 1.0) with a
third-party client: panva's openid-client asks for a sign-in by ``login_hint`` with a binding
message and polls (``openid-client/ciba.mjs``) while Chromium plays the user on the account
page, the authentication device (``browser/ciba.mjs``): signs in, finds the request with the
application's name and the message, approves or denies it. A signed authentication request
(CIBA Core §7.1.1) is made with joserfc, and the ID token checked with it.

The server is one of the test's own, with a one-second polling interval, so that the
library's waits (it sleeps the interval before every poll) stay short.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import ECKey, KeySet

from conftest import ALICE_PASSWORD, HTTP_TIMEOUT_S
from test_browser import CHROMIUM, needs_browser
from test_openid_client import FLOW, needs_npm_ci

CLIENT_PROGRAM = FLOW.parent / "ciba.mjs"
BROWSER_PROGRAM = Path(__file__).parent / "browser" / "ciba.mjs"
GRANT = "urn:openid:params:grant-type:ciba"


@pytest.fixture
def ciba_server(start_authrim):
    server = start_authrim("ciba", {"AUTHRIM_CIBA_POLL_INTERVAL": "1"})
    user = server.create_user("alice", ALICE_PASSWORD, {"email": "alice@example.com", "name": "Alice Liddell"})
    client = server.create_client(client_id=server.unique("callcentre"), client_name="Call Centre",
                                  token_endpoint_auth_method="client_secret_basic", grant_types=[GRANT, "refresh_token"],
                                  redirect_uris=[], backchannel_token_delivery_mode="poll",
                                  scope="openid profile email offline_access")
    return server, user, client


def start_client(server, client: dict, message: str) -> tuple[subprocess.Popen, dict]:
    """Start ciba.mjs; returns it running (polling) and its backchannel authentication response."""
    needs_npm_ci()
    if shutil.which("node") is None:
        pytest.fail("needs node", pytrace=False)
    env = dict(os.environ, ISSUER=server.issuer, CLIENT_ID=client["client_id"], CLIENT_SECRET=client["client_secret"],
               SCOPE="openid profile email offline_access", LOGIN_HINT="alice", BINDING_MESSAGE=message)
    proc = subprocess.Popen(["node", str(CLIENT_PROGRAM)], cwd=CLIENT_PROGRAM.parent, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = proc.stdout.readline()
    if not line:
        proc.wait(timeout=10)
        pytest.fail(f"ciba.mjs printed nothing:\n{proc.stderr.read()}")
    return proc, json.loads(line)["request"]


def finish(proc: subprocess.Popen) -> dict:
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, f"ciba.mjs failed:\n{err}\n{out}"
    return json.loads(out.strip().splitlines()[-1])


def user_answers(server, message: str, decision: str, tmp_path: Path) -> dict:
    """Chromium: the account page, signed in as alice, answers the request with ``message``."""
    needs_browser()
    env = dict(os.environ, ISSUER=server.issuer, USERNAME="alice", PASSWORD=ALICE_PASSWORD, BINDING_MESSAGE=message,
               DECISION=decision, CHROMIUM=CHROMIUM, ARTIFACTS_DIR=str(tmp_path))
    done = subprocess.run(["node", str(BROWSER_PROGRAM)], cwd=BROWSER_PROGRAM.parent, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_openid_client_ciba_poll_approved_on_the_account_page(ciba_server, tmp_path):
    server, alice, client = ciba_server
    proc, request = start_client(server, client, "W4SCT")
    try:
        assert request["auth_req_id"] and request["expires_in"] == 300 and request["interval"] == 1, request
        seen = user_answers(server, "W4SCT", "approve", tmp_path)
        assert seen["heading"] == "Sign-in requests", seen
        assert seen["listed"]["all"] == 1 and seen["listed"]["matching"] == 1, seen
        assert "Call Centre" in seen["listed"]["text"] and "Message: W4SCT" in seen["listed"]["text"], seen
        assert "was approved" in seen["notice"] and seen["left"] == 0, seen
    except BaseException:
        proc.kill()
        raise
    got = finish(proc)
    assert got.get("token_type", "").lower() == "bearer" and got["refresh_token"] is True, got
    claims = got["id_token"]
    assert claims["sub"] == alice["id"] and claims["aud"] == client["client_id"] and claims["iss"] == server.issuer, got
    assert claims["auth_time"] and claims["acr"] == "urn:authrim:acr:password" and "nonce" not in claims, got
    assert got["userinfo"]["email"] == "alice@example.com", got
    assert got["waited_ms"] >= 1000, got


def test_openid_client_ciba_poll_denied_on_the_account_page(ciba_server, tmp_path):
    server, _, client = ciba_server
    proc, _ = start_client(server, client, "NO-THANKS")
    try:
        seen = user_answers(server, "NO-THANKS", "deny", tmp_path)
        assert "was denied" in seen["notice"] and seen["left"] == 0, seen
    except BaseException:
        proc.kill()
        raise
    assert finish(proc) == {"error": "access_denied", "status": 400}


def test_a_signed_request_made_with_joserfc_is_approved_and_redeemed(ciba_server, tmp_path):
    server, alice, _ = ciba_server
    key = ECKey.generate_key("P-256", parameters={"kid": "bank-1", "use": "sig"})
    client = server.create_client(client_id=server.unique("bank"), client_name="Bank",
                                  token_endpoint_auth_method="client_secret_basic", grant_types=[GRANT], redirect_uris=[],
                                  backchannel_token_delivery_mode="poll", scope="openid profile",
                                  jwks={"keys": [key.as_dict(private=False)]},
                                  backchannel_authentication_request_signing_alg="ES256")
    meta = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    assert "ES256" in meta["backchannel_authentication_request_signing_alg_values_supported"], meta
    auth = (client["client_id"], client["client_secret"])
    backchannel = meta["backchannel_authentication_endpoint"]

    unsigned = requests.post(backchannel, data={"scope": "openid", "login_hint": "alice"}, auth=auth, timeout=HTTP_TIMEOUT_S)
    assert unsigned.status_code == 400 and unsigned.json()["error"] == "invalid_request", unsigned.text
    now = int(time.time())
    claims = {"iss": client["client_id"], "aud": server.issuer, "iat": now, "nbf": now, "exp": now + 300,
              "jti": secrets.token_urlsafe(16), "scope": "openid profile", "login_hint": "alice",
              "binding_message": "SIGNED-7", "requested_expiry": 120}
    signed = jwt.encode({"alg": "ES256", "kid": "bank-1"}, claims, key)
    answer = requests.post(backchannel, data={"request": signed}, auth=auth, timeout=HTTP_TIMEOUT_S)
    assert answer.status_code == 200 and answer.json()["expires_in"] == 120, answer.text
    replay = requests.post(backchannel, data={"request": signed}, auth=auth, timeout=HTTP_TIMEOUT_S)
    assert replay.status_code == 400 and "jti" in replay.json()["error_description"], replay.text

    seen = user_answers(server, "SIGNED-7", "approve", tmp_path)
    assert "Bank" in seen["listed"]["text"] and "was approved" in seen["notice"], seen
    form = {"grant_type": GRANT, "auth_req_id": answer.json()["auth_req_id"]}
    for _ in range(10):
        tokens = requests.post(meta["token_endpoint"], data=form, auth=auth, timeout=HTTP_TIMEOUT_S)
        if tokens.status_code != 400 or tokens.json()["error"] not in ("authorization_pending", "slow_down"):
            break
        time.sleep(1.2)
    assert tokens.status_code == 200, tokens.text
    keys = KeySet.import_key_set(requests.get(meta["jwks_uri"], timeout=HTTP_TIMEOUT_S).json())
    id_token = jwt.decode(tokens.json()["id_token"], keys).claims
    assert id_token["sub"] == alice["id"] and id_token["aud"] == client["client_id"] and id_token["iss"] == server.issuer, id_token
