"""DPoP (RFC 9449) end to end, with proofs made by hand.

Authlib 1.9.9 has no DPoP support: nothing in it makes or sends proofs (its own
``authlib/oauth2/drafts/id_jag.py`` says "Authlib supports neither DPoP nor mTLS"), and an
``OAuth2Session`` holding a token of ``token_type`` DPoP cannot use it (its ``TokenAuth`` knows
only ``bearer``: ``UnsupportedTokenTypeError``, checked below). So the proofs here are JWSs
signed with joserfc (the JOSE library Authlib signs with) by ES256 (P-256), EdDSA (Ed25519)
and, for client credentials, RS256 and PS256 keys (an ES384 proof is refused: not in the
default ``dpop_signing_alg_values_supported``), and sent in the ``DPoP`` header:
to the token endpoint through Authlib's own ``fetch_token``/``refresh_token`` where Authlib
makes the request (the code flow of a confidential client), and with requests elsewhere.
openid-client, which does have DPoP, is in test_openid_client.py.

Covered: discovery's ``dpop_signing_alg_values_supported``; RFC 9449's own examples (the
§4.1 proof, refused by this server; its key's thumbprint and an ``ath``, checked against the
values in the RFC so that the thumbprints and hashes computed here are RFC 7638's and RFC
9449's); client credentials with a proof (``token_type`` DPoP, an access token whose
``cnf.jkt`` is the key's thumbprint, introspection reporting DPoP and ``cnf``), without one
(Bearer, no ``cnf``); proofs refused at ``/token`` with 400 ``invalid_dpop_proof`` (wrong
``htu``, ``htm``, old or future ``iat``, a replayed ``jti``, a private key or a symmetric key
in ``jwk``, ``alg: none``, HS256, wrong or missing ``typ``, no ``jwk``, signed by another key,
altered, missing claims, two DPoP headers), each after a proof that gets a token; a client
registered with ``dpop_bound_access_tokens``; the code flow of a confidential client (its
access tokens bound, its refresh token not) and of a public client (its refresh token bound,
also when the proof first comes with a refresh); ``/userinfo`` with the DPoP scheme and what it
refuses (401 with a ``DPoP`` challenge); ``dpop_jkt`` and a proof at ``/par`` binding the
code; and server nonces (``AUTHRIM_DPOP_NONCE=true``: ``use_dpop_nonce`` with ``DPoP-Nonce``
at ``/token``, ``/userinfo`` and ``/par``; nonces expiring).
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import time
import warnings
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import UnsupportedTokenTypeError
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jws
from joserfc.jwk import JWKRegistry, OctKey

from conftest import ALICE_CLAIMS, ALICE_PASSWORD, HTTP_TIMEOUT_S
from test_authlib import REDIRECT_URI, browser_authorize, describe, verify_id_token
from test_client_auth import b64url_json, new_key, public_jwk, unsigned
from test_refresh import new_refreshing_client
from test_revocation import introspect, new_service_client, session_for, verify_access_token

SCOPE = "api.read"
OFFLINE_SCOPE = "openid email offline_access"
PROOF_MAX_AGE_S = 60  # dpop_proof_max_age (default)
SERVER_LEEWAY_S = 30  # src/dpop.rs LEEWAY, on iat in the future
CLOCK_LEEWAY_S = 60  # how far a proof's iat may be from this test's clock
PRIVATE_MEMBERS = {"d", "p", "q", "dp", "dq", "qi", "k"}
TOKEN_HEADERS = {"Accept": "application/json",
                 "Content-Type": "application/x-www-form-urlencoded;charset=UTF-8"}

# RFC 9449's examples: the DPoP header of §4.1 (Figure 2: POST to
# https://server.example.com/token, iat 1562262616, decoded in Figure 4), that key's
# thumbprint as §6.1's access token (Figure 9) and §6.2's introspection (Figure 11) carry it
# in cnf.jkt, and §5's access token (Figure 6) with the ath of §7.1's proof (Figure 14).
RFC9449_PROOF = (
    "eyJ0eXAiOiJkcG9wK2p3dCIsImFsZyI6IkVTMjU2IiwiandrIjp7Imt0eSI6IkVDIiwieCI6Imw4dEZyaHgtMz"
    "R0VjNoUklDUkRZOXpDa0RscEJoRjQyVVFVZldWQVdCRnMiLCJ5IjoiOVZFNGpmX09rX282NHpiVFRsY3VOSmFq"
    "SG10NnY5VERWclUwQ2R2R1JEQSIsImNydiI6IlAtMjU2In19.eyJqdGkiOiItQndDM0VTYzZhY2MybFRjIiwia"
    "HRtIjoiUE9TVCIsImh0dSI6Imh0dHBzOi8vc2VydmVyLmV4YW1wbGUuY29tL3Rva2VuIiwiaWF0IjoxNTYyMjY"
    "yNjE2fQ.2-GxA6T8lP4vfrg8v-FdWP0A0zdrj8igiMLvqRMUvwnQg4PtFLbdLXiOSsX0x7NVY-FNyJK70nfbV37"
    "xRZT3Lg")
RFC9449_JWK = {"kty": "EC", "x": "l8tFrhx-34tV3hRICRDY9zCkDlpBhF42UQUfWVAWBFs",
               "y": "9VE4jf_Ok_o64zbTTlcuNJajHmt6v9TDVrU0CdvGRDA", "crv": "P-256"}
RFC9449_JKT = "0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I"
RFC9449_ACCESS_TOKEN = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"
RFC9449_ATH = "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
# RFC 7638 §3.1: an RSA key and its thumbprint.
RFC7638_JWK = {
    "kty": "RSA",
    "n": "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSo"
         "c_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YG"
         "jQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrd"
         "kt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
    "e": "AQAB", "alg": "RS256", "kid": "2011-04-29"}
RFC7638_THUMBPRINT = "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"


# --------------------------------------------------------------------------
# Helpers (also used by test_openid_client.py)
# --------------------------------------------------------------------------


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def jkt(jwk: dict) -> str:
    """The RFC 7638 SHA-256 thumbprint of a public JWK, as joserfc computes it."""
    return JWKRegistry.import_key(jwk).thumbprint()


def rfc7638(jwk: dict) -> str:
    """The same thumbprint by the letter of RFC 7638 §3.2 (the required members only, sorted,
    no whitespace), to check joserfc's against."""
    required = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"),
                "OKP": ("crv", "kty", "x")}[jwk["kty"]]
    canonical = json.dumps({m: jwk[m] for m in required}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def ath(access_token: str) -> str:
    """RFC 9449 §4.2: base64url of the SHA-256 of the access token's ASCII."""
    return b64url(hashlib.sha256(access_token.encode("ascii")).digest())


def make_proof(key, alg: str, htm: str, htu: str, *, access_token: str | None = None,
               nonce: str | None = None, iat: int | None = None, jti: str | None = None,
               header: dict | None = None, claims: dict | None = None, drop: tuple = (),
               jwk: dict | None = None) -> str:
    """A DPoP proof (RFC 9449 §4.2) signed by ``key`` with joserfc: ``typ`` dpop+jwt, ``alg``,
    the public ``jwk`` (or ``jwk``); ``jti``, ``htm``, ``htu``, ``iat`` (now), ``ath`` for
    ``access_token``, ``nonce``. ``header``/``claims`` override, ``drop`` removes members."""
    hdr = {"typ": "dpop+jwt", "alg": alg, "jwk": jwk if jwk is not None else public_jwk(key)}
    hdr.update(header or {})
    body = {"jti": jti or generate_token(24), "htm": htm, "htu": htu,
            "iat": int(time.time()) if iat is None else iat}
    if access_token is not None:
        body["ath"] = ath(access_token)
    if nonce is not None:
        body["nonce"] = nonce
    body.update(claims or {})
    for name in drop:
        hdr.pop(name, None)
        body.pop(name, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc: EdDSA deprecated by RFC 9864, HS256 key size
        return jws.serialize_compact(hdr, json.dumps(body).encode(), key, algorithms=[hdr["alg"]])


def check_proof(proof: str, jwk: dict, alg: str, htm: str, htu: str, *,
                access_token: str | None = None, nonce: str | None = None) -> dict:
    """A proof a client sent: ``typ`` dpop+jwt, ``alg``, the public ``jwk`` it should carry,
    a signature by that key, and the claims RFC 9449 §4.2 asks for this request (``ath``
    only with an access token, ``nonce`` only when given). Returns the claims."""
    header = b64url_json(proof.split(".")[0])
    assert header.get("typ") == "dpop+jwt", header
    assert header.get("alg") == alg, header
    assert header.get("jwk") == jwk, (header, jwk)
    assert not PRIVATE_MEMBERS & header["jwk"].keys(), header
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        decoded = jws.deserialize_compact(proof, JWKRegistry.import_key(jwk), algorithms=[alg])
    claims = json.loads(decoded.payload)
    assert claims.get("htm") == htm, claims
    assert claims.get("htu") == htu, claims
    assert abs(claims.get("iat", 0) - time.time()) <= CLOCK_LEEWAY_S, claims
    assert isinstance(claims.get("jti"), str) and len(claims["jti"]) >= 16, claims
    if access_token is None:
        assert "ath" not in claims, claims
    else:
        assert claims.get("ath") == ath(access_token), claims
    if nonce is None:
        assert "nonce" not in claims, claims
    else:
        assert claims.get("nonce") == nonce, claims
    return claims


def assert_bound_access_token(token: str, jwks: dict, issuer: str, thumbprint: str) -> dict:
    """An access token (JWT, RFC 9068) verified against the JWKS and bound to the key
    ``thumbprint`` names (RFC 9449 §6.1: ``cnf.jkt``)."""
    _, claims = verify_access_token(token, jwks, issuer)
    assert claims.get("cnf") == {"jkt": thumbprint}, claims
    return claims


def assert_dpop_token_response(resp: requests.Response, jwks: dict, issuer: str,
                               thumbprint: str) -> tuple[dict, dict]:
    """200 with ``token_type`` DPoP (RFC 9449 §5) and an access token bound to ``thumbprint``.
    Returns (the response body, the access token's claims)."""
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    body = resp.json()
    assert body.get("token_type") == "DPoP", body
    return body, assert_bound_access_token(body["access_token"], jwks, issuer, thumbprint)


def assert_token_error(resp: requests.Response, error: str, status: int = 400):
    """An OAuth error from the token or PAR endpoint: JSON, this error, no tokens."""
    assert resp.status_code == status, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    body = resp.json()
    assert body.get("error") == error, describe(resp)
    assert not {"access_token", "refresh_token", "request_uri"} & body.keys(), describe(resp)


def parse_challenge(value: str) -> tuple[str, dict]:
    """One WWW-Authenticate challenge: (scheme, its quoted parameters)."""
    scheme, _, rest = value.partition(" ")
    return scheme, dict(re.findall(r'(\w+)="([^"]*)"', rest))


def assert_dpop_challenge(resp: requests.Response, error: str, discovery: dict) -> dict:
    """RFC 9449 §7.1: 401 with a ``DPoP`` challenge naming the error and, in ``algs``, the
    algorithms discovery lists."""
    assert resp.status_code == 401, describe(resp)
    challenge = resp.headers.get("WWW-Authenticate", "")
    scheme, params = parse_challenge(challenge)
    assert scheme == "DPoP", describe(resp)
    assert params.get("error") == error, describe(resp)
    assert params.get("algs", "").split() == discovery["dpop_signing_alg_values_supported"], challenge
    assert resp.json().get("error") == error, describe(resp)
    return params


def token_request(discovery: dict, reg: dict, proof: str | None = None,
                  **form) -> requests.Response:
    """POST to the token endpoint with HTTP Basic (or the public client's client_id) and,
    if given, a DPoP header."""
    secret = reg.get("client_secret")
    if secret is None:
        form.setdefault("client_id", reg["client_id"])
    return requests.post(discovery["token_endpoint"], data=form,
                         headers={"DPoP": proof} if proof else {},
                         auth=(reg["client_id"], secret) if secret else None,
                         timeout=HTTP_TIMEOUT_S)


def client_credentials(discovery: dict, reg: dict, proof: str | None = None) -> requests.Response:
    return token_request(discovery, reg, proof, grant_type="client_credentials", scope=SCOPE)


def userinfo(discovery: dict, access_token: str, proof: str | None = None,
             scheme: str = "DPoP") -> requests.Response:
    headers = {"Authorization": f"{scheme} {access_token}"}
    if proof:
        headers["DPoP"] = proof
    return requests.get(discovery["userinfo_endpoint"], headers=headers, timeout=HTTP_TIMEOUT_S)


def userinfo_proof(key, alg: str, discovery: dict, access_token: str, **kw) -> str:
    return make_proof(key, alg, "GET", discovery["userinfo_endpoint"], access_token=access_token, **kw)


def sign_in(server, discovery: dict, user: dict, reg: dict, scope: str = OFFLINE_SCOPE,
            **extra) -> tuple[OAuth2Session, str, str, str]:
    """Authlib builds the authorization request (PKCE S256, state, nonce, and ``extra``), the
    browser signs in and consents. Returns (the session, the redirect back with the code, the
    code verifier, the nonce)."""
    session = OAuth2Session(client_id=reg["client_id"], client_secret=reg.get("client_secret"),
                            scope=scope, redirect_uri=REDIRECT_URI, code_challenge_method="S256",
                            token_endpoint_auth_method="client_secret_basic",
                            default_timeout=HTTP_TIMEOUT_S)
    verifier, nonce = generate_token(48), generate_token(20)
    url, state = session.create_authorization_url(discovery["authorization_endpoint"],
                                                  code_verifier=verifier, nonce=nonce, **extra)
    location, _ = browser_authorize(server, url, user["username"], user["password"])
    params = parse_qs(urlsplit(location).query)
    assert params.get("state") == [state] and params.get("code"), location
    return session, location, verifier, nonce


def code_of(location: str) -> str:
    return parse_qs(urlsplit(location).query)["code"][0]


def redeem(discovery: dict, reg: dict, location: str, verifier: str,
           proof: str | None = None) -> requests.Response:
    """The code in ``location`` at the token endpoint, by hand."""
    return token_request(discovery, reg, proof, grant_type="authorization_code",
                         code=code_of(location), redirect_uri=REDIRECT_URI,
                         code_verifier=verifier)


def push(discovery: dict, reg: dict, params: dict, proof: str | None = None) -> requests.Response:
    """A pushed authorization request (RFC 9126) with HTTP Basic and, if given, a DPoP proof."""
    return requests.post(discovery["pushed_authorization_request_endpoint"], data=params,
                         headers={"DPoP": proof} if proof else {},
                         auth=(reg["client_id"], reg["client_secret"]), timeout=HTTP_TIMEOUT_S)


def pushed_params(reg: dict) -> tuple[dict, str]:
    """Authorization request parameters to push (PKCE S256, state, nonce) and the verifier."""
    verifier = generate_token(48)
    challenge = b64url(hashlib.sha256(verifier.encode()).digest())
    return {"response_type": "code", "client_id": reg["client_id"], "redirect_uri": REDIRECT_URI,
            "scope": OFFLINE_SCOPE, "state": generate_token(16), "nonce": generate_token(16),
            "code_challenge": challenge, "code_challenge_method": "S256"}, verifier


def sign_in_pushed(server, discovery: dict, user: dict, reg: dict, resp: requests.Response,
                   state: str) -> str:
    """The browser sent to /authorize with the pushed request_uri; returns the redirect."""
    assert resp.status_code == 201, describe(resp)
    url = discovery["authorization_endpoint"] + "?" + urlencode(
        {"client_id": reg["client_id"], "request_uri": resp.json()["request_uri"]})
    location, _ = browser_authorize(server, url, user["username"], user["password"])
    params = parse_qs(urlsplit(location).query)
    assert params.get("state") == [state] and params.get("code"), location
    return location


# --------------------------------------------------------------------------
# Discovery and RFC 9449's examples
# --------------------------------------------------------------------------


def test_dpop_discovery_and_rfc9449_example(authrim_server, discovery):
    """Discovery lists the proof algorithms (the default of dpop_signing_alg_values_supported:
    PS256, ES256, EdDSA and RS256); the thumbprints and hashes this
    suite computes are RFC 7638's and RFC 9449's (their examples); RFC 9449's own example
    proof, valid but for another server and from 2019, is refused."""
    algs = discovery.get("dpop_signing_alg_values_supported")
    assert isinstance(algs, list) and len(set(algs)) == len(algs), discovery
    assert set(algs) == {"RS256", "PS256", "ES256", "EdDSA"}, algs
    assert not [a for a in algs if a == "none" or a.startswith("HS")], algs

    # The tools: joserfc's thumbprint and the one by the letter of RFC 7638 agree with the RFCs.
    assert jkt(RFC7638_JWK) == rfc7638(RFC7638_JWK) == RFC7638_THUMBPRINT
    assert jkt(RFC9449_JWK) == rfc7638(RFC9449_JWK) == RFC9449_JKT
    assert ath(RFC9449_ACCESS_TOKEN) == RFC9449_ATH
    decoded = jws.deserialize_compact(RFC9449_PROOF, JWKRegistry.import_key(RFC9449_JWK),
                                      algorithms=["ES256"])
    assert decoded.headers() == {"typ": "dpop+jwt", "alg": "ES256", "jwk": RFC9449_JWK}
    example = json.loads(decoded.payload)
    assert example["htu"] == "https://server.example.com/token" and example["iat"] == 1562262616

    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-rfc")
    ok = client_credentials(discovery, reg, make_proof(new_key("ES256"), "ES256", "POST",
                                                       discovery["token_endpoint"]))
    assert ok.status_code == 200, describe(ok)
    # An algorithm not in the list (ES384, which the server can verify) is refused.
    assert_token_error(client_credentials(discovery, reg, make_proof(new_key("ES384"), "ES384", "POST",
                                                                     discovery["token_endpoint"])),
                       "invalid_dpop_proof")
    assert_token_error(client_credentials(discovery, reg, RFC9449_PROOF), "invalid_dpop_proof")


# --------------------------------------------------------------------------
# Client credentials: bound tokens, introspection
# --------------------------------------------------------------------------


@pytest.mark.parametrize("alg", ["ES256", "EdDSA", "RS256", "PS256"])
def test_dpop_client_credentials(authrim_server, discovery, jwks, alg):
    """A confidential client's client credentials with a proof made here: token_type DPoP,
    the access token's cnf.jkt the key's RFC 7638 thumbprint, introspection saying DPoP and
    cnf; the same request without a proof: a Bearer token, no cnf anywhere."""
    issuer = authrim_server.issuer
    reg = new_service_client(authrim_server, SCOPE, prefix=f"dpop-cc-{alg.lower()}")
    key = new_key(alg)
    thumbprint = jkt(public_jwk(key))
    assert thumbprint == rfc7638(public_jwk(key))

    resp = client_credentials(discovery, reg, make_proof(key, alg, "POST", discovery["token_endpoint"]))
    body, claims = assert_dpop_token_response(resp, jwks, issuer, thumbprint)
    assert body.get("scope") == SCOPE and "refresh_token" not in body, body
    assert claims["sub"] == claims["client_id"] == reg["client_id"], claims
    info = introspect(session_for(reg), discovery, body["access_token"])
    assert info.get("active") is True, info
    assert info.get("token_type") == "DPoP", info
    assert info.get("cnf") == {"jkt": thumbprint}, info
    assert info.get("client_id") == reg["client_id"] and info.get("jti") == claims["jti"], info

    plain = client_credentials(discovery, reg)
    assert plain.status_code == 200, describe(plain)
    assert plain.json().get("token_type") == "Bearer", plain.json()
    _, plain_claims = verify_access_token(plain.json()["access_token"], jwks, issuer)
    assert "cnf" not in plain_claims, plain_claims
    info = introspect(session_for(reg), discovery, plain.json()["access_token"])
    assert info.get("active") is True and info.get("token_type") == "Bearer", info
    assert "cnf" not in info, info


# --------------------------------------------------------------------------
# Proofs the token endpoint refuses
# --------------------------------------------------------------------------


def _altered(proof: str) -> str:
    """The proof with its payload changed (another jti) under the original signature."""
    head, payload, sig = proof.split(".")
    claims = b64url_json(payload)
    claims["jti"] = generate_token(24)
    return f"{head}.{b64url(json.dumps(claims).encode())}.{sig}"


def _other_port(url: str) -> str:
    u = urlsplit(url)
    return f"{u.scheme}://{u.hostname}:{(u.port or 80) + 1}{u.path}"


# name -> proof(key, alg, token endpoint, issuer): each wrong in one way.
BAD_PROOFS = {
    "htu another endpoint": lambda k, a, url, iss: make_proof(k, a, "POST", iss + "/par"),
    "htu another server": lambda k, a, url, iss: make_proof(k, a, "POST", "https://server.example.com/token"),
    "htu another port": lambda k, a, url, iss: make_proof(k, a, "POST", _other_port(url)),
    "htu path with trailing slash": lambda k, a, url, iss: make_proof(k, a, "POST", url + "/"),
    "htm GET": lambda k, a, url, iss: make_proof(k, a, "GET", url),
    "htm lower case": lambda k, a, url, iss: make_proof(k, a, "post", url),
    "iat too old": lambda k, a, url, iss: make_proof(k, a, "POST", url, iat=int(time.time()) - 5 * PROOF_MAX_AGE_S),
    "iat just past the max age": lambda k, a, url, iss: make_proof(k, a, "POST", url, iat=int(time.time()) - PROOF_MAX_AGE_S - 10),
    "iat in the future": lambda k, a, url, iss: make_proof(k, a, "POST", url, iat=int(time.time()) + SERVER_LEEWAY_S + 60),
    "no jti": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("jti",)),
    "empty jti": lambda k, a, url, iss: make_proof(k, a, "POST", url, claims={"jti": ""}),
    "no htm": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("htm",)),
    "no htu": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("htu",)),
    "no iat": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("iat",)),
    "private key in jwk": lambda k, a, url, iss: make_proof(k, a, "POST", url, jwk=k.as_dict(private=True)),
    "alg none": lambda k, a, url, iss: unsigned(
        {"jti": generate_token(24), "htm": "POST", "htu": url, "iat": int(time.time())},
        {"typ": "dpop+jwt", "alg": "none", "jwk": public_jwk(k)}),
    "HS256 with a symmetric jwk": lambda k, a, url, iss: (lambda s: make_proof(
        s, "HS256", "POST", url, jwk=s.as_dict(private=True)))(OctKey.generate_key(256)),
    "typ JWT": lambda k, a, url, iss: make_proof(k, a, "POST", url, header={"typ": "JWT"}),
    "no typ": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("typ",)),
    "no jwk": lambda k, a, url, iss: make_proof(k, a, "POST", url, drop=("jwk",)),
    "signed by another key": lambda k, a, url, iss: make_proof(new_key(a), a, "POST", url, jwk=public_jwk(k)),
    "altered after signing": lambda k, a, url, iss: _altered(make_proof(k, a, "POST", url)),
    "not a JWS": lambda k, a, url, iss: "not-a-proof",
}


