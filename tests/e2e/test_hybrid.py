"""Hybrid and implicit responses checked by Authlib, a third-party relying party.

Authlib builds the authorization request (``response_type=code id_token token`` and
``id_token token``, with a nonce), the response is read from the redirect's fragment, and
Authlib's own ``HybridIDToken`` / ``ImplicitIDToken`` verify the ID token: signature against
the published JWKS, ``iss``, ``aud``, ``nonce``, and ``c_hash`` / ``at_hash`` recomputed
from the code and access token that came with it (OpenID Connect Core 3.3.2.11, 3.2.2.10).
The hybrid code is then redeemed by Authlib at the token endpoint.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from authlib.oidc.core import HybridIDToken, ImplicitIDToken
from joserfc import jwt
from joserfc.errors import InvalidClaimError, MissingClaimError
from joserfc.jwk import KeySet

from conftest import HTTP_TIMEOUT_S
from test_authlib import CLOCK_LEEWAY_S, REDIRECT_URI, browser_authorize, describe

ALL_TYPES = ["code", "code id_token", "code token", "code id_token token", "id_token", "id_token token"]


def register(server) -> dict:
    return server.create_client(
        client_id=server.unique("hybrid"),
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code", "implicit"],
        response_types=ALL_TYPES,
        scope="openid profile email",
    )


def authorize(server, discovery, alice, client: OAuth2Session, response_type: str):
    """Sign in through the pages; return (fragment parameters, nonce, state)."""
    nonce = generate_token(20)
    url, state = client.create_authorization_url(
        discovery["authorization_endpoint"], response_type=response_type, nonce=nonce)
    location, _ = browser_authorize(server, url, alice["username"], alice["password"])
    loc = urlsplit(location)
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, location
    assert not loc.query, f"nothing may travel in the query: {location}"
    params = {k: v[0] for k, v in parse_qs(loc.fragment).items()}
    assert "error" not in params, location
    assert params["state"] == state and params["iss"] == discovery["issuer"], params
    return params, nonce


def id_token_claims(cls, params, jwks, discovery, client_id, nonce, **hashed):
    decoded = jwt.decode(params["id_token"], KeySet.import_key_set(jwks), algorithms=["RS256"])
    options = {"iss": {"essential": True, "value": discovery["issuer"]},
               "aud": {"essential": True, "value": client_id}, "nonce": {"essential": True}}
    claims = cls(decoded.claims, decoded.header, options=options,
                 params={"client_id": client_id, "nonce": nonce, **hashed})
    claims.validate(leeway=CLOCK_LEEWAY_S)
    return claims


def test_hybrid_code_id_token_token_verified_by_authlib(authrim_server, discovery, jwks, alice):
    reg = register(authrim_server)
    client_id = reg["client_id"]
    client = OAuth2Session(client_id=client_id, client_secret=reg["client_secret"],
                           scope="openid profile email", redirect_uri=REDIRECT_URI)
    params, nonce = authorize(authrim_server, discovery, alice, client, "code id_token token")
    assert params["token_type"] == "Bearer" and "refresh_token" not in params, params

    hashed = {"code": params["code"], "access_token": params["access_token"]}
    claims = id_token_claims(HybridIDToken, params, jwks, discovery, client_id, nonce, **hashed)
    assert claims["c_hash"] and claims["at_hash"], dict(claims)
    # Authlib's checks bite: another code or access token does not match the hashes.
    for other in ({"code": params["code"] + "x", "access_token": params["access_token"]},
                  {"code": params["code"], "access_token": params["access_token"] + "x"}):
        with pytest.raises(InvalidClaimError):
            id_token_claims(HybridIDToken, params, jwks, discovery, client_id, nonce, **other)

    # The front channel's access token works at userinfo; the code redeems as usual.
    info = requests.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S,
                        headers={"Authorization": f"Bearer {params['access_token']}"})
    assert info.status_code == 200, describe(info)
    token = client.fetch_token(discovery["token_endpoint"], code=params["code"],
                               grant_type="authorization_code")
    assert token.get("id_token") and token.get("access_token"), token
    assert token["access_token"] != params["access_token"]


def test_implicit_id_token_token_verified_by_authlib(authrim_server, discovery, jwks, alice):
    reg = register(authrim_server)
    client_id = reg["client_id"]
    client = OAuth2Session(client_id=client_id, scope="openid profile email", redirect_uri=REDIRECT_URI)
    params, nonce = authorize(authrim_server, discovery, alice, client, "id_token token")
    assert "code" not in params, params
    claims = id_token_claims(ImplicitIDToken, params, jwks, discovery, client_id, nonce,
                             access_token=params["access_token"])
    assert claims["at_hash"], dict(claims)
    with pytest.raises(InvalidClaimError):
        id_token_claims(ImplicitIDToken, params, jwks, discovery, client_id, nonce,
                        access_token=params["access_token"] + "x")

    # response_type=id_token: no access token, so the scope's claims are in the ID token
    # (OpenID Connect Core 5.4), and there is no at_hash to check.
    params, nonce = authorize(authrim_server, discovery, alice, client, "id_token")
    assert "access_token" not in params, params
    claims = id_token_claims(ImplicitIDToken, params, jwks, discovery, client_id, nonce)
    assert claims["email"] == "alice@example.com" and claims["name"], dict(claims)
    # Authlib insists on an at_hash when it is told an access token came with the ID token.
    with pytest.raises(MissingClaimError):
        id_token_claims(ImplicitIDToken, params, jwks, discovery, client_id, nonce,
                        access_token="not-issued")
