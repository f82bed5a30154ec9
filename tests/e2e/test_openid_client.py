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
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey

from test_client_auth import (
    ASSERTION_TYPE,
    MAX_LIFETIME_S,
    assert_client_token,
    register_pkjwt,
    register_secret_jwt,
)

FLOW = Path(__file__).resolve().parent / "openid-client" / "flow.mjs"
LOGOUT = FLOW.parent / "logout.mjs"
CLIENT_AUTH = FLOW.parent / "client_auth.mjs"
LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"
BACKCHANNEL_WAIT_S = 10
CLOCK_LEEWAY_S = 5


def needs_npm_ci():
    if not (FLOW.parent / "node_modules" / "openid-client").is_dir():
        pytest.fail("needs `npm ci` in tests/e2e/openid-client (scripts/test.sh does it)",
                    pytrace=False)


def test_openid_client_session(authrim_server, alice, run_relying_party):
    needs_npm_ci()
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


def test_openid_client_logout(authrim_server, discovery, alice, run_relying_party):
    """RP-Initiated Logout and Back-Channel Logout as openid-client's relying party sees them.

    ``openid-client/logout.mjs`` signs in, follows the URL from ``buildEndSessionUrl`` in the
    same browser, receives the logout token on its own endpoint (the listening socket bound
    here and inherited, so the registered ``backchannel_logout_uri`` is known before the
    program starts) and verifies it with jose; this test checks what it saw.
    """
    needs_npm_ci()
    assert discovery.get("end_session_endpoint") == authrim_server.issuer + "/logout", discovery
    assert discovery.get("backchannel_logout_supported") is True, discovery
    assert discovery.get("backchannel_logout_session_supported") is True, discovery

    post_logout = "http://127.0.0.1:9999/logged-out"
    with socket.create_server(("127.0.0.1", 0)) as listener:
        backchannel_uri = f"http://127.0.0.1:{listener.getsockname()[1]}/backchannel-logout"
        started = time.time()
        client_id, seen = run_relying_party(
            "openid-client-logout", ["node", str(LOGOUT)], LOGOUT.parent,
            metadata={"post_logout_redirect_uris": [post_logout],
                      "backchannel_logout_uri": backchannel_uri,
                      "backchannel_logout_session_required": True},
            extra_env={"POST_LOGOUT_REDIRECT_URI": post_logout,
                       "BACKCHANNEL_FD": str(listener.fileno()),
                       "BACKCHANNEL_WAIT_MS": str(BACKCHANNEL_WAIT_S * 1000)},
            pass_fds=(listener.fileno(),),
        )
        finished = time.time()

    assert seen["end_session_endpoint"] == discovery["end_session_endpoint"], seen
    sid = seen["id_token"]["sid"]
    assert seen["id_token"]["sub"] == alice["id"], seen
    assert sid, f"the ID token has no sid: {seen}"
    assert seen["userinfo_before"] == {"sub": alice["id"]}, seen

    # The library's end-session URL: the endpoint, the hint, where to go back, state, and
    # the client_id it adds itself.
    url = seen["end_session_url"]
    assert url["endpoint"] == discovery["end_session_endpoint"], url
    assert url["id_token_hint_is_id_token"], url
    assert set(url["params"]) == {"id_token_hint", "post_logout_redirect_uri", "state",
                                  "client_id"}, url
    assert url["params"]["post_logout_redirect_uri"] == post_logout, url
    assert url["params"]["client_id"] == client_id, url
    assert url["params"]["state"] == url["state"], url

    # Signed out at once: back to the registered URI with only state added; cookie removed.
    ended = seen["end_session"]
    assert ended["status"] == 302, ended
    location = urlsplit(ended["location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == post_logout, ended
    assert parse_qs(location.query) == {"state": [url["state"]]}, ended
    assert ended["session_cookie_kept"] is False, ended

    # The logout token, as received on the back channel and verified with jose.
    bc = seen["backchannel"]
    assert bc["verified"] is True, bc
    assert bc["method"] == "POST", bc
    assert bc["path"] == "/backchannel-logout", bc
    assert bc["content_type"].split(";")[0].strip() == "application/x-www-form-urlencoded", bc
    assert bc["fields"] == ["logout_token"], bc
    assert bc["deliveries"] >= 1, bc
    assert bc["header"]["typ"] == "logout+jwt", bc
    assert bc["header"]["alg"] == "RS256", bc
    assert bc["header"].get("kid"), bc
    claims = bc["claims"]
    assert claims["iss"] == authrim_server.issuer, claims
    assert claims["aud"] in (client_id, [client_id]), claims
    assert claims["sub"] == alice["id"], claims
    assert claims["sid"] == sid, claims
    assert claims["events"] == {LOGOUT_EVENT: {}}, claims
    assert "nonce" not in claims, claims
    assert isinstance(claims["jti"], str) and claims["jti"], claims
    assert started - CLOCK_LEEWAY_S <= claims["iat"] <= finished + CLOCK_LEEWAY_S, claims
    assert claims["exp"] > claims["iat"], claims
    # jose refused the same token for another audience.
    assert bc["wrong_audience"] == {"code": "ERR_JWT_CLAIM_VALIDATION_FAILED", "claim": "aud"}, bc

    # The session is over: its access token is refused, and silent sign-in needs a login,
    # in the same browser and with the old session cookie put back.
    assert seen["userinfo_after"] == {
        "status": 401, "code": "OAUTH_WWW_AUTHENTICATE_CHALLENGE",
        "challenge": {"scheme": "bearer", "error": "invalid_token"}}, seen
    for silent in (seen["silent_after"], seen["silent_with_old_cookie"]):
        assert silent == {"error": "login_required", "state_ok": True, "has_code": False}, seen


def check_assertion(request: dict, endpoint: str, client_id: str, alg: str, key,
                    kid: str | None, aud: str) -> dict:
    """One request openid-client sent: authenticated by a client assertion only, which
    verifies with ``key`` and carries what RFC 7523 §3 asks."""
    assert request["url"] == endpoint, request
    assert request["authorization"] is False, request
    assert request["client_secret"] is None, request
    assert request["client_assertion_type"] == ASSERTION_TYPE, request
    decoded = jwt.decode(request["client_assertion"], key, algorithms=[alg])
    assert decoded.header["alg"] == alg, decoded.header
    assert decoded.header.get("kid") == kid, decoded.header
    claims = decoded.claims
    assert claims["iss"] == claims["sub"] == client_id, claims
    assert claims["aud"] == aud, claims
    assert claims.get("jti"), claims
    assert 0 < claims["exp"] - claims["iat"] <= MAX_LIFETIME_S, claims
    return claims


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_jwt_client_auth(authrim_server, discovery, jwks):
    """private_key_jwt and client_secret_jwt as openid-client does them (client_auth.mjs): its
    keys (RSA, RSA-PSS, P-256, Ed25519, generated by jose) on its own jwks_uri, client
    credentials and introspection with each, revocation, a replayed assertion and a stranger's
    key refused, client_secret_jwt with the right and a wrong secret."""
    needs_npm_ci()
    issuer = authrim_server.issuer
    with socket.create_server(("127.0.0.1", 0)) as listener:
        jwks_uri = f"http://127.0.0.1:{listener.getsockname()[1]}/jwks.json"
        pk = register_pkjwt(authrim_server, jwks_uri=jwks_uri, prefix="openid-client-pkjwt")
        cs = register_secret_jwt(authrim_server, prefix="openid-client-csjwt")
        env = dict(os.environ, ISSUER=issuer, PKJWT_CLIENT_ID=pk["client_id"],
                   CSJWT_CLIENT_ID=cs["client_id"], CSJWT_CLIENT_SECRET=cs["client_secret"],
                   JWKS_FD=str(listener.fileno()))
        done = subprocess.run(["node", str(CLIENT_AUTH)], cwd=CLIENT_AUTH.parent, env=env,
                              capture_output=True, text=True, timeout=60,
                              pass_fds=(listener.fileno(),))
    assert done.returncode == 0, f"client_auth.mjs failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    token_endpoint, introspection_endpoint = (discovery["token_endpoint"],
                                              discovery["introspection_endpoint"])
    assert seen["token_endpoint"] == token_endpoint, seen
    # The server got the client's keys from its jwks_uri (once, then from its cache).
    assert seen["jwks_fetches"] >= 1, seen
    published = seen["jwks"]
    for jwk in published["keys"]:
        assert not {"d", "p", "q", "dp", "dq", "qi"} & jwk.keys(), jwk
    key_set = KeySet.import_key_set(published)
    client_id = pk["client_id"]

    expected_alg = {"RS256": "RS256", "PS256": "PS256", "ES256": "ES256", "Ed25519": "EdDSA"}
    assert set(seen["private_key_jwt"]) == set(expected_alg), seen["private_key_jwt"]
    for name, result in seen["private_key_jwt"].items():
        kid = f"oc-{name.lower()}"
        # openid-client's assertions name the issuer as aud (RFC 7523bis), at every endpoint.
        check_assertion(result["token_request"], token_endpoint, client_id, expected_alg[name],
                        key_set, kid, issuer)
        check_assertion(result["introspection_request"], introspection_endpoint, client_id,
                        expected_alg[name], key_set, kid, issuer)
        token = result["token"]
        # oauth4webapi lower-cases token_type; no refresh token for client credentials.
        assert token.pop("token_type") == "bearer", result
        assert token.pop("refresh_token") is None, result
        assert_client_token({**token, "token_type": "Bearer"}, jwks, issuer, client_id)
        assert result["introspection"] == {"active": True, "client_id": client_id,
                                           "sub": client_id}, result

    # Revoked with private_key_jwt: then inactive.
    check_assertion(seen["revocation"]["request"], discovery["revocation_endpoint"], client_id,
                    "ES256", key_set, "oc-es256", issuer)
    assert seen["revocation"]["introspection_after"] == {"active": False}, seen["revocation"]

    # The same assertion twice: the first is a token, the replay 401 invalid_client.
    assert seen["replay"]["first"] == {"succeeded": True}, seen["replay"]
    assert seen["replay"]["second"]["error"] == "invalid_client", seen["replay"]
    assert seen["replay"]["second"]["status"] == 401, seen["replay"]
    # A key the client never published, under a published kid: refused everywhere.
    for attempt in seen["stranger"].values():
        assert attempt.get("error") == "invalid_client" and attempt["status"] == 401, seen

    # client_secret_jwt: HS256 with the registered secret; a wrong one refused.
    csj = seen["client_secret_jwt"]
    check_assertion(csj["token_request"], token_endpoint, cs["client_id"], "HS256",
                    OctKey.import_key(cs["client_secret"]), None, issuer)
    assert csj["token"].pop("token_type") == "bearer", csj
    assert_client_token({**csj["token"], "token_type": "Bearer"}, jwks, issuer, cs["client_id"])
    assert csj["introspection"] == {"active": True, "client_id": cs["client_id"]}, csj
    assert csj["wrong_secret"]["error"] == "invalid_client", csj
    assert csj["wrong_secret"]["status"] == 401, csj
