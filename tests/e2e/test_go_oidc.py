"""Authrim driven by a third third-party client, Go's go-oidc (coreos) with x/oauth2.

``go-oidc/main.go`` runs one relying party's session with the libraries (see its header) and
prints what it saw; this test registers the client, runs it (``go run``, modules from the Go
module proxy, pinned in ``go-oidc/go.mod`` and ``go.sum``) against the session's server and
checks the outcome. go-oidc itself refuses a discovery document for another issuer, and an ID
token whose signature, issuer, audience or expiry does not verify.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

PROGRAM = Path(__file__).resolve().parent / "go-oidc"
REDIRECT_URI = "http://127.0.0.1:9999/cb"


def test_go_oidc_session(authrim_server, alice):
    go = shutil.which("go")
    if go is None:
        pytest.fail("needs Go (scripts/test.sh needs it for k6 too)", pytrace=False)
    client_id = authrim_server.unique("go-oidc")
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
    run = subprocess.run([go, "run", "."], cwd=PROGRAM, env=env, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, f"go-oidc failed:\n{run.stderr}\n{run.stdout}"
    seen = json.loads(run.stdout.strip().splitlines()[-1])

    assert seen["id_token"] == {"sub": alice["id"], "iss": authrim_server.issuer,
                                "aud": [client_id]}, seen
    assert seen["tampered_refused"] is True, seen
    assert seen["userinfo"] == {"sub": alice["id"], "email": "alice@example.com",
                                "email_verified": True, "name": "Alice Liddell"}, seen
    assert seen["refreshed"] == {"new_access_token": True, "new_refresh_token": True,
                                 "id_token_sub": alice["id"]}, seen
