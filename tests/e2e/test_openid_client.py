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
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from joserfc import jwt
from joserfc.jwk import KeySet, OctKey

import test_dpop as dpop
from conftest import HTTP_TIMEOUT_S, RP_REDIRECT_URI, assert_not_signed_by_other_issuer
from test_authlib import verify_id_token
from test_client_auth import (
    ASSERTION_TYPE,
    MAX_LIFETIME_S,
    assert_client_token,
    register_pkjwt,
    register_secret_jwt,
)
from test_revocation import introspect, new_service_client, session_for

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


def test_openid_client_session(issuer, run_relying_party):
    """At the default issuer and at a tenant's: the library discovers it (its own check that
    the document's issuer is the one asked for), and the tokens it gets are that issuer's,
    refused by the other (the library's userinfo call there, found by its own discovery)."""
    needs_npm_ci()
    alice = issuer.alice
    client_id, seen = run_relying_party("openid-client", ["node", str(FLOW)], FLOW.parent, issuer=issuer,
                                        extra_env={"OTHER_ISSUER": issuer.other.issuer})

    assert seen["other_userinfo"] == {"status": 401, "error": "invalid_token", "issuer": issuer.other.issuer}, seen
    assert_not_signed_by_other_issuer(issuer, seen["id_token_jwt"])
    assert seen["id_token"]["sub"] == alice["id"], seen
    assert seen["id_token"]["iss"] == issuer.server.issuer, seen
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


# --------------------------------------------------------------------------
# Pushed authorization requests (RFC 9126) and signed request objects (RFC 9101)
# --------------------------------------------------------------------------

PAR_JAR = FLOW.parent / "par_jar.mjs"
REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"
PAR_SCOPE = "openid email"