@pytest.mark.parametrize("case", list(BAD_PROOFS))
@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_dpop_bad_proof_refused(authrim_server, discovery, jwks, alg, case):
    """Each proof wrong in one way (RFC 9449 §4.3) is 400 invalid_dpop_proof at /token, after
    a proof of the same key that gets a bound token."""
    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-bad")
    key = new_key(alg)
    url = discovery["token_endpoint"]
    ok = client_credentials(discovery, reg, make_proof(key, alg, "POST", url))
    assert_dpop_token_response(ok, jwks, authrim_server.issuer, jkt(public_jwk(key)))

    bad = BAD_PROOFS[case](key, alg, url, authrim_server.issuer)
    assert_token_error(client_credentials(discovery, reg, bad), "invalid_dpop_proof")


def test_dpop_proof_variations_accepted(authrim_server, discovery, jwks):
    """What RFC 9449 §4.3 lets vary: htu with a query and fragment (compared without them),
    an iat a little in the past or the future (within the server's window), a jwk with more
    than the key (kid, use, alg: the thumbprint, RFC 7638 §3.2, is of the required members)."""
    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-vary")
    key = new_key("ES256")
    url = discovery["token_endpoint"]
    now = int(time.time())
    decorated = {**public_jwk(key), "kid": "k-1", "use": "sig", "alg": "ES256"}
    for proof in (make_proof(key, "ES256", "POST", url + "?x=1#frag"),
                  make_proof(key, "ES256", "POST", url, iat=now - PROOF_MAX_AGE_S // 2),
                  make_proof(key, "ES256", "POST", url, iat=now + SERVER_LEEWAY_S // 2),
                  make_proof(key, "ES256", "POST", url, jwk=decorated)):
        assert_dpop_token_response(client_credentials(discovery, reg, proof), jwks,
                                   authrim_server.issuer, jkt(public_jwk(key)))


@pytest.mark.parametrize("alg", ["ES256", "EdDSA"])
def test_dpop_replayed_proof_refused(authrim_server, discovery, jwks, alg):
    """A proof is good once (RFC 9449 §11.1): sent again, or its jti in a new proof of the
    same key, 400 invalid_dpop_proof. A proof refused for another reason does not spend its
    jti; another key may use the same jti."""
    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-replay")
    key = new_key(alg)
    url = discovery["token_endpoint"]
    thumbprint = jkt(public_jwk(key))
    jti = generate_token(24)

    assert_token_error(client_credentials(discovery, reg, make_proof(key, alg, "GET", url, jti=jti)),
                       "invalid_dpop_proof")
    # The second proof's iat is fixed against the first's, not read from the clock again: with
    # a deterministic signature (EdDSA) a second boundary between the two would make them equal.
    iat = int(time.time())
    proof = make_proof(key, alg, "POST", url, jti=jti, iat=iat)
    assert_dpop_token_response(client_credentials(discovery, reg, proof), jwks,
                               authrim_server.issuer, thumbprint)
    assert_token_error(client_credentials(discovery, reg, proof), "invalid_dpop_proof")
    again = make_proof(key, alg, "POST", url, jti=jti, iat=iat - 1)
    assert again != proof
    assert_token_error(client_credentials(discovery, reg, again), "invalid_dpop_proof")
    # Not the server being unable to issue any more: a fresh proof still works.
    assert_dpop_token_response(client_credentials(discovery, reg, make_proof(key, alg, "POST", url)),
                               jwks, authrim_server.issuer, thumbprint)


def test_dpop_two_proof_headers_refused(authrim_server, discovery, jwks):
    """Two DPoP headers (RFC 9449 §4.3 step 1: exactly one), each a good proof: 400."""
    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-two")
    key = new_key("ES256")
    url = discovery["token_endpoint"]
    u = urlsplit(url)
    body = urlencode({"grant_type": "client_credentials", "scope": SCOPE})
    basic = base64.b64encode(f"{reg['client_id']}:{reg['client_secret']}".encode()).decode()

    def send(*proofs: str) -> tuple[int, dict]:
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=HTTP_TIMEOUT_S)
        try:
            conn.putrequest("POST", u.path)
            conn.putheader("Content-Type", "application/x-www-form-urlencoded")
            conn.putheader("Content-Length", str(len(body)))
            conn.putheader("Authorization", f"Basic {basic}")
            for p in proofs:
                conn.putheader("DPoP", p)
            conn.endheaders(body.encode())
            resp = conn.getresponse()
            return resp.status, json.loads(resp.read())
        finally:
            conn.close()

    status, answer = send(make_proof(key, "ES256", "POST", url))
    assert status == 200 and answer.get("token_type") == "DPoP", (status, answer)
    status, answer = send(make_proof(key, "ES256", "POST", url), make_proof(key, "ES256", "POST", url))
    assert status == 400 and answer.get("error") == "invalid_dpop_proof", (status, answer)
    assert "access_token" not in answer, answer


def test_dpop_bound_access_tokens_client(authrim_server, discovery, jwks):
    """A client registered with dpop_bound_access_tokens (RFC 9449 §5.2) gets no token without
    a proof (400 invalid_request: a missing proof is not an invalid one), a bound one with."""
    reg = new_service_client(authrim_server, SCOPE, prefix="dpop-required",
                             dpop_bound_access_tokens=True)
    assert reg.get("dpop_bound_access_tokens") is True, reg
    assert_token_error(client_credentials(discovery, reg), "invalid_request")
    key = new_key("EdDSA")
    resp = client_credentials(discovery, reg, make_proof(key, "EdDSA", "POST", discovery["token_endpoint"]))
    assert_dpop_token_response(resp, jwks, authrim_server.issuer, jkt(public_jwk(key)))
    assert_token_error(client_credentials(discovery, reg), "invalid_request")


# --------------------------------------------------------------------------
# The code flow of a confidential client, userinfo
# --------------------------------------------------------------------------


def test_dpop_code_flow_confidential_client(authrim_server, discovery, jwks, alice):
    """Authlib's code flow (client_secret_basic, PKCE, nonce) with a proof in Authlib's token
    request: a DPoP token bound to the key, its ID token verified; Authlib's session cannot use
    it (no DPoP in Authlib), userinfo takes it with the DPoP scheme and a proof. The refresh
    token of a confidential client is not bound (RFC 9449 §5): refreshed through Authlib
    without a proof, a Bearer token; with another key's proof, a token bound to that key."""
    issuer = authrim_server.issuer
    reg = new_refreshing_client(authrim_server)
    key_a, key_b = new_key("ES256"), new_key("EdDSA")
    jkt_a, jkt_b = jkt(public_jwk(key_a)), jkt(public_jwk(key_b))
    session, location, verifier, nonce = sign_in(authrim_server, discovery, alice, reg)

    token = session.fetch_token(
        discovery["token_endpoint"], authorization_response=location, code_verifier=verifier,
        headers={**TOKEN_HEADERS, "DPoP": make_proof(key_a, "ES256", "POST", discovery["token_endpoint"])})
    assert token["token_type"] == "DPoP", token
    claims = assert_bound_access_token(token["access_token"], jwks, issuer, jkt_a)
    assert claims["sub"] == alice["id"] and claims["client_id"] == reg["client_id"], claims
    verify_id_token(token["id_token"], jwks, issuer, reg["client_id"], nonce, token["access_token"])
    with pytest.raises(UnsupportedTokenTypeError):
        session.get(discovery["userinfo_endpoint"])

    resp = userinfo(discovery, token["access_token"],
                    userinfo_proof(key_a, "ES256", discovery, token["access_token"]))
    assert resp.status_code == 200, describe(resp)
    assert resp.json() == {"sub": alice["id"], "email": ALICE_CLAIMS["email"],
                           "email_verified": ALICE_CLAIMS["email_verified"]}, resp.json()

    # Refreshed without a proof: the refresh token is the client's, not the key's.
    plain = session.refresh_token(discovery["token_endpoint"], refresh_token=token["refresh_token"],
                                  headers=dict(TOKEN_HEADERS))
    assert plain["token_type"] == "Bearer", plain
    _, plain_claims = verify_access_token(plain["access_token"], jwks, issuer)
    assert "cnf" not in plain_claims, plain_claims
    resp = userinfo(discovery, plain["access_token"], scheme="Bearer")
    assert resp.status_code == 200 and resp.json()["sub"] == alice["id"], describe(resp)

    # With another key's proof: a token bound to that key.
    rebound = session.refresh_token(
        discovery["token_endpoint"], refresh_token=plain["refresh_token"],
        headers={**TOKEN_HEADERS, "DPoP": make_proof(key_b, "EdDSA", "POST", discovery["token_endpoint"])})
    assert rebound["token_type"] == "DPoP", rebound
    assert_bound_access_token(rebound["access_token"], jwks, issuer, jkt_b)
    info = introspect(session_for(reg), discovery, rebound["access_token"])
    assert info.get("active") is True and info.get("token_type") == "DPoP", info
    assert info.get("cnf") == {"jkt": jkt_b}, info
    refused = userinfo(discovery, rebound["access_token"],
                       userinfo_proof(key_a, "ES256", discovery, rebound["access_token"]))
    assert_dpop_challenge(refused, "invalid_token", discovery)
    resp = userinfo(discovery, rebound["access_token"],
                    userinfo_proof(key_b, "EdDSA", discovery, rebound["access_token"]))
    assert resp.status_code == 200 and resp.json()["sub"] == alice["id"], describe(resp)


def test_dpop_userinfo_refusals(authrim_server, discovery, jwks, alice):
    """What /userinfo refuses for a DPoP-bound token (RFC 9449 §7), each 401 with a DPoP
    challenge, between requests that succeed (GET, and POST with a proof for POST): the token as Bearer (header, and form body),
    the DPoP scheme without a proof, a proof without ath, with another token's ath, of another
    key, for another method or URL, old, replayed; and an unbound token with the DPoP scheme."""
    reg = new_refreshing_client(authrim_server)
    key = new_key("ES256")
    session, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg)
    resp = redeem(discovery, reg, location, verifier,
                  make_proof(key, "ES256", "POST", discovery["token_endpoint"]))
    body, _ = assert_dpop_token_response(resp, jwks, authrim_server.issuer, jkt(public_jwk(key)))
    token = body["access_token"]
    endpoint = discovery["userinfo_endpoint"]

    good = userinfo_proof(key, "ES256", discovery, token)
    ok = userinfo(discovery, token, good)
    assert ok.status_code == 200 and ok.json()["sub"] == alice["id"], describe(ok)
    posted = requests.post(endpoint, timeout=HTTP_TIMEOUT_S, headers={
        "Authorization": f"DPoP {token}",
        "DPoP": make_proof(key, "ES256", "POST", endpoint, access_token=token)})
    assert posted.status_code == 200 and posted.json()["sub"] == alice["id"], describe(posted)

    assert_dpop_challenge(userinfo(discovery, token, scheme="Bearer"), "invalid_token", discovery)
    as_form = requests.post(endpoint, data={"access_token": token}, timeout=HTTP_TIMEOUT_S)
    assert_dpop_challenge(as_form, "invalid_token", discovery)
    # Bearer with a good proof alongside is still Bearer.
    assert_dpop_challenge(userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token),
                                   scheme="Bearer"), "invalid_token", discovery)
    assert_dpop_challenge(userinfo(discovery, token), "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, make_proof(key, "ES256", "GET", endpoint)),
                          "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token + "x")),
                          "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, userinfo_proof(new_key("ES256"), "ES256", discovery, token)),
                          "invalid_token", discovery)
    assert_dpop_challenge(userinfo(discovery, token, make_proof(key, "ES256", "POST", endpoint, access_token=token)),
                          "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, make_proof(key, "ES256", "GET", discovery["token_endpoint"],
                                                                access_token=token)),
                          "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token,
                                                                    iat=int(time.time()) - 5 * PROOF_MAX_AGE_S)),
                          "invalid_dpop_proof", discovery)
    assert_dpop_challenge(userinfo(discovery, token, good), "invalid_dpop_proof", discovery)

    # An unbound token may not pretend to be bound.
    plain = client_credentials(discovery, new_service_client(authrim_server, SCOPE, prefix="dpop-ui"))
    assert plain.status_code == 200 and plain.json()["token_type"] == "Bearer", describe(plain)
    bearer = plain.json()["access_token"]
    assert_dpop_challenge(userinfo(discovery, bearer, userinfo_proof(key, "ES256", discovery, bearer)),
                          "invalid_token", discovery)

    again = userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token))
    assert again.status_code == 200 and again.json()["sub"] == alice["id"], describe(again)


