"""Authrim driven by a third third-party client, Go's go-oidc (coreos) with x/oauth2.

``go-oidc/main.go`` runs one relying party's session with the libraries (see its header) and
prints what it saw; this test registers the client, runs it (``go run``, modules from the Go
module proxy, pinned in ``go-oidc/go.mod`` and ``go.sum``) against the session's server and
checks the outcome. go-oidc itself refuses a discovery document for another issuer, and an ID
token whose signature, issuer, audience or expiry does not verify.
"""

from __future__ import annotations

from pathlib import Path

from conftest import assert_refused_by_other_issuer

PROGRAM = Path(__file__).resolve().parent / "go-oidc"


def test_go_oidc_session(issuer, run_relying_party):
    """At the default issuer and at a tenant's: go-oidc discovers it and verifies its tokens
    with its keys; the other issuer of the deployment refuses them."""
    alice = issuer.alice
    # The first run downloads the modules and builds: minutes, not seconds.
    client_id, seen = run_relying_party("go-oidc", ["go", "run", "."], PROGRAM, timeout=300, issuer=issuer)

    assert seen["id_token"] == {"sub": alice["id"], "iss": issuer.server.issuer,
                                "aud": [client_id]}, seen
    assert_refused_by_other_issuer(issuer, seen["tokens"]["access_token"], seen["tokens"]["id_token"])
    assert seen["tampered_refused"] is True, seen
    assert seen["userinfo"] == {"sub": alice["id"], "email": "alice@example.com",
                                "email_verified": True, "name": "Alice Liddell"}, seen
    assert seen["refreshed"] == {"new_access_token": True, "new_refresh_token": True,
                                 "id_token_sub": alice["id"]}, seen
