"""End-to-end tests of Authrim's refresh tokens driven by Authlib.

A confidential relying party allowed the ``refresh_token`` grant logs Alice in
with ``offline_access`` (the same Authlib + HTML-form flow as test_authlib.py),
then refreshes through Authlib itself: the explicit
``OAuth2Session.refresh_token(...)`` call and the automatic refresh that
``OAuth2Session`` performs (``ensure_active_token`` + ``update_token`` hook)
when its access token has expired. Checked from the client's side: rotation
(a new refresh token every time), the refreshed ID token (OpenID Connect Core
12.2), userinfo with the new access token, refresh-token reuse detection
(RFC 9700 / OAuth 2.1 rotation: replaying a superseded token revokes the whole
family, access tokens included) and scope narrowing (RFC 6749 section 6).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs

import pytest
import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from conftest import ALICE_CLAIMS, HTTP_TIMEOUT_S
from test_authlib import (
    ALL_SCOPES,
    EMAIL_CLAIMS,
    REDIRECT_URI,
    assert_claims,
    describe,
    run_code_flow,
    verify_id_token,
)

OFFLINE_SCOPE = "openid email offline_access"
ROTATIONS = 5


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def new_refreshing_client(server) -> dict:
    """A confidential client (client_secret_basic) that may use refresh tokens."""
    client_id = server.unique("authlib-refresh")
    reg = server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code", "refresh_token"],
        scope=ALL_SCOPES,
    )
    assert reg["client_id"] == client_id, reg
    assert reg.get("client_secret"), reg
    assert set(reg.get("grant_types", [])) >= {"authorization_code", "refresh_token"}, reg
    return reg


def offline_login(server, discovery, jwks, user, reg):
    """Log in with offline_access; returns (flow, verified first ID token claims)."""
    flow = run_code_flow(server, discovery, user, reg["client_id"], reg["client_secret"],
                         "client_secret_basic", OFFLINE_SCOPE)
    assert set(flow.token["scope"].split()) == set(OFFLINE_SCOPE.split()), flow.token
    assert flow.token.get("refresh_token"), (
        f"no refresh_token for scope {OFFLINE_SCOPE!r} and grant_types incl. refresh_token: "
        f"{flow.token!r}"
    )
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"],
                             reg["client_id"], flow.nonce, flow.token["access_token"])
    assert claims["sub"] == user["id"], (dict(claims), user)
    return flow, claims


def capture_refresh_responses(client: OAuth2Session) -> list[requests.Response]:
    """Record every raw HTTP response Authlib gets for a refresh request."""
    seen: list[requests.Response] = []

    def hook(resp):
        seen.append(resp)
        return resp

    client.register_compliance_hook("refresh_token_response", hook)
    return seen


def sent_form(resp: requests.Response) -> dict:
    body = resp.request.body
    return parse_qs(body if isinstance(body, str) else body.decode())


def check_refresh_response(resp: requests.Response, presented: str, reg: dict):
    """The raw HTTP exchange of one Authlib refresh: what went out, what came back."""
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    # Authlib authenticated with HTTP Basic and sent a refresh_token grant.
    assert resp.request.headers.get("Authorization", "").startswith("Basic "), resp.request.headers
    form = sent_form(resp)
    assert form.get("grant_type") == ["refresh_token"], form
    assert form.get("refresh_token") == [presented], form
    assert "client_secret" not in form, form


def check_refreshed_token(new: dict, previous: dict, seen_refresh_tokens: list,
                          seen_access_tokens: list, first_claims, jwks, discovery, reg,
                          expected_scope: str):
    """A rotated token response and its ID token (OpenID Connect Core 12.2)."""
    assert new.get("access_token"), new
    assert new.get("token_type") == "Bearer", new
    assert isinstance(new.get("expires_in"), int) and new["expires_in"] > 0, new
    assert set(new.get("scope", "").split()) == set(expected_scope.split()), new

    # Rotation: a fresh refresh token and a fresh access token, never seen before.
    assert new.get("refresh_token"), f"refresh response without a refresh_token: {new!r}"
    assert new["refresh_token"] != previous["refresh_token"], "refresh token was not rotated"
    assert new["refresh_token"] not in seen_refresh_tokens, "an old refresh token came back"
    assert new["access_token"] not in seen_access_tokens, "an old access token came back"

    assert new.get("id_token"), f"refresh with openid scope returned no id_token: {new!r}"
    claims = verify_id_token(new["id_token"], jwks, discovery["issuer"], reg["client_id"],
                             None, new["access_token"])
    assert claims["sub"] == first_claims["sub"], (dict(claims), dict(first_claims))
    assert claims["iss"] == first_claims["iss"], (dict(claims), dict(first_claims))
    assert claims["aud"] == first_claims["aud"], (dict(claims), dict(first_claims))
    assert claims["iat"] >= first_claims["iat"], (dict(claims), dict(first_claims))
    if "auth_time" in first_claims:
        # 12.2: auth_time is the original authentication, not the refresh.
        assert claims.get("auth_time") == first_claims["auth_time"], (
            dict(claims), dict(first_claims))
    # 12.2: no nonce on refresh (or, if present, the original one).
    assert claims.get("nonce") in (None, first_claims["nonce"]), dict(claims)
    return claims


def userinfo_with(client: OAuth2Session, discovery: dict, access_token: str) -> dict:
    """Userinfo through the Authlib session, which must present ``access_token``."""
    resp = client.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.request.headers["Authorization"] == f"Bearer {access_token}", (
        "Authlib did not switch to the refreshed access token")
    return resp.json()


def raw_refresh(discovery, reg, refresh_token: str, **extra) -> requests.Response:
    """A plain POST to the token endpoint (HTTP Basic), outside Authlib."""
    return requests.post(
        discovery["token_endpoint"],
        data={"grant_type": "refresh_token", "refresh_token": refresh_token, **extra},
        auth=(reg["client_id"], reg["client_secret"]),
        timeout=HTTP_TIMEOUT_S,
    )


def assert_invalid_grant(resp: requests.Response):
    assert resp.status_code == 400, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert resp.json().get("error") == "invalid_grant", describe(resp)
    assert "access_token" not in resp.json(), describe(resp)
    assert "refresh_token" not in resp.json(), describe(resp)


def raw_userinfo(discovery, access_token: str) -> requests.Response:
    return requests.get(
        discovery["userinfo_endpoint"],
        headers={"Authorization": f"Bearer {access_token}"},
        timeout=HTTP_TIMEOUT_S,
    )


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_refresh_rotation_through_authlib(authrim_server, discovery, jwks, alice):
    """offline_access login, then Authlib refreshes 1 + 5 times, always rotating."""
    reg = new_refreshing_client(authrim_server)
    flow, first_claims = offline_login(authrim_server, discovery, jwks, alice, reg)
    client = flow.client
    responses = capture_refresh_responses(client)

    previous = dict(flow.token)
    seen_rt = [previous["refresh_token"]]
    seen_at = [previous["access_token"]]

    for i in range(1 + ROTATIONS):
        presented = previous["refresh_token"]
        new = client.refresh_token(discovery["token_endpoint"], refresh_token=presented,
                                   timeout=HTTP_TIMEOUT_S)
        assert len(responses) == i + 1, responses
        check_refresh_response(responses[-1], presented, reg)
        # Authlib sends the session's scope by default: the full grant here.
        assert set(sent_form(responses[-1])["scope"][0].split()) == set(OFFLINE_SCOPE.split())
        claims = check_refreshed_token(new, previous, seen_rt, seen_at, first_claims, jwks,
                                       discovery, reg, OFFLINE_SCOPE)
        # Authlib now holds the new token and uses it for the resource request.
        assert client.token["access_token"] == new["access_token"]
        assert client.token["refresh_token"] == new["refresh_token"]
        userinfo = userinfo_with(client, discovery, new["access_token"])
        assert userinfo["sub"] == claims["sub"] == alice["id"], userinfo
        assert_claims(userinfo, EMAIL_CLAIMS, present=True)
        assert "name" not in userinfo and "phone_number" not in userinfo, userinfo

        seen_rt.append(new["refresh_token"])
        seen_at.append(new["access_token"])
        previous = dict(new)

    assert len(set(seen_rt)) == len(seen_rt) == 2 + ROTATIONS, seen_rt
    assert len(set(seen_at)) == len(seen_at) == 2 + ROTATIONS, seen_at
    # The latest refresh token is still good for a plain client too.
    resp = raw_refresh(discovery, reg, previous["refresh_token"])
    assert resp.status_code == 200, describe(resp)
    assert resp.json().get("refresh_token") not in seen_rt, resp.json()


def test_automatic_refresh_via_ensure_active_token(authrim_server, discovery, jwks, alice):
    """OAuth2Session refreshes an expired token by itself and calls update_token."""
    reg = new_refreshing_client(authrim_server)
    flow, first_claims = offline_login(authrim_server, discovery, jwks, alice, reg)

    updates: list[tuple[dict, str | None]] = []

    def update_token(token, refresh_token=None, access_token=None):
        updates.append((dict(token), refresh_token))

    # The app restores its stored token, which has expired in the meantime.
    stored = dict(flow.token)
    stored["expires_at"] = int(time.time()) - 10
    client = OAuth2Session(
        client_id=reg["client_id"],
        client_secret=reg["client_secret"],
        token_endpoint_auth_method="client_secret_basic",
        token_endpoint=discovery["token_endpoint"],
        token=stored,
        update_token=update_token,
        default_timeout=HTTP_TIMEOUT_S,
    )
    responses = capture_refresh_responses(client)
    assert client.token.is_expired()

    seen_rt = [stored["refresh_token"]]
    seen_at = [stored["access_token"]]
    previous = stored
    for i in range(ROTATIONS):
        userinfo = client.get(discovery["userinfo_endpoint"])  # triggers the refresh
        assert len(responses) == i + 1, "Authlib did not refresh the expired token"
        check_refresh_response(responses[-1], previous["refresh_token"], reg)
        # No session scope: Authlib omits scope and the server keeps the full grant.
        assert "scope" not in sent_form(responses[-1]), sent_form(responses[-1])

        assert len(updates) == i + 1, updates
        new, old_rt = updates[-1]
        assert old_rt == previous["refresh_token"], (old_rt, previous)
        check_refreshed_token(new, previous, seen_rt, seen_at, first_claims, jwks, discovery,
                              reg, OFFLINE_SCOPE)
        assert userinfo.status_code == 200, describe(userinfo)
        assert userinfo.request.headers["Authorization"] == f"Bearer {new['access_token']}"
        assert userinfo.json()["sub"] == alice["id"], userinfo.json()
        assert userinfo.json().get("email") == ALICE_CLAIMS["email"], userinfo.json()

        seen_rt.append(new["refresh_token"])
        seen_at.append(new["access_token"])
        previous = new
        # Expire it again so that the next request refreshes once more.
        client.token["expires_at"] = int(time.time()) - 10

    # A fresh token is used as is: no refresh, no update.
    client.token["expires_at"] = int(time.time()) + 3600
    resp = client.get(discovery["userinfo_endpoint"])
    assert resp.status_code == 200, describe(resp)
    assert len(responses) == ROTATIONS and len(updates) == ROTATIONS


def test_superseded_refresh_token_revokes_the_family(authrim_server, discovery, jwks, alice):
    """Replaying a rotated-out refresh token is theft: the whole family dies."""
    reg = new_refreshing_client(authrim_server)
    flow, first_claims = offline_login(authrim_server, discovery, jwks, alice, reg)
    client = flow.client
    original = dict(flow.token)

    # Two Authlib rotations: original -> second -> latest.
    second = dict(client.refresh_token(discovery["token_endpoint"],
                                       refresh_token=original["refresh_token"],
                                       timeout=HTTP_TIMEOUT_S))
    latest = dict(client.refresh_token(discovery["token_endpoint"],
                                       refresh_token=second["refresh_token"],
                                       timeout=HTTP_TIMEOUT_S))
    assert len({original["refresh_token"], second["refresh_token"],
                latest["refresh_token"]}) == 3
    assert userinfo_with(client, discovery, latest["access_token"])["sub"] == alice["id"]
    assert raw_userinfo(discovery, original["access_token"]).status_code == 200

    # The superseded token from the previous rotation is presented (an attacker
    # holding a copy, or a client that lost the response): invalid_grant ...
    assert_invalid_grant(raw_refresh(discovery, reg, second["refresh_token"]))

    # ... and the family is revoked: the latest refresh token is refused too,
    resp = raw_refresh(discovery, reg, latest["refresh_token"])
    assert_invalid_grant(resp)
    with pytest.raises(OAuthError) as excinfo:
        client.refresh_token(discovery["token_endpoint"], refresh_token=latest["refresh_token"],
                             timeout=HTTP_TIMEOUT_S)
    assert excinfo.value.error == "invalid_grant", excinfo.value
    # as is the very first one,
    assert_invalid_grant(raw_refresh(discovery, reg, original["refresh_token"]))

    # and so are the access tokens issued from the family (RFC 6750 invalid_token).
    for label, at in (("latest", latest["access_token"]), ("login", original["access_token"])):
        resp = raw_userinfo(discovery, at)
        assert resp.status_code == 401, f"{label} access token: {describe(resp)}"
        assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), describe(resp)


def test_refresh_narrows_scope_through_authlib(authrim_server, discovery, jwks, alice):
    """refresh_token(..., scope="openid") answers with scope openid only."""
    reg = new_refreshing_client(authrim_server)
    flow, first_claims = offline_login(authrim_server, discovery, jwks, alice, reg)
    client = flow.client
    responses = capture_refresh_responses(client)
    original = dict(flow.token)

    narrowed = dict(client.refresh_token(discovery["token_endpoint"],
                                         refresh_token=original["refresh_token"],
                                         scope="openid", timeout=HTTP_TIMEOUT_S))
    check_refresh_response(responses[-1], original["refresh_token"], reg)
    assert sent_form(responses[-1]).get("scope") == ["openid"], sent_form(responses[-1])
    assert narrowed.get("scope") == "openid", narrowed
    check_refreshed_token(narrowed, original, [original["refresh_token"]],
                          [original["access_token"]], first_claims, jwks, discovery, reg,
                          "openid")
    # The narrowed access token no longer releases the email claims.
    userinfo = userinfo_with(client, discovery, narrowed["access_token"])
    assert userinfo["sub"] == alice["id"], userinfo
    assert_claims(userinfo, EMAIL_CLAIMS, present=False)

    # Asking for a scope that was never granted is invalid_scope, not theft:
    # the current refresh token survives the refused request.
    with pytest.raises(OAuthError) as excinfo:
        client.refresh_token(discovery["token_endpoint"],
                             refresh_token=narrowed["refresh_token"],
                             scope="openid phone", timeout=HTTP_TIMEOUT_S)
    assert excinfo.value.error == "invalid_scope", excinfo.value
    again = dict(client.refresh_token(discovery["token_endpoint"],
                                      refresh_token=narrowed["refresh_token"],
                                      scope="openid email", timeout=HTTP_TIMEOUT_S))
    assert set(again.get("scope", "").split()) == {"openid", "email"}, again
    assert again.get("refresh_token") not in (None, narrowed["refresh_token"]), again
    assert_claims(userinfo_with(client, discovery, again["access_token"]), EMAIL_CLAIMS,
                  present=True)
