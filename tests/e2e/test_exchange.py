"""End-to-end tests of Authrim's RFC 8693 token exchange driven by Authlib.

Alice logs in through a web client with the Authlib code flow (as in
test_authlib.py); a second confidential client, registered for the
token-exchange grant with an allowed audience and resource, then trades her
access token through Authlib's own ``OAuth2Session.fetch_token(url,
grant_type="urn:ietf:params:oauth:grant-type:token-exchange", ...)``:

* impersonation (subject token only): the response members of RFC 8693
  section 2.2.1 and a new JWT access token, verified against the JWKS, for
  Alice, issued to the exchanging client, aimed at the requested audience or
  resource;
* delegation (plus an actor token, the client-credentials token of a service
  client fetched with Authlib): the ``act`` claim of RFC 8693 section 4.1;
* errors as the client sees them (Authlib raises ``OAuthError``): a garbage
  subject token, an audience the client may not ask for, a wrong client secret;
* a subject token revoked by its own client (RFC 7009, through Authlib) can no
  longer be exchanged.
"""

from __future__ import annotations

from urllib.parse import parse_qs

import pytest
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from joserfc.errors import BadSignatureError, JoseError

from conftest import HTTP_TIMEOUT_S
from test_authlib import describe
from test_revocation import (
    assert_revoked_ok,
    capture_token_responses,
    login,
    new_service_client,
    new_web_client,
    revoke,
    session_for,
    verify_access_token,
)

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
AUDIENCE = "https://api.example.com/orders"
RESOURCE = "https://data.example.com/graphql"
USER_SCOPE = "openid profile email"
EXCHANGE_POLICY = {  # the documented defaults, spelt out
    "delegation": True,
    "impersonation": True,
    "subject_token_types": [ACCESS_TOKEN_TYPE],
    "may_outlive_subject": False,
}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def new_exchanging_client(server) -> dict:
    client_id = server.unique("authlib-exchange")
    reg = server.create_client(
        client_id=client_id,
        grant_types=[TOKEN_EXCHANGE],
        redirect_uris=[],
        scope=USER_SCOPE,
        allowed_audiences=[AUDIENCE],
        allowed_resources=[RESOURCE],
        token_exchange=EXCHANGE_POLICY,
    )
    assert reg["client_id"] == client_id, reg
    assert reg.get("client_secret"), reg
    assert reg.get("grant_types") == [TOKEN_EXCHANGE], reg
    return reg


def user_access_token(server, discovery, jwks, user):
    """Alice logs in through a fresh web client; returns (web flow, her access token)."""
    web = new_web_client(server)
    flow = login(server, discovery, jwks, user, web, USER_SCOPE)
    assert set(flow.token["scope"].split()) == set(USER_SCOPE.split()), flow.token
    return flow, flow.token["access_token"]


def exchange(client: OAuth2Session, discovery: dict, subject_token: str, **params):
    """One token-exchange request through Authlib's fetch_token."""
    return client.fetch_token(
        discovery["token_endpoint"],
        grant_type=TOKEN_EXCHANGE,
        subject_token=subject_token,
        subject_token_type=ACCESS_TOKEN_TYPE,
        **params,
    )


def check_exchange_response(token: dict, resp, scope: str):
    """RFC 8693 section 2.2.1 response, and what Authlib sent for it."""
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert resp.request.headers.get("Authorization", "").startswith("Basic "), (
        resp.request.headers)
    body = resp.request.body
    form = parse_qs(body if isinstance(body, str) else body.decode())
    assert form.get("grant_type") == [TOKEN_EXCHANGE], form
    assert form.get("subject_token_type") == [ACCESS_TOKEN_TYPE], form
    assert "client_secret" not in form, form

    assert token.get("access_token"), token
    assert token.get("issued_token_type") == ACCESS_TOKEN_TYPE, token
    assert token.get("token_type") == "Bearer", token
    assert isinstance(token.get("expires_in"), int) and token["expires_in"] > 0, token
    assert token.get("scope") == scope, token
    assert "refresh_token" not in token and "id_token" not in token, token
    return form


def exchange_error(client: OAuth2Session, responses: list, call) -> tuple[str, int]:
    """Run an exchange expected to fail; returns (Authlib's OAuthError.error, HTTP status)."""
    before = len(responses)
    with pytest.raises(OAuthError) as excinfo:
        call()
    assert len(responses) == before + 1, responses
    resp = responses[-1]
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert "access_token" not in resp.json(), describe(resp)
    return excinfo.value.error, resp.status_code


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_discovery_advertises_token_exchange(discovery):
    assert TOKEN_EXCHANGE in discovery.get("grant_types_supported", []), discovery


