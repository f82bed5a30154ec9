"""End-to-end tests of Authrim's revocation, introspection and client credentials.

Driven through Authlib's own client API wherever it has one:

* RFC 7009 revocation with ``OAuth2Session.revoke_token(url, token,
  token_type_hint=...)``: the owning client revokes an access token (the token
  then introspects as exactly ``{"active": false}`` and userinfo refuses it) or
  a refresh token (refreshing with it is then ``invalid_grant``); another
  client may not revoke it (HTTP 400 ``unauthorized_client``, nothing revoked);
  an unknown token is accepted with 200.
* RFC 7662 introspection with ``OAuth2Session.introspect_token(url, token)``
  by a second confidential client playing the resource server.
* RFC 6749 section 4.4 client credentials with
  ``OAuth2Session.fetch_token(url, grant_type="client_credentials", scope=...)``.

Access tokens are JWTs (RFC 9068): their signature is verified against the
published JWKS with joserfc, as test_authlib.py does for ID tokens.

The helpers here (client registration, access-token verification, revocation
and introspection calls) are shared with test_exchange.py.
"""

from __future__ import annotations

import time

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry

from conftest import HTTP_TIMEOUT_S
from test_authlib import (
    ALL_SCOPES,
    CLOCK_LEEWAY_S,
    REDIRECT_URI,
    describe,
    run_code_flow,
    verify_id_token,
)
from test_refresh import (
    assert_invalid_grant,
    new_refreshing_client,
    offline_login,
    raw_refresh,
    raw_userinfo,
)

ACCESS_TOKEN_TYP = "at+jwt"  # RFC 9068 section 2.1
INTROSPECTION_MEMBERS = ("scope", "client_id", "sub", "aud", "exp", "iat", "iss", "token_type")


# --------------------------------------------------------------------------
# Helpers (also used by test_exchange.py)
# --------------------------------------------------------------------------


def new_web_client(server, prefix: str = "authlib-web") -> dict:
    """A confidential relying party (client_secret_basic) for the code flow."""
    reg = server.create_client(
        client_id=server.unique(prefix),
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
    )
    assert reg.get("client_secret"), reg
    return reg


def new_service_client(server, scope: str, prefix: str = "authlib-svc", **extra) -> dict:
    """A confidential client that may only use client_credentials."""
    client_id = server.unique(prefix)
    reg = server.create_client(
        client_id=client_id,
        grant_types=["client_credentials"],
        redirect_uris=[],
        scope=scope,
        **extra,
    )
    assert reg["client_id"] == client_id, reg
    assert reg.get("client_secret"), reg
    assert reg.get("grant_types") == ["client_credentials"], reg
    return reg


def session_for(reg: dict, **kwargs) -> OAuth2Session:
    """An Authlib session authenticating as ``reg`` with client_secret_basic."""
    return OAuth2Session(
        client_id=reg["client_id"],
        client_secret=reg["client_secret"],
        token_endpoint_auth_method="client_secret_basic",
        default_timeout=HTTP_TIMEOUT_S,
        **kwargs,
    )


def capture_token_responses(client: OAuth2Session) -> list[requests.Response]:
    """Record every raw HTTP response Authlib gets from ``fetch_token``."""
    seen: list[requests.Response] = []

    def hook(resp):
        seen.append(resp)
        return resp

    client.register_compliance_hook("access_token_response", hook)
    return seen


def login(server, discovery, jwks, user, reg: dict, scope: str):
    """Authlib code flow for ``reg`` (client_secret_basic); the ID token is verified."""
    flow = run_code_flow(server, discovery, user, reg["client_id"], reg["client_secret"],
                         "client_secret_basic", scope)
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"],
                             reg["client_id"], flow.nonce, flow.token["access_token"])
    assert claims["sub"] == user["id"], (dict(claims), user)
    return flow


def verify_access_token(token: str, jwks: dict, issuer: str) -> tuple[dict, dict]:
    """Verify a JWT access token (RFC 9068) against the JWKS; returns (header, claims)."""
    decoded = jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["RS256"])
    header = decoded.header
    assert header.get("alg") == "RS256", header
    assert header.get("kid") in {k.get("kid") for k in jwks["keys"]}, header
    assert header.get("typ") == ACCESS_TOKEN_TYP, header
    registry = JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY_S,
        iss={"essential": True, "value": issuer},
        sub={"essential": True},
        aud={"essential": True},
        exp={"essential": True},
        iat={"essential": True},
        jti={"essential": True},
        client_id={"essential": True},
    )
    registry.validate(decoded.claims)
    claims = decoded.claims
    assert claims["exp"] > claims["iat"], claims
    return header, claims