def new_public_client(server) -> dict:
    """A public client (no secret: PKCE, "none") with the code and refresh grants."""
    reg = server.create_client(client_id=server.unique("dpop-public"), token_endpoint_auth_method="none",
                               redirect_uris=[REDIRECT_URI], scope=OFFLINE_SCOPE,
                               grant_types=["authorization_code", "refresh_token"])
    assert "client_secret" not in reg and reg["token_endpoint_auth_method"] == "none", reg
    return reg


def refresh(discovery: dict, reg: dict, refresh_token: str, proof: str | None = None) -> requests.Response:
    return token_request(discovery, reg, proof, grant_type="refresh_token", refresh_token=refresh_token)


def test_dpop_public_client_refresh_token_bound(authrim_server, discovery, jwks, alice):
    """A public client's code redeemed with a proof: its refresh token is bound to that key
    (RFC 9449 §5): refused without a proof and with another key's (invalid_grant, and not
    spent by that), refreshed with the key's (a bound access token, and a rotated refresh
    token still bound)."""
    reg = new_public_client(authrim_server)
    key, other = new_key("ES256"), new_key("ES256")
    thumbprint = jkt(public_jwk(key))
    url = discovery["token_endpoint"]
    _, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg)
    body, _ = assert_dpop_token_response(redeem(discovery, reg, location, verifier,
                                                make_proof(key, "ES256", "POST", url)),
                                         jwks, authrim_server.issuer, thumbprint)
    rt = body["refresh_token"]
    assert_token_error(refresh(discovery, reg, rt), "invalid_grant")
    assert_token_error(refresh(discovery, reg, rt, make_proof(other, "ES256", "POST", url)), "invalid_grant")
    body, _ = assert_dpop_token_response(refresh(discovery, reg, rt, make_proof(key, "ES256", "POST", url)),
                                         jwks, authrim_server.issuer, thumbprint)
    assert body["refresh_token"] != rt, body
    rt = body["refresh_token"]
    assert_token_error(refresh(discovery, reg, rt), "invalid_grant")
    assert_token_error(refresh(discovery, reg, rt, make_proof(other, "ES256", "POST", url)), "invalid_grant")
    assert_dpop_token_response(refresh(discovery, reg, rt, make_proof(key, "ES256", "POST", url)),
                               jwks, authrim_server.issuer, thumbprint)


