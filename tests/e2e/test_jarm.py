"""JARM (JWT Secured Authorization Response Mode) checked by joserfc, a third-party JOSE library.

Authlib builds the authorization request with a ``response_mode`` of JARM; the single
``response`` parameter is taken from where the mode puts it (query, fragment, a form_post
page), and joserfc verifies it as JARM section 2.4 tells a client to: the signature against
the published JWKS, ``iss`` the discovery document's issuer, ``aud`` the client, ``exp`` in
the future. The code in it is then redeemed by Authlib. A response altered on the way, or
presented to another client, is refused by the same checks.
"""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import BadSignatureError, InvalidClaimError, UnsupportedAlgorithmError
from joserfc.jwk import KeySet

from conftest import HTTP_TIMEOUT_S
from test_authlib import CLOCK_LEEWAY_S, REDIRECT_URI, browser_authorize, describe, find_form

# JARM section 2.1 recommends ten minutes at most; Authrim's default is that.
MAX_LIFETIME_S = 600


def jarm_claims(token: str, jwks: dict, issuer: str, client_id: str, algorithms=("RS256",)) -> dict:
    """The response JWT's claims, verified as a JARM client must (section 2.4)."""
    decoded = jwt.decode(token, KeySet.import_key_set(jwks), algorithms=list(algorithms))
    registry = jwt.JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY_S,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        exp={"essential": True},
    )
    registry.validate(decoded.claims)
    assert decoded.claims["exp"] <= time.time() + MAX_LIFETIME_S + CLOCK_LEEWAY_S, decoded.claims
    return decoded.claims


def only_response(params: dict) -> str:
    """A JARM response carries nothing but ``response`` (no separate state or iss)."""
    assert list(params) == ["response"], params
    return params["response"]


def split(location: str) -> tuple[dict, dict]:
    loc = urlsplit(location)
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, location
    query = {k: v[0] for k, v in parse_qs(loc.query).items()}
    fragment = {k: v[0] for k, v in parse_qs(loc.fragment).items()}
    return query, fragment


def session_for(reg: dict) -> OAuth2Session:
    return OAuth2Session(client_id=reg["client_id"], client_secret=reg.get("client_secret"),
                         scope="openid profile", redirect_uri=REDIRECT_URI,
                         code_challenge_method="S256")