def run_par_jar(authrim_server, alice, redirect_uri: str) -> tuple[dict, dict, dict]:
    """Run par_jar.mjs: it prints its public JWK Set, the clients are registered here with
    it, their names go to its stdin, and its last line is what it saw. Returns
    ``(jwks it published, the registrations by role, what it saw)``."""
    env = dict(os.environ, ISSUER=authrim_server.issuer, REDIRECT_URI=redirect_uri,
               USERNAME="alice", PASSWORD=alice["password"])
    proc = subprocess.Popen(["node", str(PAR_JAR)], cwd=PAR_JAR.parent, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        first = proc.stdout.readline()
        if not first:
            _, err = proc.communicate(timeout=10)
            pytest.fail(f"par_jar.mjs printed no JWK Set:\n{err}")
        published = json.loads(first)["jwks"]
        for jwk in published["keys"]:
            assert not {"d", "p", "q", "dp", "dq", "qi"} & jwk.keys(), jwk
        common = {"redirect_uris": [redirect_uri], "grant_types": ["authorization_code"],
                  "scope": PAR_SCOPE}
        regs = {
            "basic": authrim_server.create_client(
                client_id=authrim_server.unique("oc-par-basic"),
                token_endpoint_auth_method="client_secret_basic",
                require_pushed_authorization_requests=True, **common),
            "pkjwt": authrim_server.create_client(
                client_id=authrim_server.unique("oc-par-pkjwt"),
                token_endpoint_auth_method="private_key_jwt", jwks=published, **common),
            "signed": authrim_server.create_client(
                client_id=authrim_server.unique("oc-jar-signed"),
                token_endpoint_auth_method="client_secret_basic", jwks=published,
                require_signed_request_object=True, request_object_signing_alg="ES256",
                **common),
        }
        assert regs["basic"].get("require_pushed_authorization_requests") is True, regs["basic"]
        assert regs["signed"].get("require_signed_request_object") is True, regs["signed"]
        assert regs["signed"].get("request_object_signing_alg") == "ES256", regs["signed"]
        names = {role: {"client_id": r["client_id"], "client_secret": r.get("client_secret")}
                 for role, r in regs.items()}
        out, err = proc.communicate(json.dumps(names) + "\n", timeout=60)
    except BaseException:
        proc.kill()
        proc.communicate()
        raise
    assert proc.returncode == 0, f"par_jar.mjs failed:\n{err}\n{out}"
    return published, regs, json.loads(out.strip().splitlines()[-1])


def check_signed_in(flow: dict, jwks: dict, issuer: str, client_id: str, user_id: str,
                    endpoint: str) -> dict:
    """One authorization openid-client completed: back to the client with a code, its state
    and iss; the tokens for the scope asked; an ID token for Alice, for this client, with the
    nonce sent (verified here against the JWKS, as the library did)."""
    assert flow["url"]["origin_path"] == endpoint, flow["url"]
    cb = flow["callback"]
    assert set(cb) == {"code", "state", "iss", "session_state"}, cb
    assert cb["state"] == flow["sent"]["state"] and cb["iss"] == issuer, cb
    assert flow["scope"] == PAR_SCOPE, flow
    claims = jwt.decode(flow["id_token"], KeySet.import_key_set(jwks), algorithms=["RS256"]).claims
    assert claims == flow["claims"], (claims, flow["claims"])
    assert claims["iss"] == issuer and claims["aud"] == client_id, claims
    assert claims["sub"] == user_id, claims
    assert claims["nonce"] == flow["sent"]["nonce"], claims
    assert claims["at_hash"] and claims["exp"] > time.time(), claims
    return claims


def check_request_object(token: str, published: dict, alg: str, client_id: str, issuer: str,
                         sent: dict, redirect_uri: str) -> dict:
    """A request object openid-client signed: it verifies with the published key of its kid
    and carries the whole request, iss the client and aud the issuer."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc on EdDSA (RFC 9864)
        decoded = jwt.decode(token, KeySet.import_key_set(published), algorithms=[alg])
    assert decoded.header["alg"] == alg, decoded.header
    assert decoded.header["typ"] == "oauth-authz-req+jwt", decoded.header
    assert decoded.header["kid"] in {k["kid"] for k in published["keys"]}, decoded.header
    claims = decoded.claims
    assert claims["iss"] == claims["client_id"] == client_id, claims
    assert claims["aud"] == issuer, claims
    assert claims["response_type"] == "code" and claims["redirect_uri"] == redirect_uri, claims
    assert claims["scope"] == PAR_SCOPE, claims
    assert (claims["state"], claims["nonce"]) == (sent["state"], sent["nonce"]), claims
    assert claims["code_challenge_method"] == "S256" and len(claims["code_challenge"]) == 43, claims
    assert 0 < claims["exp"] - claims["iat"] <= 300, claims
    return claims


def check_pushed(pushed: dict, par_endpoint: str) -> str:
    """A push the server took: 201, a fresh urn request_uri, 90 seconds."""
    assert pushed["url"] == par_endpoint, pushed
    assert pushed["status"] == 201, pushed
    body = pushed["body"]
    assert set(body) == {"request_uri", "expires_in"}, body
    assert body["request_uri"].startswith(REQUEST_URI_PREFIX), body
    assert len(body["request_uri"]) > len(REQUEST_URI_PREFIX) + 20, body
    assert body["expires_in"] == 90, body
    return body["request_uri"]


def check_spent(visit: dict):
    """A signed-in browser sent again to a request_uri whose code was issued: the error goes
    back to the client, without a code (one-time use is at the point of authorization)."""
    assert visit["status"] in (302, 303), visit
    back = visit["to_client"]
    assert back is not None and back.get("error") == "invalid_request_uri" and "code" not in back, visit


def check_sign_in_only(visit: dict):
    """Another browser may load the sign-in page for it (a code will not come of it)."""
    assert visit["status"] == 200 and visit["location"] is None and visit["to_client"] is None, visit


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_par_and_jar(authrim_server, discovery, jwks, alice):
    """openid-client's buildAuthorizationUrlWithPAR (client_secret_basic and PrivateKeyJwt),
    buildAuthorizationUrlWithJAR (ES256, Ed25519) and a request object pushed (PS256), each to
    authorizationCodeGrant and a verified ID token; request_uris spent after one use; a client
    that must push refused a plain request; a client that must sign (ES256) refused an unsigned
    request, pushed or not, and an object signed with PS256."""
    needs_npm_ci()
    issuer = authrim_server.issuer
    par_endpoint = discovery.get("pushed_authorization_request_endpoint")
    assert par_endpoint == issuer + "/par", discovery
    assert discovery.get("require_pushed_authorization_requests") is False, discovery
    assert discovery.get("request_parameter_supported") is True, discovery
    assert discovery.get("request_uri_parameter_supported") is True, discovery
    for alg in ("RS256", "PS256", "ES256", "EdDSA", "HS256"):
        assert alg in discovery.get("request_object_signing_alg_values_supported", []), discovery
    assert "none" not in discovery["request_object_signing_alg_values_supported"], discovery

    redirect_uri = "http://127.0.0.1:9999/cb"
    published, regs, seen = run_par_jar(authrim_server, alice, redirect_uri)
    endpoint = discovery["authorization_endpoint"]
    keys = KeySet.import_key_set(published)

    # 1. client_secret_basic and a client that must push.
    basic, basic_id = seen["basic"], regs["basic"]["client_id"]
    plain = basic["plain"]  # the library's plain authorization URL: refused, to the client
    assert plain["status"] == 302, plain
    assert plain["to_client"]["error"] == "invalid_request", plain
    assert "pushed" in plain["to_client"]["error_description"], plain
    assert plain["to_client"]["state"] == plain["sent_state"], plain
    assert plain["to_client"]["iss"] == issuer and "code" not in plain["to_client"], plain
    [push] = basic["pushed"]
    assert push["authorization"] == "Basic", push
    assert "client_secret" not in push["form"] and "client_assertion" not in push["form"], push
    assert push["form"]["response_type"] == "code", push
    assert push["form"]["redirect_uri"] == redirect_uri, push
    assert (push["form"]["state"], push["form"]["nonce"]) == (
        basic["sent"]["state"], basic["sent"]["nonce"]), push
    request_uri = check_pushed(push, par_endpoint)
    # The browser is sent with client_id and request_uri only.
    assert basic["url"]["params"] == {"client_id": basic_id, "request_uri": request_uri}, basic
    check_signed_in(basic, jwks, issuer, basic_id, alice["id"], endpoint)
    check_spent(basic["reused"])
    check_sign_in_only(basic["reused_in_new_browser"])

    # 2. private_key_jwt: pushed, with the library's assertion (aud: the issuer).
    pk, pk_id = seen["pkjwt"], regs["pkjwt"]["client_id"]
    [push] = pk["par"]["pushed"]
    assert push["authorization"] is None and "client_secret" not in push["form"], push
    assert push["form"]["client_assertion_type"] == ASSERTION_TYPE, push
    assertion = jwt.decode(push["form"]["client_assertion"], keys, algorithms=["RS256"])
    assert assertion.header["kid"] == "oc-jar-rs256", assertion.header
    assert assertion.claims["iss"] == assertion.claims["sub"] == pk_id, assertion.claims
    assert assertion.claims["aud"] == issuer and assertion.claims["jti"], assertion.claims
    request_uri = check_pushed(push, par_endpoint)
    assert pk["par"]["url"]["params"] == {"client_id": pk_id, "request_uri": request_uri}, pk
    sids = {check_signed_in(pk["par"], jwks, issuer, pk_id, alice["id"], endpoint)["sid"]}

    # A request object alone: client_id and request in the URL, the request inside it.
    for name, alg in (("ES256", "ES256"), ("Ed25519", "EdDSA")):
        flow = pk["jar"][name]
        assert set(flow["url"]["params"]) == {"client_id", "request"}, flow["url"]
        assert flow["url"]["params"]["client_id"] == pk_id, flow["url"]
        check_request_object(flow["url"]["params"]["request"], published, alg, pk_id, issuer,
                             flow["sent"], redirect_uri)
        sids.add(check_signed_in(flow, jwks, issuer, pk_id, alice["id"], endpoint)["sid"])

    # A request object pushed: the push is the object and the client's assertion only.
    both = pk["jar_par"]
    [push] = both["pushed"]
    assert set(push["form"]) == {"client_id", "request", "client_assertion_type",
                                 "client_assertion"}, push
    check_request_object(push["form"]["request"], published, "PS256", pk_id, issuer,
                         both["sent"], redirect_uri)
    request_uri = check_pushed(push, par_endpoint)
    assert both["url"]["params"] == {"client_id": pk_id, "request_uri": request_uri}, both
    sids.add(check_signed_in(both, jwks, issuer, pk_id, alice["id"], endpoint)["sid"])
    check_spent(both["reused"])
    assert len(sids) == 1, sids  # one browser, one session throughout

    # 3. A client that must sign its requests with ES256.
    signed, signed_id = seen["signed"], regs["signed"]["client_id"]
    assert signed["unsigned_push"]["status"] == 400, signed
    assert signed["unsigned_push"]["error"] == "invalid_request", signed
    assert "signed request object" in signed["unsigned_push"]["description"], signed
    front = signed["unsigned_front"]
    assert front["status"] == 302 and front["to_client"]["error"] == "invalid_request", front
    assert front["to_client"]["state"] == front["sent_state"], front
    assert "code" not in front["to_client"], front
    assert signed["wrong_alg_push"]["status"] == 400, signed
    assert signed["wrong_alg_push"]["error"] == "invalid_request_object", signed
    assert [p["status"] for p in signed["pushed"]] == [400, 400, 201], signed["pushed"]
    assert all(p["authorization"] == "Basic" for p in signed["pushed"]), signed["pushed"]
    check_request_object(signed["pushed"][2]["form"]["request"], published, "ES256", signed_id,
                         issuer, signed["sent"], redirect_uri)
    request_uri = check_pushed(signed["pushed"][2], par_endpoint)
    assert signed["url"]["params"] == {"client_id": signed_id, "request_uri": request_uri}
    check_signed_in(signed, jwks, issuer, signed_id, alice["id"], endpoint)


# --------------------------------------------------------------------------
# Dynamic client registration (RFC 7591) with the library's dynamicClientRegistration
# --------------------------------------------------------------------------

REGISTER = FLOW.parent / "register.mjs"


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_dynamic_registration(authrim_server, discovery, jwks, alice):
    """openid-client's dynamicClientRegistration with initial access tokens from the admin
    API (register.mjs): a client_secret_basic client and a private_key_jwt client (its jose
    ES256 key registered inline as jwks), each then through the code flow with the
    Configuration the library made (ID token, userinfo; a refresh for the first); a used-up
    token (401 invalid_token) and a fragment redirect URI (400 invalid_redirect_uri) as the
    library reports them, the refusal leaving its token for a public client's registration.
    The test checks each registration request and response, verifies the ID tokens against
    the JWKS and the assertion with the registered key, and reads each registration back
    with its registration access token (RFC 7592)."""
    needs_npm_ci()
    issuer = authrim_server.issuer
    assert discovery.get("registration_endpoint") == issuer + "/register", discovery
    tokens = {}
    for role in ("basic", "pkjwt", "spare"):
        resp = authrim_server.admin_post("/admin/registration-tokens",
                                         {"max_uses": 1, "expires_in": 600})
        assert resp.status_code == 201, resp.text
        tokens[role] = resp.json()["initial_access_token"]
    redirect_uri = RP_REDIRECT_URI
    env = dict(os.environ, ISSUER=issuer, REDIRECT_URI=redirect_uri, USERNAME="alice",
               PASSWORD=alice["password"], INITIAL_ACCESS_TOKENS=json.dumps(tokens))
    started = time.time()
    done = subprocess.run(["node", str(REGISTER)], cwd=REGISTER.parent, env=env,
                          capture_output=True, text=True, timeout=60)
    finished = time.time()
    assert done.returncode == 0, f"register.mjs failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])

    def check_registration(role: str, method: str, token: str) -> dict:
        """The library's POST to the registration endpoint (with ``token``) and the 201."""
        reg = seen[role]["registration"]
        assert reg["url"] == discovery["registration_endpoint"], reg
        assert reg["authorization"] == f"Bearer {token}", reg
        assert reg["status"] == 201 and reg["cache_control"] == "no-store", reg
        info = reg["response"]
        client_id = info["client_id"]
        assert client_id == seen[role]["client_id"], seen[role]  # what the library kept
        for name, value in reg["json"].items():
            assert info.get(name) == value, (name, info, reg["json"])
        assert info["token_endpoint_auth_method"] == method, info
        assert started - CLOCK_LEEWAY_S <= info["client_id_issued_at"] <= finished + CLOCK_LEEWAY_S, info
        assert info["registration_client_uri"] == f"{issuer}/register/{client_id}", info
        assert len(info["registration_access_token"]) >= 32, info
        # RFC 7592: the registration read back with its token, as the library sent it.
        back = requests.get(info["registration_client_uri"], timeout=HTTP_TIMEOUT_S,
                            headers={"Authorization": f"Bearer {info['registration_access_token']}"})
        assert back.status_code == 200, back.text
        assert back.json() == {k: v for k, v in info.items()
                               if k not in ("client_secret", "client_secret_expires_at")}, back.json()
        return info

    def check_flow(role: str, client_id: str, scope: str) -> dict:
        flow = seen[role]["flow"]
        assert flow["authorization_url"] == {"client_id": client_id, "redirect_uri": redirect_uri}, flow
        assert flow["callback"] == {"iss": issuer, "state_ok": True}, flow
        assert set(flow["scope"].split()) == set(scope.split()), flow
        claims = verify_id_token(flow["id_token"], jwks, issuer, client_id, flow["sent"]["nonce"],
                                 flow["access_token"])
        assert claims["sub"] == alice["id"] == flow["claims"]["sub"], flow["claims"]
        assert flow["userinfo"]["sub"] == alice["id"], flow["userinfo"]
        assert flow["userinfo"]["email"] == "alice@example.com", flow["userinfo"]
        assert "client_secret" not in flow["token_request"]["form"], flow["token_request"]
        return flow

    # 1. client_secret_basic, with the secret the server issued.
    basic = check_registration("basic", "client_secret_basic", tokens["basic"])
    assert seen["basic"]["registration_endpoint"] == discovery["registration_endpoint"], seen
    assert isinstance(basic.get("client_secret"), str) and len(basic["client_secret"]) >= 32, basic
    assert basic["client_secret_expires_at"] == 0, basic
    assert seen["basic"]["library_has_secret"] is True, seen["basic"]
    flow = check_flow("basic", basic["client_id"], "openid email profile offline_access")
    assert flow["token_request"]["authorization_scheme"] == "Basic", flow["token_request"]
    assert flow["userinfo"]["name"] == "Alice Liddell", flow["userinfo"]
    assert flow["refreshed"] == {"authorization_scheme": "Basic", "new_refresh_token": True,
                                 "id_token_sub": alice["id"]}, flow["refreshed"]

    # 2. private_key_jwt: no secret issued; the library's assertion verifies with the key it
    # registered (and only a public key went out).
    pk = check_registration("pkjwt", "private_key_jwt", tokens["pkjwt"])
    jwk = seen["pkjwt"]["jwk"]
    assert not {"d", "p", "q", "dp", "dq", "qi"} & jwk.keys(), jwk
    assert pk["jwks"] == {"keys": [jwk]}, pk
    assert pk["token_endpoint_auth_signing_alg"] == "ES256", pk
    assert not {"client_secret", "client_secret_expires_at"} & pk.keys(), pk
    assert seen["pkjwt"]["library_has_secret"] is False, seen["pkjwt"]
    flow = check_flow("pkjwt", pk["client_id"], "openid email")
    request = flow["token_request"]
    assert request["authorization_scheme"] is None, request
    assert request["form"]["client_assertion_type"] == ASSERTION_TYPE, request
    decoded = jwt.decode(request["form"]["client_assertion"], KeySet.import_key_set(pk["jwks"]),
                         algorithms=["ES256"])
    assert decoded.header["kid"] == jwk["kid"], decoded.header
    assert decoded.claims["iss"] == decoded.claims["sub"] == pk["client_id"], decoded.claims
    assert decoded.claims["aud"] == issuer and decoded.claims.get("jti"), decoded.claims

    # 3. What the library was told: a used-up token, and a redirect URI with a fragment.
    assert seen["spent_token"] == {
        "status": 401, "code": "OAUTH_WWW_AUTHENTICATE_CHALLENGE", "error": None,
        "description": None, "challenge": {"scheme": "bearer", "error": "invalid_token"}}, seen
    fragment = seen["fragment"]
    assert (fragment["status"], fragment["error"]) == (400, "invalid_redirect_uri"), fragment
    assert fragment["code"] == "OAUTH_RESPONSE_BODY_ERROR", fragment
    # The refusal did not spend the spare token: a public client registered with it.
    public = check_registration("public_after_refusal", "none", tokens["spare"])
    assert public["application_type"] == "native", public
    assert not {"client_secret", "client_secret_expires_at"} & public.keys(), public

    # Each token is used up now.
    for token in tokens.values():
        resp = requests.post(discovery["registration_endpoint"], timeout=HTTP_TIMEOUT_S,
                             json={"redirect_uris": [redirect_uri]},
                             headers={"Authorization": f"Bearer {token}"})
        assert resp.status_code == 401 and resp.json()["error"] == "invalid_token", resp.text


# --------------------------------------------------------------------------
# DPoP (RFC 9449) with the library's DPoP handle
# --------------------------------------------------------------------------

DPOP = FLOW.parent / "dpop.mjs"
DPOP_SCOPE = "openid email offline_access"
# The JWS alg each jose key ends up signing with: openid-client's "Ed25519" remapped to
# "EdDSA" (the name Authrim's discovery lists) by the handle's modifyAssertion.
DPOP_JWS_ALG = {"ES256": "ES256", "Ed25519": "EdDSA"}


def run_dpop(server, user: dict, *, algs: tuple = (), par_alg: str | None = None) -> tuple[dict, dict]:
    """Register a public client (no secret, PKCE; code and refresh grants) and run dpop.mjs
    for it as ``user``; returns (the registration, what the program saw)."""
    needs_npm_ci()
    reg = server.create_client(client_id=server.unique("oc-dpop"), token_endpoint_auth_method="none",
                               redirect_uris=[RP_REDIRECT_URI], scope=DPOP_SCOPE,
                               grant_types=["authorization_code", "refresh_token"])
    assert "client_secret" not in reg and reg["token_endpoint_auth_method"] == "none", reg
    env = dict(os.environ, ISSUER=server.issuer, CLIENT_ID=reg["client_id"],
               REDIRECT_URI=RP_REDIRECT_URI, USERNAME=user["username"], PASSWORD=user["password"],
               ALGS=",".join(algs), PAR_ALG=par_alg or "")
    done = subprocess.run(["node", str(DPOP)], cwd=DPOP.parent, env=env, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, f"dpop.mjs failed:\n{done.stderr}\n{done.stdout}"
    return reg, json.loads(done.stdout.strip().splitlines()[-1])


def to(exchanges: list, url: str) -> list:
    """The exchanges with one endpoint (the library also fetched the JWKS on the way)."""
    return [x for x in exchanges if x["url"] == url]


def check_key(run: dict) -> str:
    """The public key the program printed: public only, and the thumbprint the library's handle
    computed is RFC 7638's (joserfc's, and by the letter). Returns it."""
    jwk = run["jwk"]
    assert not {"d", "p", "q", "dp", "dq", "qi", "k"} & jwk.keys(), jwk
    thumbprint = dpop.jkt(jwk)
    assert run["jkt"] == thumbprint == dpop.rfc7638(jwk), run
    return thumbprint


def check_dpop_tokens(exchange: dict, summary: dict, run: dict, jwks: dict, issuer: str,
                      client_id: str, user_id: str, alg: str, token_endpoint: str,
                      nonce: str | None = None) -> dict:
    """A token request the library made with its handle and the bound tokens it got: the proof
    (of the printed key, for POST to the token endpoint), 200 with token_type DPoP (the library
    lower-cases it), an access token whose cnf.jkt is the key's thumbprint."""
    dpop.check_proof(exchange["dpop"], run["jwk"], alg, "POST", token_endpoint, nonce=nonce)
    assert exchange["method"] == "POST" and exchange["authorization_scheme"] is None, exchange
    assert exchange["status"] == 200, exchange
    body = exchange["response"]
    assert body["token_type"] == "DPoP", body
    assert summary["token_type"] == "dpop", summary
    assert body["access_token"] == summary["access_token"], summary
    assert body["refresh_token"] == summary["refresh_token"], summary
    claims = dpop.assert_bound_access_token(body["access_token"], jwks, issuer, run["jkt"])
    assert claims["sub"] == user_id == summary["sub"] and claims["client_id"] == client_id, claims
    assert set(summary["scope"].split()) == set(DPOP_SCOPE.split()), summary
    return claims


def check_userinfo_exchange(exchange: dict, run: dict, access_token: str, alg: str,
                            userinfo_endpoint: str, nonce: str | None = None):
    """userinfo as the library called it: the DPoP scheme and a proof with the token's ath."""
    assert exchange["method"] == "GET" and exchange["authorization_scheme"] == "DPoP", exchange
    dpop.check_proof(exchange["dpop"], run["jwk"], alg, "GET", userinfo_endpoint,
                     access_token=access_token, nonce=nonce)


def check_run_without_nonces(run: dict, seen: dict, discovery: dict, jwks: dict, issuer: str,
                             client_id: str, user_id: str):
    """One sign-in of dpop.mjs against a server that wants no nonces (every request once)."""
    alg = DPOP_JWS_ALG[run["alg"]]
    token_endpoint, userinfo_endpoint = discovery["token_endpoint"], discovery["userinfo_endpoint"]
    assert (seen["token_endpoint"], seen["userinfo_endpoint"]) == (token_endpoint, userinfo_endpoint)
    check_key(run)
    [exchange] = to(run["token_exchanges"], token_endpoint)
    check_dpop_tokens(exchange, run["tokens"], run, jwks, issuer, client_id, user_id, alg, token_endpoint)
    for name, token in (("userinfo", run["tokens"]["access_token"]),
                        ("userinfo_fresh_handle", run["tokens"]["access_token"]),
                        ("userinfo_after_refresh", run["refreshed"]["access_token"])):
        [exchange] = run[f"{name}_exchanges"]
        assert exchange["status"] == 200, exchange
        check_userinfo_exchange(exchange, run, token, alg, userinfo_endpoint)
        assert run[name]["sub"] == user_id, run[name]
    assert run["userinfo"]["email"] == "alice@example.com", run["userinfo"]

    # The refresh token is bound to the key: another key's proof is refused, and the token
    # survives that (the refresh with the right key then works, rotating it).
    assert (run["refresh_other_key"]["error"], run["refresh_other_key"]["status"]) == ("invalid_grant", 400), run
    [exchange] = run["refresh_other_key_exchanges"]
    other = dpop.b64url_json(exchange["dpop"].split(".")[0])["jwk"]
    assert other != run["jwk"], exchange
    dpop.check_proof(exchange["dpop"], other, alg, "POST", token_endpoint)
    [exchange] = run["refresh_exchanges"]
    check_dpop_tokens(exchange, run["refreshed"], run, jwks, issuer, client_id, user_id, alg, token_endpoint)
    assert run["refreshed"]["refresh_token"] != run["tokens"]["refresh_token"], run
    assert run["refreshed"]["access_token"] != run["tokens"]["access_token"], run


def check_bound_elsewhere(server, discovery: dict, client_id: str, run: dict, user_id: str):
    """What the library did not try, done here with its tokens: the access tokens as Bearer
    at userinfo (401, DPoP challenge), the DPoP scheme with the library's own userinfo proof
    sent again (a replay: 401), the public client's refresh token without a proof
    (invalid_grant), and introspection by a resource server (token_type DPoP, cnf.jkt)."""
    for token in (run["tokens"]["access_token"], run["refreshed"]["access_token"]):
        dpop.assert_dpop_challenge(dpop.userinfo(discovery, token, scheme="Bearer"), "invalid_token",
                                   discovery)
    captured = run["userinfo_after_refresh_exchanges"][-1]["dpop"]
    dpop.assert_dpop_challenge(dpop.userinfo(discovery, run["refreshed"]["access_token"], captured),
                               "invalid_dpop_proof", discovery)
    refused = dpop.token_request(discovery, {"client_id": client_id}, grant_type="refresh_token",
                                 refresh_token=run["refreshed"]["refresh_token"])
    dpop.assert_token_error(refused, "invalid_grant")
    rs = new_service_client(server, dpop.SCOPE, prefix="oc-dpop-rs")
    for token in (run["tokens"]["access_token"], run["refreshed"]["access_token"]):
        info = introspect(session_for(rs), discovery, token)
        assert info.get("active") is True and info.get("token_type") == "DPoP", info
        assert info.get("cnf") == {"jkt": run["jkt"]}, info
        assert info.get("sub") == user_id and info.get("client_id") == client_id, info


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_dpop(authrim_server, discovery, jwks, alice):
    """openid-client's DPoP handle (getDPoPHandle) for a public client, with a jose ES256 key and
    an Ed25519 one (dpop.mjs): authorizationCodeGrant, fetchUserInfo and refreshTokenGrant with
    {DPoP}, and buildAuthorizationUrlWithPAR with {DPoP}. The test checks every proof the
    library sent against the key the program printed, that each access token is bound to that
    key's thumbprint (computed here with joserfc: cnf.jkt, and introspection), that the
    refresh token is bound (another key's proof: invalid_grant; none: invalid_grant), that the
    access tokens are refused as Bearer at userinfo (401 with a DPoP challenge), and that the
    code is bound by dpop_jkt and by the proof at /par (another key: invalid_grant)."""
    issuer = authrim_server.issuer
    algs = discovery["dpop_signing_alg_values_supported"]
    assert "ES256" in algs and "EdDSA" in algs and "Ed25519" not in algs, algs
    reg, seen = run_dpop(authrim_server, alice, algs=("ES256", "Ed25519"), par_alg="ES256")
    client_id = reg["client_id"]
    assert set(seen["runs"]) == {"ES256", "Ed25519"}, seen
    for run in seen["runs"].values():
        check_run_without_nonces(run, seen, discovery, jwks, issuer, client_id, alice["id"])
        check_bound_elsewhere(authrim_server, discovery, client_id, run, alice["id"])

    # The Ed25519 run named its key in the authorization request; its refresh with the
    # library's own "Ed25519" header (not in discovery's list) was refused.
    ed = seen["runs"]["Ed25519"]
    assert ed["authorization_params"]["dpop_jkt"] == ed["jkt"], ed["authorization_params"]
    assert "dpop_jkt" not in seen["runs"]["ES256"]["authorization_params"], seen["runs"]["ES256"]
    assert (ed["refresh_unmapped_alg"]["error"], ed["refresh_unmapped_alg"]["status"]) == (
        "invalid_dpop_proof", 400), ed
    [exchange] = ed["refresh_unmapped_alg_exchanges"]
    dpop.check_proof(exchange["dpop"], ed["jwk"], "Ed25519", "POST", discovery["token_endpoint"])

    # Pushed with a proof: the code bound to that key.
    par = seen["par"]
    check_key(par)
    [pushed] = par["push_exchanges"]
    assert pushed["status"] == 201, pushed
    assert pushed["response"]["request_uri"].startswith(REQUEST_URI_PREFIX), pushed
    dpop.check_proof(pushed["dpop"], par["jwk"], "ES256", "POST",
                     discovery["pushed_authorization_request_endpoint"])
    [exchange] = to(par["token_exchanges"], discovery["token_endpoint"])
    check_dpop_tokens(exchange, par["tokens"], par, jwks, issuer, client_id, alice["id"], "ES256",
                      discovery["token_endpoint"])
    [pushed] = par["second_push_exchanges"]
    assert pushed["status"] == 201, pushed
    dpop.check_proof(pushed["dpop"], par["jwk"], "ES256", "POST",
                     discovery["pushed_authorization_request_endpoint"])
    assert (par["other_key"]["error"], par["other_key"]["status"]) == ("invalid_grant", 400), par
    [exchange] = to(par["other_key_exchanges"], discovery["token_endpoint"])
    assert dpop.b64url_json(exchange["dpop"].split(".")[0])["jwk"] != par["jwk"], exchange

    # Every proof fresh: no jti twice.
    proofs = [x["dpop"] for run in (*seen["runs"].values(), par)
              for name, xs in run.items() if name.endswith("exchanges") for x in xs if x["dpop"]]
    jtis = [dpop.b64url_json(p.split(".")[1])["jti"] for p in proofs]
    assert len(proofs) == 17 and len(set(jtis)) == len(jtis), jtis


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_dpop_nonce(start_authrim):
    """With AUTHRIM_DPOP_NONCE=true the library must handle use_dpop_nonce itself (dpop.mjs,
    ES256): its first token request (no nonce) is 400 use_dpop_nonce with DPoP-Nonce and it
    retries once with that nonce; later requests carry the nonce it kept; a new handle's first
    userinfo call is 401 with a DPoP challenge error="use_dpop_nonce" and is retried with the
    nonce. The tokens are bound as without nonces, and refused as Bearer."""
    server, discovery, user, jwks = dpop.nonce_server(start_authrim)
    reg, seen = run_dpop(server, user, algs=("ES256",))
    run = seen["runs"]["ES256"]
    client_id, token_endpoint = reg["client_id"], discovery["token_endpoint"]
    userinfo_endpoint = discovery["userinfo_endpoint"]
    check_key(run)

    # The code: refused for want of a nonce, then redeemed with the one the server gave.
    first, second = to(run["token_exchanges"], token_endpoint)
    dpop.check_proof(first["dpop"], run["jwk"], "ES256", "POST", token_endpoint)
    assert first["status"] == 400 and first["response"]["error"] == "use_dpop_nonce", first
    assert first["dpop_nonce"], first
    check_dpop_tokens(second, run["tokens"], run, jwks, server.issuer, client_id, user["id"],
                      "ES256", token_endpoint, nonce=first["dpop_nonce"])
    assert second["dpop_nonce"], second
    kept = second["dpop_nonce"]

    # userinfo with the nonce the handle kept: at once.
    [exchange] = run["userinfo_exchanges"]
    assert exchange["status"] == 200, exchange
    check_userinfo_exchange(exchange, run, run["tokens"]["access_token"], "ES256", userinfo_endpoint,
                            nonce=kept)
    # A new handle: 401 use_dpop_nonce (DPoP challenge, DPoP-Nonce), then with the nonce.
    refused, accepted = run["userinfo_fresh_handle_exchanges"]
    check_userinfo_exchange(refused, run, run["tokens"]["access_token"], "ES256", userinfo_endpoint)
    assert refused["status"] == 401 and refused["dpop_nonce"], refused
    scheme, params = dpop.parse_challenge(refused["www_authenticate"])
    assert scheme == "DPoP" and params.get("error") == "use_dpop_nonce", refused
    assert accepted["status"] == 200, accepted
    check_userinfo_exchange(accepted, run, run["tokens"]["access_token"], "ES256", userinfo_endpoint,
                            nonce=refused["dpop_nonce"])
    assert run["userinfo_fresh_handle"]["sub"] == user["id"], run

    # Another key's handle: a nonce first, then the refresh token's binding refuses it.
    assert [(x["status"], x["response"]["error"]) for x in run["refresh_other_key_exchanges"]] == [
        (400, "use_dpop_nonce"), (400, "invalid_grant")], run["refresh_other_key_exchanges"]
    assert run["refresh_other_key"]["error"] == "invalid_grant", run
    # The refresh with the kept nonce, and userinfo after it: at once.
    [exchange] = run["refresh_exchanges"]
    check_dpop_tokens(exchange, run["refreshed"], run, jwks, server.issuer, client_id, user["id"],
                      "ES256", token_endpoint, nonce=kept)
    [exchange] = run["userinfo_after_refresh_exchanges"]
    assert exchange["status"] == 200, exchange
    check_userinfo_exchange(exchange, run, run["refreshed"]["access_token"], "ES256",
                            userinfo_endpoint, nonce=kept)

    for token in (run["tokens"]["access_token"], run["refreshed"]["access_token"]):
        dpop.assert_dpop_challenge(dpop.userinfo(discovery, token, scheme="Bearer"), "invalid_token",
                                   discovery)


@pytest.mark.filterwarnings("ignore::joserfc.errors.SecurityWarning")
def test_openid_client_dpop_par_nonce(start_authrim):
    """With AUTHRIM_DPOP_NONCE=true, a client whose first DPoP request is the push
    (buildAuthorizationUrlWithPAR with {DPoP}, dpop.mjs with a new handle): the library can
    only get there if /par's use_dpop_nonce answer carries DPoP-Nonce (RFC 9449 §8), which it
    retries with; then the code flow with the bound code."""
    server, discovery, user, jwks = dpop.nonce_server(start_authrim)
    reg, seen = run_dpop(server, user, par_alg="ES256")
    par = seen["par"]
    par_endpoint = discovery["pushed_authorization_request_endpoint"]
    check_key(par)
    refused = par["push_exchanges"][0]
    dpop.check_proof(refused["dpop"], par["jwk"], "ES256", "POST", par_endpoint)
    assert refused["status"] == 400 and refused["response"]["error"] == "use_dpop_nonce", refused
    assert refused["dpop_nonce"], (
        f"/par answered use_dpop_nonce without a DPoP-Nonce header, so openid-client retried "
        f"without a nonce and gave up: {par.get('error')}\n{json.dumps(par['push_exchanges'], indent=1)}")
    assert "error" not in par, par
    pushed = par["push_exchanges"][1]
    assert pushed["status"] == 201, pushed
    dpop.check_proof(pushed["dpop"], par["jwk"], "ES256", "POST", par_endpoint,
                     nonce=refused["dpop_nonce"])
    tokens = [x for x in to(par["token_exchanges"], discovery["token_endpoint"]) if x["status"] == 200]
    assert len(tokens) == 1, par["token_exchanges"]
    check_dpop_tokens(tokens[0], par["tokens"], par, jwks, server.issuer, reg["client_id"], user["id"],
                      "ES256", discovery["token_endpoint"],
                      nonce=dpop.b64url_json(tokens[0]["dpop"].split(".")[1]).get("nonce"))