def test_dpop_public_client_refresh_token_bound_by_a_refresh_with_a_proof(authrim_server, discovery,
                                                                          jwks, alice):
    """A public client's code redeemed without a proof (a Bearer token, a refresh token bound
    to nothing), then refreshed with a proof: RFC 9449 §5 says "When an authorization server
    supporting DPoP issues a refresh token to a public client that presents a valid DPoP proof
    at the token endpoint, the refresh token MUST be bound to the respective public key", so
    the refresh token issued then must not refresh without a proof of that key."""
    reg = new_public_client(authrim_server)
    key, other = new_key("ES256"), new_key("ES256")
    url = discovery["token_endpoint"]
    _, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg)
    first = redeem(discovery, reg, location, verifier)
    assert first.status_code == 200 and first.json()["token_type"] == "Bearer", describe(first)
    body, _ = assert_dpop_token_response(
        refresh(discovery, reg, first.json()["refresh_token"], make_proof(key, "ES256", "POST", url)),
        jwks, authrim_server.issuer, jkt(public_jwk(key)))
    issued_to_the_key = body["refresh_token"]
    assert_token_error(refresh(discovery, reg, issued_to_the_key, make_proof(other, "ES256", "POST", url)),
                       "invalid_grant")
    assert_token_error(refresh(discovery, reg, issued_to_the_key), "invalid_grant")