def test_impersonation_exchange(authrim_server, discovery, jwks, alice):
    """Alice's access token -> a narrower token for the orders API, no actor."""
    _, subject = user_access_token(authrim_server, discovery, jwks, alice)
    _, subject_claims = verify_access_token(subject, jwks, discovery["issuer"])

    reg = new_exchanging_client(authrim_server)
    client = session_for(reg)
    responses = capture_token_responses(client)
    token = exchange(client, discovery, subject, audience=AUDIENCE, scope="openid profile")
    assert len(responses) == 1, responses
    form = check_exchange_response(token, responses[0], "openid profile")
    assert form.get("subject_token") == [subject], form
    assert form.get("audience") == [AUDIENCE], form
    assert form.get("scope") == ["openid profile"], form
    assert "actor_token" not in form, form

    new = token["access_token"]
    assert new != subject
    header, claims = verify_access_token(new, jwks, discovery["issuer"])
    assert header["typ"] == "at+jwt", header
    assert claims["sub"] == alice["id"] == subject_claims["sub"], claims
    assert claims["client_id"] == reg["client_id"], claims
    assert claims["aud"] == [AUDIENCE], claims
    assert claims["scope"] == "openid profile", claims
    assert "act" not in claims, claims
    assert claims["jti"] != subject_claims["jti"], (claims, subject_claims)
    # may_outlive_subject=false: the new token dies no later than the subject token.
    assert claims["exp"] <= subject_claims["exp"], (claims, subject_claims)

    # The verification is real: a tampered signature is refused.
    head, payload, sig = new.split(".")
    flipped = sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")
    with pytest.raises((BadSignatureError, JoseError)):
        verify_access_token(f"{head}.{payload}.{flipped}", jwks, discovery["issuer"])

    # A resource instead of an audience; no scope asked -> the subject's scope.
    token = exchange(client, discovery, subject, resource=RESOURCE)
    check_exchange_response(token, responses[-1], USER_SCOPE)
    _, claims = verify_access_token(token["access_token"], jwks, discovery["issuer"])
    assert claims["aud"] == [RESOURCE], claims
    assert claims["sub"] == alice["id"] and claims["client_id"] == reg["client_id"], claims


def test_delegation_exchange(authrim_server, discovery, jwks, alice):
    """With a service's client-credentials token as actor_token: the act claim."""
    _, subject = user_access_token(authrim_server, discovery, jwks, alice)
    _, subject_claims = verify_access_token(subject, jwks, discovery["issuer"])

    svc = new_service_client(authrim_server, "svc")
    svc_client = session_for(svc)
    actor = svc_client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials")
    assert actor.get("access_token") and actor.get("token_type") == "Bearer", actor
    _, actor_claims = verify_access_token(actor["access_token"], jwks, discovery["issuer"])
    assert actor_claims["sub"] == actor_claims["client_id"] == svc["client_id"], actor_claims

    reg = new_exchanging_client(authrim_server)
    client = session_for(reg)
    responses = capture_token_responses(client)
    token = exchange(client, discovery, subject, audience=AUDIENCE, scope="openid profile",
                     actor_token=actor["access_token"], actor_token_type=ACCESS_TOKEN_TYPE)
    form = check_exchange_response(token, responses[-1], "openid profile")
    assert form.get("actor_token") == [actor["access_token"]], form
    assert form.get("actor_token_type") == [ACCESS_TOKEN_TYPE], form

    header, claims = verify_access_token(token["access_token"], jwks, discovery["issuer"])
    assert header["typ"] == "at+jwt", header
    assert claims["sub"] == alice["id"], claims
    assert claims["client_id"] == reg["client_id"], claims
    assert claims["aud"] == [AUDIENCE], claims
    assert claims["scope"] == "openid profile", claims
    assert claims.get("act") == {"sub": svc["client_id"], "client_id": svc["client_id"]}, claims
    assert claims["exp"] <= min(subject_claims["exp"], actor_claims["exp"]), (
        claims, subject_claims, actor_claims)


def test_exchange_errors(authrim_server, discovery, jwks, alice):
    """Garbage subject token, a forbidden audience, a wrong secret, as Authlib sees them."""
    _, subject = user_access_token(authrim_server, discovery, jwks, alice)
    reg = new_exchanging_client(authrim_server)
    client = session_for(reg)
    responses = capture_token_responses(client)

    error, status = exchange_error(client, responses, lambda: exchange(
        client, discovery, generate_token(40), audience=AUDIENCE))
    assert (error, status) == ("invalid_request", 400), describe(responses[-1])

    error, status = exchange_error(client, responses, lambda: exchange(
        client, discovery, subject, audience="https://evil.example.com/"))
    assert (error, status) == ("invalid_target", 400), describe(responses[-1])

    wrong = OAuth2Session(client_id=reg["client_id"], client_secret=reg["client_secret"] + "x",
                          token_endpoint_auth_method="client_secret_basic",
                          default_timeout=HTTP_TIMEOUT_S)
    wrong_responses = capture_token_responses(wrong)
    error, status = exchange_error(wrong, wrong_responses, lambda: exchange(
        wrong, discovery, subject, audience=AUDIENCE))
    assert (error, status) == ("invalid_client", 401), describe(wrong_responses[-1])
    # RFC 6749 section 5.2: Basic credentials refused -> a Basic challenge.
    assert wrong_responses[-1].headers.get("WWW-Authenticate", "").startswith("Basic"), (
        describe(wrong_responses[-1]))

    # None of that spoilt anything: the right request still works.
    token = exchange(client, discovery, subject, audience=AUDIENCE)
    check_exchange_response(token, responses[-1], USER_SCOPE)


def test_revoked_subject_token_cannot_be_exchanged(authrim_server, discovery, jwks, alice):
    """The web client revokes Alice's access token (RFC 7009); exchanging it -> invalid_request."""
    flow, subject = user_access_token(authrim_server, discovery, jwks, alice)
    reg = new_exchanging_client(authrim_server)
    client = session_for(reg)
    responses = capture_token_responses(client)

    token = exchange(client, discovery, subject, audience=AUDIENCE)
    check_exchange_response(token, responses[-1], USER_SCOPE)

    assert_revoked_ok(revoke(flow.client, discovery, subject, hint="access_token"))

    error, status = exchange_error(client, responses, lambda: exchange(
        client, discovery, subject, audience=AUDIENCE))
    assert (error, status) == ("invalid_request", 400), describe(responses[-1])