def aud_list(aud) -> list:
    return [aud] if isinstance(aud, str) else list(aud)


def revoke(client: OAuth2Session, discovery: dict, token: str,
           hint: str | None = None) -> requests.Response:
    """RFC 7009 revocation through Authlib."""
    return client.revoke_token(discovery["revocation_endpoint"], token=token,
                               token_type_hint=hint, timeout=HTTP_TIMEOUT_S)


def assert_revoked_ok(resp: requests.Response):
    assert resp.status_code == 200, describe(resp)
    # Authlib authenticated the revocation request with HTTP Basic.
    assert resp.request.headers.get("Authorization", "").startswith("Basic "), (
        resp.request.headers)


def introspect(client: OAuth2Session, discovery: dict, token: str,
               hint: str | None = None) -> dict:
    """RFC 7662 introspection through Authlib; returns the JSON body."""
    resp = client.introspect_token(discovery["introspection_endpoint"], token=token,
                                   token_type_hint=hint, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert resp.request.headers.get("Authorization", "").startswith("Basic "), (
        resp.request.headers)
    return resp.json()


def assert_active_access_token(info: dict, claims: dict):
    """An introspection answer for an active access token matches the JWT's claims."""
    assert info.get("active") is True, info
    for name in INTROSPECTION_MEMBERS:
        assert name in info, (name, info)
    assert info["token_type"] == "Bearer", info
    for name in ("scope", "client_id", "sub", "exp", "iat", "iss"):
        assert info[name] == claims[name], (name, info, claims)
    assert aud_list(info["aud"]) == aud_list(claims["aud"]), (info, claims)


def assert_oauth_error(resp: requests.Response, status: int, error: str):
    assert resp.status_code == status, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert resp.json().get("error") == error, describe(resp)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_discovery_advertises_revocation_and_introspection(authrim_server, discovery):
    issuer = authrim_server.issuer
    assert discovery.get("revocation_endpoint") == issuer + "/revoke", discovery
    assert discovery.get("introspection_endpoint") == issuer + "/introspect", discovery
    assert "client_credentials" in discovery.get("grant_types_supported", []), discovery


def test_introspection_by_resource_server(authrim_server, discovery, jwks, alice):
    """A second confidential client introspects the user's access token."""
    web = new_web_client(authrim_server)
    flow = login(authrim_server, discovery, jwks, alice, web, "openid profile email")
    at = flow.token["access_token"]
    _, claims = verify_access_token(at, jwks, discovery["issuer"])
    assert claims["sub"] == alice["id"] and claims["client_id"] == web["client_id"], claims

    rs = session_for(new_service_client(authrim_server, "svc", prefix="authlib-rs"))
    info = introspect(rs, discovery, at)
    assert_active_access_token(info, claims)
    assert info["sub"] == alice["id"], info
    assert info["client_id"] == web["client_id"], info
    assert set(info["scope"].split()) == {"openid", "profile", "email"}, info
    assert info["iss"] == discovery["issuer"], info
    assert info["iat"] <= time.time() + CLOCK_LEEWAY_S < info["exp"], info
    # The hint changes nothing for an access token.
    assert introspect(rs, discovery, at, hint="access_token") == info
    # Garbage is just inactive.
    assert introspect(rs, discovery, generate_token(40)) == {"active": False}


def test_owner_revokes_access_token(authrim_server, discovery, jwks, alice):
    """Revoked by its client: introspection {"active": false}, userinfo 401."""
    web = new_web_client(authrim_server)
    flow = login(authrim_server, discovery, jwks, alice, web, "openid email")
    at = flow.token["access_token"]
    rs = session_for(new_service_client(authrim_server, "svc", prefix="authlib-rs"))
    assert introspect(rs, discovery, at)["active"] is True
    assert raw_userinfo(discovery, at).status_code == 200

    resp = revoke(flow.client, discovery, at, hint="access_token")
    assert_revoked_ok(resp)
    form = resp.request.body
    assert "token_type_hint=access_token" in form, form

    assert introspect(rs, discovery, at) == {"active": False}
    resp = raw_userinfo(discovery, at)
    assert resp.status_code == 401, describe(resp)
    assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), describe(resp)
    # Revoking it again is still a success (RFC 7009 section 2.2).
    assert_revoked_ok(revoke(flow.client, discovery, at))