# --------------------------------------------------------------------------
# Binding the code: dpop_jkt, and a proof at /par
# --------------------------------------------------------------------------


def test_dpop_jkt_binds_the_code(authrim_server, discovery, jwks, alice):
    """dpop_jkt in the authorization request (RFC 9449 §10): the code is redeemed only with a
    proof of that key (without a proof, or with another key's: invalid_grant); a value that is
    not a thumbprint is refused to the client with invalid_request."""
    reg = new_refreshing_client(authrim_server)
    key, other = new_key("EdDSA"), new_key("EdDSA")
    thumbprint = jkt(public_jwk(key))
    token_url = discovery["token_endpoint"]

    _, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg, dpop_jkt=thumbprint)
    assert_token_error(redeem(discovery, reg, location, verifier), "invalid_grant")
    _, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg, dpop_jkt=thumbprint)
    assert_token_error(redeem(discovery, reg, location, verifier,
                              make_proof(other, "EdDSA", "POST", token_url)), "invalid_grant")
    _, location, verifier, _ = sign_in(authrim_server, discovery, alice, reg, dpop_jkt=thumbprint)
    resp = redeem(discovery, reg, location, verifier, make_proof(key, "EdDSA", "POST", token_url))
    assert_dpop_token_response(resp, jwks, authrim_server.issuer, thumbprint)

    bad = requests.get(discovery["authorization_endpoint"], allow_redirects=False, timeout=HTTP_TIMEOUT_S,
                       params={"client_id": reg["client_id"], "response_type": "code",
                               "redirect_uri": REDIRECT_URI, "scope": "openid", "state": "st-1",
                               "code_challenge": b64url(hashlib.sha256(b"v" * 43).digest()),
                               "code_challenge_method": "S256", "dpop_jkt": thumbprint[:-1]})
    assert bad.status_code in (302, 303), describe(bad)
    back = parse_qs(urlsplit(bad.headers["Location"]).query)
    assert back.get("error") == ["invalid_request"] and back.get("state") == ["st-1"], back
    assert "code" not in back, back