def test_query_jwt_code_flow_verified_by_joserfc_and_redeemed_by_authlib(authrim_server, discovery, jwks, alice):
    assert {"jwt", "query.jwt", "fragment.jwt", "form_post.jwt"} <= set(discovery["response_modes_supported"])
    assert "RS256" in discovery["authorization_signing_alg_values_supported"], discovery
    reg = authrim_server.create_client(client_id=authrim_server.unique("jarm"), redirect_uris=[REDIRECT_URI],
                                       token_endpoint_auth_method="client_secret_basic", scope="openid profile email")
    client = session_for(reg)
    verifier = generate_token(48)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], response_mode="jwt",
                                                 code_verifier=verifier)
    browser = requests.Session()
    location, _ = browser_authorize(authrim_server, url, alice["username"], alice["password"], browser)
    query, fragment = split(location)
    assert not fragment, location
    response = only_response(query)
    claims = jarm_claims(response, jwks, discovery["issuer"], reg["client_id"])
    assert claims["state"] == state and claims["code"], claims

    # What a client's checks catch: another client's response, and a changed one.
    with pytest.raises(InvalidClaimError):
        jarm_claims(response, jwks, discovery["issuer"], "another-client")
    with pytest.raises(InvalidClaimError):
        jarm_claims(response, jwks, "https://mix-up.example", reg["client_id"])
    header, _, signature = response.split(".")
    forged = base64.urlsafe_b64encode(json.dumps({**claims, "code": "forged"}).encode()).rstrip(b"=").decode()
    with pytest.raises(BadSignatureError):
        jarm_claims(f"{header}.{forged}.{signature}", jwks, discovery["issuer"], reg["client_id"])

    token = client.fetch_token(discovery["token_endpoint"], code=claims["code"], code_verifier=verifier,
                               grant_type="authorization_code")
    assert token.get("id_token") and token.get("access_token"), token

    # The same browser, signed in: form_post.jwt posts the response alone, and an error
    # (prompt=none with a consent the client never got) is a JARM response too.
    params = {"response_type": "code", "client_id": reg["client_id"], "redirect_uri": REDIRECT_URI,
              "scope": "openid profile", "state": "fp", "response_mode": "form_post.jwt", "prompt": "none"}
    resp = browser.get(f"{discovery['authorization_endpoint']}?{urlencode(params)}", allow_redirects=False,
                       timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    form = find_form(resp.text, urlsplit(REDIRECT_URI).path)
    fields = {name: attrs["value"] for name, attrs in form.inputs.items()}
    claims = jarm_claims(only_response(fields), jwks, discovery["issuer"], reg["client_id"])
    assert claims["state"] == "fp" and claims["code"], claims
    params.update(response_mode="fragment.jwt", scope="openid profile email")
    resp = browser.get(f"{discovery['authorization_endpoint']}?{urlencode(params)}", allow_redirects=False,
                       timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    _, fragment = split(resp.headers["Location"])
    claims = jarm_claims(only_response(fragment), jwks, discovery["issuer"], reg["client_id"])
    assert claims["error"] == "consent_required" and "code" not in claims, claims


def test_hybrid_jwt_goes_in_the_fragment_and_never_in_the_query(authrim_server, discovery, jwks, alice):
    reg = authrim_server.create_client(client_id=authrim_server.unique("jarm-hybrid"), redirect_uris=[REDIRECT_URI],
                                       token_endpoint_auth_method="client_secret_basic", scope="openid profile",
                                       grant_types=["authorization_code", "implicit"],
                                       response_types=["code", "code id_token"])
    client = session_for(reg)
    url, state = client.create_authorization_url(discovery["authorization_endpoint"], response_type="code id_token",
                                                 response_mode="jwt", nonce=generate_token(20))
    location, _ = browser_authorize(authrim_server, url, alice["username"], alice["password"])
    query, fragment = split(location)
    assert not query, location
    claims = jarm_claims(only_response(fragment), jwks, discovery["issuer"], reg["client_id"])
    assert claims["state"] == state and claims["code"] and claims["id_token"], claims

    # JARM 2.3.1: query.jwt with an ID token is refused, and not in the query.
    url, _ = client.create_authorization_url(discovery["authorization_endpoint"], response_type="code id_token",
                                             response_mode="query.jwt", nonce=generate_token(20))
    resp = requests.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    query, fragment = split(resp.headers["Location"])
    assert not query, resp.headers["Location"]
    claims = jarm_claims(only_response(fragment), jwks, discovery["issuer"], reg["client_id"])
    assert claims["error"] == "invalid_request", claims


def test_a_client_chooses_its_algorithm(start_authrim, alice):
    server = start_authrim("jarm-es256", {"AUTHRIM_SIGNING_ALGORITHMS": "RS256 ES256"})
    discovery = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    assert discovery["authorization_signing_alg_values_supported"] == ["RS256", "ES256"], discovery
    server.create_user(alice["username"], alice["password"], {})
    reg = server.create_client(client_id=server.unique("jarm-es"), redirect_uris=[REDIRECT_URI],
                               token_endpoint_auth_method="client_secret_basic", scope="openid profile",
                               authorization_signed_response_alg="ES256")
    url, _ = session_for(reg).create_authorization_url(discovery["authorization_endpoint"],
                                                       response_mode="query.jwt", code_verifier=generate_token(48))
    location, _ = browser_authorize(server, url, alice["username"], alice["password"])
    response = only_response(split(location)[0])
    claims = jarm_claims(response, jwks, discovery["issuer"], reg["client_id"], algorithms=("ES256",))
    assert claims["code"], claims
    # Signed with what the client registered, not the default: an RS256-only check refuses it.
    with pytest.raises(UnsupportedAlgorithmError):
        jarm_claims(response, jwks, discovery["issuer"], reg["client_id"], algorithms=("RS256",))


OPENID_CLIENT = Path(__file__).resolve().parent / "openid-client"


@pytest.mark.parametrize("mode", ["jwt", "query.jwt"])
def test_openid_client_takes_the_jwt_response(authrim_server, alice, run_relying_party, mode):
    """openid-client's own JARM support (``useJwtResponseMode``, openid-client/jarm.mjs): it
    verifies the response JWT, redeems the code in it, and refuses one altered on the way."""
    if not (OPENID_CLIENT / "node_modules" / "openid-client").is_dir():
        pytest.fail("needs `npm ci` in tests/e2e/openid-client (scripts/test.sh does it)", pytrace=False)
    client_id, seen = run_relying_party("openid-client-jarm", ["node", str(OPENID_CLIENT / "jarm.mjs")],
                                        OPENID_CLIENT, extra_env={"RESPONSE_MODE": mode})
    assert seen["callback_params"] == ["response"], seen
    assert seen["id_token"] == {"sub": alice["id"], "aud": client_id}, seen
    assert "signature verification failed" in seen["forged_error"], seen