def test_owner_revokes_refresh_token(authrim_server, discovery, jwks, alice):
    """token_type_hint=refresh_token: the refresh token can no longer be used."""
    reg = new_refreshing_client(authrim_server)
    flow, _ = offline_login(authrim_server, discovery, jwks, alice, reg)
    rt = flow.token["refresh_token"]
    # The owner may introspect its own refresh token.
    info = introspect(flow.client, discovery, rt, hint="refresh_token")
    assert info.get("active") is True, info
    assert info.get("token_type") == "refresh_token", info
    assert info.get("client_id") == reg["client_id"] and info.get("sub") == alice["id"], info

    resp = revoke(flow.client, discovery, rt, hint="refresh_token")
    assert_revoked_ok(resp)
    assert "token_type_hint=refresh_token" in resp.request.body, resp.request.body

    assert introspect(flow.client, discovery, rt, hint="refresh_token") == {"active": False}
    with pytest.raises(OAuthError) as excinfo:
        flow.client.refresh_token(discovery["token_endpoint"], refresh_token=rt,
                                  timeout=HTTP_TIMEOUT_S)
    assert excinfo.value.error == "invalid_grant", excinfo.value
    assert_invalid_grant(raw_refresh(discovery, reg, rt))


def test_other_client_cannot_revoke(authrim_server, discovery, jwks, alice):
    """RFC 7009 section 2.1: a token of another client -> 400 unauthorized_client."""
    reg = new_refreshing_client(authrim_server)
    flow, _ = offline_login(authrim_server, discovery, jwks, alice, reg)
    at, rt = flow.token["access_token"], flow.token["refresh_token"]

    intruder_reg = new_web_client(authrim_server, prefix="authlib-intruder")
    intruder = session_for(intruder_reg)
    for token, hint in ((at, "access_token"), (at, None), (rt, "refresh_token"), (rt, None)):
        resp = revoke(intruder, discovery, token, hint=hint)
        assert_oauth_error(resp, 400, "unauthorized_client")

    # Nothing was revoked: the access token works, the refresh token refreshes.
    assert raw_userinfo(discovery, at).status_code == 200
    rs = session_for(new_service_client(authrim_server, "svc", prefix="authlib-rs"))
    assert introspect(rs, discovery, at)["active"] is True
    new = flow.client.refresh_token(discovery["token_endpoint"], refresh_token=rt,
                                    timeout=HTTP_TIMEOUT_S)
    assert new.get("access_token") and new.get("refresh_token") not in (None, rt), new


def test_revoking_unknown_token_is_ok(authrim_server, discovery):
    """RFC 7009 section 2.2: an invalid token is not an error."""
    client = session_for(new_web_client(authrim_server))
    for hint in (None, "access_token", "refresh_token"):
        assert_revoked_ok(revoke(client, discovery, generate_token(43), hint=hint))
    assert_revoked_ok(revoke(client, discovery, "eyJhbGciOiJSUzI1NiJ9.e30.c2ln"))


def test_client_credentials_through_authlib(authrim_server, discovery, jwks):
    """fetch_token(grant_type="client_credentials", scope=...) and scope checks."""
    reg = new_service_client(authrim_server, "orders:read orders:write", prefix="authlib-cc")
    client = session_for(reg)
    responses = capture_token_responses(client)

    token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                               scope="orders:read")
    resp = responses[-1]
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert resp.request.headers.get("Authorization", "").startswith("Basic "), resp.request.headers
    assert "grant_type=client_credentials" in resp.request.body, resp.request.body

    assert token.get("access_token"), token
    assert token.get("token_type") == "Bearer", token
    assert isinstance(token.get("expires_in"), int) and token["expires_in"] > 0, token
    assert token.get("scope") == "orders:read", token
    # RFC 6749 section 4.4.3: no refresh token; no user, so no ID token.
    assert "refresh_token" not in token and "id_token" not in token, token

    _, claims = verify_access_token(token["access_token"], jwks, discovery["issuer"])
    assert claims["sub"] == reg["client_id"], claims
    assert claims["client_id"] == reg["client_id"], claims
    assert claims["scope"] == "orders:read", claims

    rs = session_for(new_service_client(authrim_server, "svc", prefix="authlib-rs"))
    assert_active_access_token(introspect(rs, discovery, token["access_token"]), claims)

    with pytest.raises(OAuthError) as excinfo:
        client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                           scope="orders:delete")
    assert excinfo.value.error == "invalid_scope", excinfo.value
    assert responses[-1].status_code == 400, describe(responses[-1])