def test_dpop_proof_at_par(authrim_server, discovery, jwks, alice):
    """A proof sent with the push (RFC 9449 §10.1) binds the code like dpop_jkt: redeemed
    without a proof, invalid_grant; with it, a bound token. A dpop_jkt that is not the proof's
    key, or a bad proof, is 400 invalid_dpop_proof at /par."""
    reg = new_refreshing_client(authrim_server)
    key = new_key("ES256")
    thumbprint = jkt(public_jwk(key))
    par_url = discovery["pushed_authorization_request_endpoint"]

    params, verifier = pushed_params(reg)
    resp = push(discovery, reg, params, make_proof(key, "ES256", "POST", par_url))
    location = sign_in_pushed(authrim_server, discovery, alice, reg, resp, params["state"])
    assert_token_error(redeem(discovery, reg, location, verifier), "invalid_grant")

    params, verifier = pushed_params(reg)
    resp = push(discovery, reg, params, make_proof(key, "ES256", "POST", par_url))
    location = sign_in_pushed(authrim_server, discovery, alice, reg, resp, params["state"])
    resp = redeem(discovery, reg, location, verifier,
                  make_proof(key, "ES256", "POST", discovery["token_endpoint"]))
    assert_dpop_token_response(resp, jwks, authrim_server.issuer, thumbprint)

    params, _ = pushed_params(reg)
    same = push(discovery, reg, {**params, "dpop_jkt": thumbprint}, make_proof(key, "ES256", "POST", par_url))
    assert same.status_code == 201, describe(same)
    other = jkt(public_jwk(new_key("ES256")))
    assert_token_error(push(discovery, reg, {**params, "dpop_jkt": other},
                            make_proof(key, "ES256", "POST", par_url)), "invalid_dpop_proof")
    assert_token_error(push(discovery, reg, params, make_proof(key, "ES256", "POST", discovery["token_endpoint"])),
                       "invalid_dpop_proof")
    assert_token_error(push(discovery, reg, params, make_proof(key, "ES256", "GET", par_url)),
                       "invalid_dpop_proof")
    assert_token_error(push(discovery, reg, params, make_proof(key, "ES256", "POST", par_url,
                                                               jwk=key.as_dict(private=True))),
                       "invalid_dpop_proof")


