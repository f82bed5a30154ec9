"""Authrim driven by a second third-party client, panva's openid-client for Node.js.

``openid-client/flow.mjs`` runs one relying party's whole session with the library (see its
header) and prints what it saw; this test registers the client, runs it against the
session's server and checks the outcome. The library itself refuses, with an error and a
non-zero exit, anything it finds wrong on the way: a discovery document whose issuer is not
the one asked for, a state or nonce mismatch, an ID token whose claims or signature do not
verify, a userinfo ``sub`` that differs from the ID token's.

Needs Node.js 20 or newer with the package installed (``npm ci`` in ``openid-client/``,
which ``scripts/test.sh`` does).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

FLOW = Path(__file__).resolve().parent / "openid-client" / "flow.mjs"
REDIRECT_URI = "http://127.0.0.1:9999/cb"


def test_openid_client_session(authrim_server, alice):
    node = shutil.which("node")
    if node is None or not (FLOW.parent / "node_modules" / "openid-client").is_dir():
        pytest.fail("needs node and `npm ci` in tests/e2e/openid-client (scripts/test.sh does both)",
                    pytrace=False)
    client_id = authrim_server.unique("openid-client")
    reg = authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code", "refresh_token"],
        scope="openid profile email offline_access",
    )
    env = dict(os.environ, ISSUER=authrim_server.issuer, CLIENT_ID=client_id,
               CLIENT_SECRET=reg["client_secret"], REDIRECT_URI=REDIRECT_URI,
               USERNAME="alice", PASSWORD=alice["password"])
    run = subprocess.run([node, str(FLOW)], env=env, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, f"openid-client failed:\n{run.stderr}\n{run.stdout}"
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["id_token"]["sub"] == alice["id"], seen
    assert seen["id_token"]["iss"] == authrim_server.issuer, seen
    assert seen["id_token"]["aud"] == client_id, seen
    assert seen["id_token"]["at_hash"], seen
    assert seen["userinfo"] == {"sub": alice["id"], "email": "alice@example.com",
                                "name": "Alice Liddell"}, seen
    assert seen["refreshed"] == {"new_refresh_token": True, "id_token_sub": alice["id"]}, seen
    assert seen["introspection"] == {"active": True, "sub": alice["id"], "client_id": client_id}, seen
    # Revoking the refresh token ended the grant: its access tokens and the token itself.
    assert seen["after_revocation"] == {
        "active": False, "refresh_error": {"error": "invalid_grant", "status": 400}}, seen
    assert seen["silent"] == {"state_ok": True, "has_code": True}, seen
