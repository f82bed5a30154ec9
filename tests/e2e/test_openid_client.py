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

from pathlib import Path

import pytest

FLOW = Path(__file__).resolve().parent / "openid-client" / "flow.mjs"


def test_openid_client_session(authrim_server, alice, run_relying_party):
    if not (FLOW.parent / "node_modules" / "openid-client").is_dir():
        pytest.fail("needs `npm ci` in tests/e2e/openid-client (scripts/test.sh does it)",
                    pytrace=False)
    client_id, seen = run_relying_party("openid-client", ["node", str(FLOW)], FLOW.parent)

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