# --------------------------------------------------------------------------
# Server nonces (RFC 9449 §8, §9)
# --------------------------------------------------------------------------


def nonce_server(start_authrim) -> tuple:
    """A server that requires nonces, with Alice, and its discovery document."""
    server = start_authrim("dpop-nonce", {"AUTHRIM_DPOP_NONCE": "true"})
    resp = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    user = server.create_user("alice", ALICE_PASSWORD, ALICE_CLAIMS)
    jwks = requests.get(resp.json()["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    return server, resp.json(), {**user, "password": ALICE_PASSWORD}, jwks


def assert_use_dpop_nonce(resp: requests.Response) -> str:
    """400 use_dpop_nonce with the nonce to use in DPoP-Nonce (RFC 9449 §8); returns it."""
    assert_token_error(resp, "use_dpop_nonce")
    nonce = resp.headers.get("DPoP-Nonce")
    assert nonce, f"use_dpop_nonce without a DPoP-Nonce header:\n{describe(resp)}"
    return nonce


def test_dpop_nonce_at_token_and_userinfo(start_authrim):
    """With AUTHRIM_DPOP_NONCE=true: at /token a proof without a nonce, or with one not the
    server's, is 400 use_dpop_nonce with DPoP-Nonce; with it, a bound token (and DPoP-Nonce
    again); a proof wrong otherwise is still invalid_dpop_proof. At /userinfo a proof without
    a nonce is 401 with a DPoP challenge error="use_dpop_nonce" and DPoP-Nonce (§9)."""
    server, discovery, alice, jwks = nonce_server(start_authrim)
    token_url = discovery["token_endpoint"]
    reg = new_service_client(server, SCOPE, prefix="dpop-nonce-svc")
    key = new_key("ES256")
    thumbprint = jkt(public_jwk(key))

    nonce = assert_use_dpop_nonce(client_credentials(discovery, reg, make_proof(key, "ES256", "POST", token_url)))
    assert_use_dpop_nonce(client_credentials(discovery, reg, make_proof(
        key, "ES256", "POST", token_url, nonce=b64url(b"\0" * 24))))
    assert_use_dpop_nonce(client_credentials(discovery, reg, make_proof(
        key, "ES256", "POST", token_url, nonce=nonce[:-2] + ("AA" if nonce[-2:] != "AA" else "BB"))))
    assert_token_error(client_credentials(discovery, reg, make_proof(key, "ES256", "GET", token_url, nonce=nonce)),
                       "invalid_dpop_proof")
    ok = client_credentials(discovery, reg, make_proof(key, "ES256", "POST", token_url, nonce=nonce))
    assert_dpop_token_response(ok, jwks, server.issuer, thumbprint)
    assert ok.headers.get("DPoP-Nonce"), describe(ok)

    # A user's token, then userinfo.
    web = new_refreshing_client(server)
    _, location, verifier, _ = sign_in(server, discovery, alice, web)
    first = redeem(discovery, web, location, verifier, make_proof(key, "ES256", "POST", token_url))
    nonce = assert_use_dpop_nonce(first)
    # The code survived the refusal (the proof is checked before the code is spent).
    resp = redeem(discovery, web, location, verifier, make_proof(key, "ES256", "POST", token_url, nonce=nonce))
    body, _ = assert_dpop_token_response(resp, jwks, server.issuer, thumbprint)
    token = body["access_token"]

    refused = userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token))
    assert_dpop_challenge(refused, "use_dpop_nonce", discovery)
    fresh = refused.headers.get("DPoP-Nonce")
    assert fresh, describe(refused)
    resp = userinfo(discovery, token, userinfo_proof(key, "ES256", discovery, token, nonce=fresh))
    assert resp.status_code == 200 and resp.json()["sub"] == alice["id"], describe(resp)
    assert resp.headers.get("DPoP-Nonce"), describe(resp)


def test_dpop_nonce_expires(start_authrim):
    """Nonces are good for a while only (AUTHRIM_DPOP_NONCE_LIFETIME=1: this window and the
    next): a nonce two windows old is use_dpop_nonce again, with a new one that works."""
    server = start_authrim("dpop-nonce-short", {"AUTHRIM_DPOP_NONCE": "true",
                                                "AUTHRIM_DPOP_NONCE_LIFETIME": "1"})
    discovery = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    reg = new_service_client(server, SCOPE, prefix="dpop-nonce-exp")
    key = new_key("EdDSA")
    url = discovery["token_endpoint"]
    nonce = assert_use_dpop_nonce(client_credentials(discovery, reg, make_proof(key, "EdDSA", "POST", url)))
    ok = client_credentials(discovery, reg, make_proof(key, "EdDSA", "POST", url, nonce=nonce))
    assert_dpop_token_response(ok, jwks, server.issuer, jkt(public_jwk(key)))
    time.sleep(2.2)
    fresh = assert_use_dpop_nonce(client_credentials(discovery, reg, make_proof(key, "EdDSA", "POST", url,
                                                                                nonce=nonce)))
    assert fresh != nonce
    assert_dpop_token_response(client_credentials(discovery, reg, make_proof(key, "EdDSA", "POST", url,
                                                                              nonce=fresh)),
                               jwks, server.issuer, jkt(public_jwk(key)))


def test_dpop_nonce_at_par(start_authrim):
    """With AUTHRIM_DPOP_NONCE=true, /par checks proofs too (RFC 9449 §10.1): a push whose
    proof carries the server's nonce goes through; one without must be answered 400
    use_dpop_nonce *with* the nonce in DPoP-Nonce (§8), or a client that pushes first has no
    way to learn it."""
    server, discovery, _, _ = nonce_server(start_authrim)
    reg = new_refreshing_client(server)
    key = new_key("ES256")
    par_url = discovery["pushed_authorization_request_endpoint"]
    svc = new_service_client(server, SCOPE, prefix="dpop-nonce-par")
    nonce = assert_use_dpop_nonce(client_credentials(
        discovery, svc, make_proof(key, "ES256", "POST", discovery["token_endpoint"])))

    params, _ = pushed_params(reg)
    ok = push(discovery, reg, params, make_proof(key, "ES256", "POST", par_url, nonce=nonce))
    assert ok.status_code == 201, describe(ok)

    params, _ = pushed_params(reg)
    assert_use_dpop_nonce(push(discovery, reg, params, make_proof(key, "ES256", "POST", par_url)))
