"""End-to-end tests of Authrim's JWT client authentication, driven by Authlib.

``private_key_jwt`` (RFC 7523 §2.2, OpenID Connect Core §9) and ``client_secret_jwt``
through Authlib's own client auth methods, ``authlib.oauth2.rfc7523.PrivateKeyJWT`` and
``ClientSecretJWT``, given to ``OAuth2Session`` as its ``token_endpoint_auth_method``:

* client credentials with RS256, PS256, ES256 (P-256), ES384 and EdDSA keys registered
  inline (``jwks``), the same session then introspecting (RFC 7662) and revoking
  (RFC 7009) its token with an assertion whose ``aud`` is the endpoint called;
* the authorization code flow and a refresh with an RSA key (every grant authenticates);
* ``client_secret_jwt`` with HS256, and HS512 where the client registered
  ``token_endpoint_auth_signing_alg``;
* a ``jwks_uri`` served by an ``http.server`` thread in the test: fetched, cached, and
  fetched again for a rotated key only after the refetch interval;
* the registration rules for the new metadata (admin API);
* what must be refused with 401 ``invalid_client``: a replayed assertion (at the same and at
  another endpoint), a key the client did not register, and assertions wrong in each claim
  or header the server checks. Each refusal follows a control request that succeeds, so a
  refusal cannot come from a broken setup.

Access tokens are JWTs verified against the server's JWKS (test_revocation.py's helper);
their ``sub`` and ``client_id`` must be the authenticated client.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import ClientSecretJWT, PrivateKeyJWT
from authlib.oauth2.rfc7523.assertion import client_secret_jwt_sign, private_key_jwt_sign
from joserfc import jwt
from joserfc.jwk import ECKey, OctKey, OKPKey, RSAKey

from conftest import HTTP_TIMEOUT_S
from test_authlib import REDIRECT_URI, describe, run_code_flow, verify_id_token
from test_revocation import verify_access_token

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SCOPE = "api.read"
MAX_LIFETIME_S = 3600  # client_assertion_max_lifetime (default)
SERVER_LEEWAY_S = 30  # src/client_auth/jwt.rs LEEWAY
JWKS_MIN_REFETCH_S = 10  # client_jwks_min_refetch (default)
OFFLINE_SCOPE = "openid email offline_access"

# alg -> how to make a fresh private key for it (joserfc, the JOSE library Authlib signs with).
KEY_KINDS = {
    "RS256": (RSAKey, 2048),
    "PS256": (RSAKey, 2048),
    "ES256": (ECKey, "P-256"),
    "ES384": (ECKey, "P-384"),
    "EdDSA": (OKPKey, "Ed25519"),
}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def new_key(alg: str, kid: str | None = None):
    cls, size_or_curve = KEY_KINDS[alg]
    return cls.generate_key(size_or_curve, parameters={"kid": kid} if kid else None,
                            private=True)


def public_jwk(key) -> dict:
    jwk = key.as_dict(private=False)
    assert not {"d", "p", "q", "dp", "dq", "qi", "k"} & jwk.keys(), jwk
    return jwk


def register_pkjwt(server, *, jwks: dict | None = None, jwks_uri: str | None = None,
                   prefix: str = "authlib-pkjwt", **metadata) -> dict:
    """A private_key_jwt client; by default a client_credentials-only service for api.read."""
    body = {
        "client_id": server.unique(prefix),
        "token_endpoint_auth_method": "private_key_jwt",
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
        "scope": SCOPE,
        **metadata,
    }
    if jwks is not None:
        body["jwks"] = jwks
    if jwks_uri is not None:
        body["jwks_uri"] = jwks_uri
    reg = server.create_client(**body)
    assert reg["client_id"] == body["client_id"], reg
    assert reg.get("token_endpoint_auth_method") == "private_key_jwt", reg
    # A private_key_jwt client has no secret: its keys are its credentials.
    assert "client_secret" not in reg, reg
    if jwks is not None:
        assert reg.get("jwks") == jwks, reg
    if jwks_uri is not None:
        assert reg.get("jwks_uri") == jwks_uri, reg
    return reg


def register_secret_jwt(server, prefix: str = "authlib-csjwt", **metadata) -> dict:
    client_id = server.unique(prefix)
    reg = server.create_client(
        client_id=client_id,
        token_endpoint_auth_method="client_secret_jwt",
        grant_types=["client_credentials"],
        redirect_uris=[],
        scope=SCOPE,
        **metadata,
    )
    assert reg["client_id"] == client_id, reg
    assert reg.get("token_endpoint_auth_method") == "client_secret_jwt", reg
    assert isinstance(reg.get("client_secret"), str) and len(reg["client_secret"]) >= 32, reg
    return reg


def pkjwt_session(client_id: str, key, alg: str, kid: str | None = None,
                  token_endpoint: str | None = None, **kwargs) -> OAuth2Session:
    """An Authlib session authenticating with private_key_jwt (token, introspection and
    revocation requests alike). Without ``token_endpoint`` Authlib's assertion names the URL
    it is sent to as ``aud``."""
    method = PrivateKeyJWT(token_endpoint=token_endpoint, alg=alg,
                           headers={"kid": kid} if kid else None)
    return OAuth2Session(client_id=client_id, client_secret=key,
                         token_endpoint_auth_method=method,
                         revocation_endpoint_auth_method=method,
                         default_timeout=HTTP_TIMEOUT_S, **kwargs)


def secret_jwt_session(client_id: str, secret: str, alg: str = "HS256") -> OAuth2Session:
    method = ClientSecretJWT(alg=alg)
    return OAuth2Session(client_id=client_id, client_secret=secret,
                         token_endpoint_auth_method=method,
                         revocation_endpoint_auth_method=method,
                         default_timeout=HTTP_TIMEOUT_S)


def capture(client: OAuth2Session, hook_type: str = "access_token_response") -> list:
    seen: list[requests.Response] = []

    def hook(resp):
        seen.append(resp)
        return resp

    client.register_compliance_hook(hook_type, hook)
    return seen


def form_of(request) -> dict:
    body = request.body if isinstance(request.body, str) else request.body.decode()
    return {k: v[0] for k, v in parse_qs(body).items()}


def b64url_json(part: str) -> dict:
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def assert_sent_assertion(request, client_id: str, aud: str, alg: str, verify_key,
                          kid: str | None = None) -> dict:
    """The request authenticated with a client assertion only (no Basic header, no secret),
    and the assertion is what RFC 7523 §3 asks: checked here with the client's public key."""
    assert "Authorization" not in request.headers, request.headers
    form = form_of(request)
    assert "client_secret" not in form, form
    assert form.get("client_assertion_type") == ASSERTION_TYPE, form
    assertion = form["client_assertion"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc: "EdDSA is deprecated via RFC 9864"
        decoded = jwt.decode(assertion, verify_key, algorithms=[alg])
    assert decoded.header["alg"] == alg, decoded.header
    if kid:
        assert decoded.header.get("kid") == kid, decoded.header
    claims = decoded.claims
    assert claims["iss"] == claims["sub"] == client_id, claims
    assert claims["aud"] == aud, claims
    assert claims.get("jti"), claims
    assert 0 < claims["exp"] - claims["iat"] <= MAX_LIFETIME_S, claims
    return claims


def assert_client_token(token: dict, jwks: dict, issuer: str, client_id: str) -> dict:
    """A client-credentials token response for ``client_id``; returns the verified claims."""
    assert token.get("access_token"), token
    assert token.get("token_type") == "Bearer", token
    assert isinstance(token.get("expires_in"), int) and token["expires_in"] > 0, token
    assert token.get("scope") == SCOPE, token
    assert "refresh_token" not in token and "id_token" not in token, token
    _, claims = verify_access_token(token["access_token"], jwks, issuer)
    assert claims["sub"] == client_id, claims
    assert claims["client_id"] == client_id, claims
    assert claims["scope"] == SCOPE, claims
    return claims


def post_form(url: str, **form) -> requests.Response:
    return requests.post(url, data=form, timeout=HTTP_TIMEOUT_S)


def assertion_token_request(discovery: dict, assertion: str, **extra) -> requests.Response:
    """A client_credentials request authenticated with ``assertion``, sent by hand."""
    return post_form(discovery["token_endpoint"], grant_type="client_credentials", scope=SCOPE,
                     client_assertion_type=ASSERTION_TYPE, client_assertion=assertion, **extra)


def assert_invalid_client(resp: requests.Response):
    assert resp.status_code == 401, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    body = resp.json()
    assert body.get("error") == "invalid_client", describe(resp)
    assert "access_token" not in body and "active" not in body, describe(resp)


def assert_ok_token(resp: requests.Response, jwks: dict, issuer: str, client_id: str):
    assert resp.status_code == 200, describe(resp)
    assert_client_token(resp.json(), jwks, issuer, client_id)


def sign(key, alg: str, claims: dict, header: dict | None = None) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return jwt.encode({"alg": alg, **(header or {})}, claims, key, algorithms=[alg])


def assertion_claims(client_id: str, aud: str | None = None, **overrides) -> dict:
    """RFC 7523 §3 claims for ``client_id``; an override of None leaves that claim out."""
    now = int(time.time())
    claims = {"iss": client_id, "sub": client_id, "aud": aud, "iat": now, "exp": now + 60,
              "jti": generate_token(32)}
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def unsigned(claims: dict, header: dict) -> str:
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    return f"{enc(header)}.{enc(claims)}."


def hs256_with(secret: bytes, claims: dict) -> str:
    """An HS256 JWS by hand (joserfc refuses an asymmetric key's bytes as an HMAC secret)."""
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()
    signing_input = f"{enc({'alg': 'HS256', 'typ': 'JWT'})}.{enc(claims)}"
    mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
    return signing_input + "." + base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


class JwksHost:
    """A client's jwks_uri: ``http.server`` in a thread on 127.0.0.1 (ephemeral port),
    serving whatever ``keys`` holds and recording when it was fetched."""

    def __init__(self, keys: list[dict]):
        self.keys = keys
        self.fetches: list[float] = []
        host = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path != "/jwks.json":
                    self.send_error(404)
                    return
                host.fetches.append(time.monotonic())
                body = json.dumps({"keys": host.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/jwks.json"

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def jwks_host():
    hosts: list[JwksHost] = []

    def start(keys: list[dict]) -> JwksHost:
        hosts.append(JwksHost(keys))
        return hosts[-1]

    try:
        yield start
    finally:
        for h in hosts:
            h.close()


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_discovery_lists_jwt_client_authentication(discovery):
    methods = discovery.get("token_endpoint_auth_methods_supported", [])
    for m in ("private_key_jwt", "client_secret_jwt", "client_secret_basic"):
        assert m in methods, (m, methods)
    algs = discovery.get("token_endpoint_auth_signing_alg_values_supported")
    assert algs, discovery
    for alg in ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384",
                "EdDSA", "HS256", "HS384", "HS512"):
        assert alg in algs, (alg, algs)
    # OIDC Discovery §3: "none" MUST NOT be used.
    assert "none" not in algs, algs


@pytest.mark.parametrize("alg", ["RS256", "ES256", "PS256", "ES384", "EdDSA"])
def test_private_key_jwt_client_credentials(authrim_server, discovery, jwks, alg):
    """Authlib's PrivateKeyJWT with an inline jwks: token, introspection, revocation."""
    kid = f"{alg.lower()}-{generate_token(6)}"
    key = new_key(alg, kid)
    decoy = new_key(alg, kid + "-decoy")  # another registered key of the same type
    reg = register_pkjwt(authrim_server,
                         jwks={"keys": [public_jwk(decoy), public_jwk(key)]})
    client_id = reg["client_id"]

    client = pkjwt_session(client_id, key, alg, kid=kid)
    seen = capture(client)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc's EdDSA deprecation warning
        token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                                   scope=SCOPE)
    resp = seen[-1]
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert form_of(resp.request)["grant_type"] == "client_credentials"
    assert_sent_assertion(resp.request, client_id, discovery["token_endpoint"], alg, key, kid)
    claims = assert_client_token(token, jwks, discovery["issuer"], client_id)

    # Introspection through Authlib with the same auth method: aud is /introspect's URL.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resp = client.introspect_token(discovery["introspection_endpoint"],
                                       token=token["access_token"])
    assert resp.status_code == 200, describe(resp)
    assert_sent_assertion(resp.request, client_id, discovery["introspection_endpoint"], alg,
                          key, kid)
    info = resp.json()
    assert info.get("active") is True, info
    assert info["client_id"] == client_id and info["sub"] == client_id, info
    assert info["scope"] == SCOPE and info["exp"] == claims["exp"], info

    # Revocation through Authlib (RFC 7009), then the token is inactive.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resp = client.revoke_token(discovery["revocation_endpoint"], token=token["access_token"],
                                   token_type_hint="access_token")
        assert resp.status_code == 200, describe(resp)
        assert_sent_assertion(resp.request, client_id, discovery["revocation_endpoint"], alg,
                              key, kid)
        resp = client.introspect_token(discovery["introspection_endpoint"],
                                       token=token["access_token"])
    assert resp.status_code == 200, describe(resp)
    assert resp.json() == {"active": False}, describe(resp)


def test_private_key_jwt_code_flow_and_refresh(authrim_server, discovery, jwks, alice):
    """The authorization code and refresh_token grants authenticated with private_key_jwt
    (RSA, no kid in the assertion: the server finds the key by trying the client's)."""
    key = new_key("RS256")
    reg = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]},
                         prefix="authlib-pkjwt-web", redirect_uris=[REDIRECT_URI],
                         grant_types=["authorization_code", "refresh_token"],
                         scope="openid profile email offline_access")
    client_id = reg["client_id"]
    method = PrivateKeyJWT(token_endpoint=discovery["token_endpoint"])
    flow = run_code_flow(authrim_server, discovery, alice, client_id, key, method,
                         OFFLINE_SCOPE)
    sent = flow.token_response.request
    assert form_of(sent)["grant_type"] == "authorization_code", form_of(sent)
    assert form_of(sent)["code_verifier"] == flow.code_verifier
    assert_sent_assertion(sent, client_id, discovery["token_endpoint"], "RS256", key)

    id_claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                                flow.nonce, flow.token["access_token"])
    assert id_claims["sub"] == alice["id"], dict(id_claims)
    _, at = verify_access_token(flow.token["access_token"], jwks, discovery["issuer"])
    assert at["sub"] == alice["id"] and at["client_id"] == client_id, at
    rt = flow.token.get("refresh_token")
    assert rt, flow.token

    refreshes = capture(flow.client, "refresh_token_response")
    new = flow.client.refresh_token(discovery["token_endpoint"], refresh_token=rt)
    resp = refreshes[-1]
    assert resp.status_code == 200, describe(resp)
    assert form_of(resp.request)["grant_type"] == "refresh_token"
    assert_sent_assertion(resp.request, client_id, discovery["token_endpoint"], "RS256", key)
    assert new.get("refresh_token") not in (None, rt), new
    _, at2 = verify_access_token(new["access_token"], jwks, discovery["issuer"])
    assert at2["sub"] == alice["id"] and at2["client_id"] == client_id, at2

    # The same refresh without a client assertion is refused: the client must authenticate.
    resp = post_form(discovery["token_endpoint"], grant_type="refresh_token",
                     refresh_token=new["refresh_token"], client_id=client_id)
    assert_invalid_client(resp)


def test_client_secret_jwt_through_authlib(authrim_server, discovery, jwks):
    """Authlib's ClientSecretJWT: HS256, and HS512 for a client that registered it."""
    reg = register_secret_jwt(authrim_server)
    client_id, secret = reg["client_id"], reg["client_secret"]

    client = secret_jwt_session(client_id, secret)
    seen = capture(client)
    token = client.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                               scope=SCOPE)
    assert seen[-1].status_code == 200, describe(seen[-1])
    assert_sent_assertion(seen[-1].request, client_id, discovery["token_endpoint"], "HS256",
                          OctKey.import_key(secret))
    assert_client_token(token, jwks, discovery["issuer"], client_id)

    resp = client.introspect_token(discovery["introspection_endpoint"],
                                   token=token["access_token"])
    assert resp.status_code == 200, describe(resp)
    assert_sent_assertion(resp.request, client_id, discovery["introspection_endpoint"],
                          "HS256", OctKey.import_key(secret))
    assert resp.json().get("active") is True and resp.json()["client_id"] == client_id, resp.text

    # A wrong secret, and the right secret as client_secret_basic / _post: all refused.
    with pytest.raises(OAuthError) as excinfo:
        secret_jwt_session(client_id, secret[:-1] + ("A" if secret[-1] != "A" else "B")
                           ).fetch_token(discovery["token_endpoint"],
                                         grant_type="client_credentials", scope=SCOPE)
    assert excinfo.value.error == "invalid_client", excinfo.value
    basic = OAuth2Session(client_id=client_id, client_secret=secret,
                          token_endpoint_auth_method="client_secret_basic",
                          default_timeout=HTTP_TIMEOUT_S)
    with pytest.raises(OAuthError) as excinfo:
        basic.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                          scope=SCOPE)
    assert excinfo.value.error == "invalid_client", excinfo.value
    resp = post_form(discovery["token_endpoint"], grant_type="client_credentials",
                     client_id=client_id, client_secret=secret)
    assert_invalid_client(resp)

    # token_endpoint_auth_signing_alg pins the algorithm.
    reg512 = register_secret_jwt(authrim_server, prefix="authlib-csjwt-hs512",
                                 token_endpoint_auth_signing_alg="HS512")
    assert reg512.get("token_endpoint_auth_signing_alg") == "HS512", reg512
    hs512 = secret_jwt_session(reg512["client_id"], reg512["client_secret"], alg="HS512")
    seen = capture(hs512)
    token = hs512.fetch_token(discovery["token_endpoint"], grant_type="client_credentials",
                              scope=SCOPE)
    assert_sent_assertion(seen[-1].request, reg512["client_id"], discovery["token_endpoint"],
                          "HS512", OctKey.import_key(reg512["client_secret"]))
    assert_client_token(token, jwks, discovery["issuer"], reg512["client_id"])
    with pytest.raises(OAuthError) as excinfo:
        secret_jwt_session(reg512["client_id"], reg512["client_secret"], alg="HS256"
                           ).fetch_token(discovery["token_endpoint"],
                                         grant_type="client_credentials", scope=SCOPE)
    assert excinfo.value.error == "invalid_client", excinfo.value


def test_private_key_jwt_with_jwks_uri(authrim_server, discovery, jwks, jwks_host):
    """Keys from a jwks_uri: fetched on first use, cached, refetched for a new kid only once
    the refetch interval has passed; a key dropped from the set stops working then."""
    old_kid, new_kid = "key-1", "key-2"
    old_key, new_key_ = new_key("ES256", old_kid), new_key("ES256", new_kid)
    host = jwks_host([public_jwk(old_key)])
    reg = register_pkjwt(authrim_server, jwks_uri=host.url, prefix="authlib-pkjwt-uri")
    client_id = reg["client_id"]
    token_endpoint = discovery["token_endpoint"]

    client = pkjwt_session(client_id, old_key, "ES256", kid=old_kid)
    token = client.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
    assert_client_token(token, jwks, discovery["issuer"], client_id)
    assert len(host.fetches) >= 1, "the server never fetched the client's jwks_uri"
    fetched = len(host.fetches)
    # Cached: a second authentication does not fetch again.
    client.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
    assert len(host.fetches) == fetched, host.fetches

    # Rotation: the set now holds only the new key.
    host.keys = [public_jwk(new_key_)]
    rotated = pkjwt_session(client_id, new_key_, "ES256", kid=new_kid)
    if time.monotonic() - host.fetches[-1] < JWKS_MIN_REFETCH_S - 2:
        # Within the refetch interval the unknown kid does not trigger a fetch: refused.
        with pytest.raises(OAuthError) as excinfo:
            rotated.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
        assert excinfo.value.error == "invalid_client", excinfo.value
        assert len(host.fetches) == fetched, host.fetches
    time.sleep(max(0.0, host.fetches[-1] + JWKS_MIN_REFETCH_S + 1 - time.monotonic()))
    token = rotated.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
    assert_client_token(token, jwks, discovery["issuer"], client_id)
    assert len(host.fetches) == fetched + 1, host.fetches
    # The old key left the set the server now holds.
    with pytest.raises(OAuthError) as excinfo:
        client.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
    assert excinfo.value.error == "invalid_client", excinfo.value


def test_registration_of_jwt_clients(authrim_server):
    """The admin API's rules for the new metadata."""
    key = new_key("ES256", "k")

    def refused(**metadata):
        body = {"client_id": authrim_server.unique("bad-jwt-reg"), "grant_types":
                ["client_credentials"], "redirect_uris": [], "scope": SCOPE, **metadata}
        resp = authrim_server.admin_post("/admin/clients", body)
        assert resp.status_code == 400, (metadata, describe(resp))
        return resp

    refused(token_endpoint_auth_method="private_key_jwt")  # no keys at all
    refused(token_endpoint_auth_method="private_key_jwt", jwks={"keys": [public_jwk(key)]},
            jwks_uri="http://127.0.0.1:9/jwks.json")  # both (RFC 7591 §2)
    refused(token_endpoint_auth_method="private_key_jwt",
            jwks={"keys": [key.as_dict(private=True)]})  # a private key
    refused(token_endpoint_auth_method="private_key_jwt",
            jwks_uri="http://jwks.example.com/jwks.json")  # http off loopback
    refused(token_endpoint_auth_method="private_key_jwt", jwks={"keys": [public_jwk(key)]},
            token_endpoint_auth_signing_alg="HS256")  # a MAC alg for key-based auth
    refused(token_endpoint_auth_method="client_secret_jwt",
            token_endpoint_auth_signing_alg="RS256")
    refused(token_endpoint_auth_method="client_secret_basic",
            token_endpoint_auth_signing_alg="HS256")
    # Accepted: https anywhere, http on a loopback host.
    for uri in ("https://jwks.example.com/jwks.json", "http://localhost:8080/jwks.json"):
        register_pkjwt(authrim_server, jwks_uri=uri, prefix="authlib-pkjwt-reg")
    reg = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]},
                         token_endpoint_auth_signing_alg="ES256", prefix="authlib-pkjwt-reg")
    assert reg.get("token_endpoint_auth_signing_alg") == "ES256", reg


def test_replayed_assertion_refused(authrim_server, discovery, jwks):
    """A jti is spent once: the same assertion again, at /token or /introspect, is 401."""
    key = new_key("RS256", "rk")
    client_id = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]})["client_id"]
    # Signed by Authlib itself (its RFC 7523 signer), aud the token endpoint.
    assertion = private_key_jwt_sign(key, client_id, discovery["token_endpoint"],
                                     header={"kid": "rk"})
    first = assertion_token_request(discovery, assertion)
    assert_ok_token(first, jwks, discovery["issuer"], client_id)
    second = assertion_token_request(discovery, assertion)
    assert_invalid_client(second)
    resp = post_form(discovery["introspection_endpoint"], token=first.json()["access_token"],
                     client_assertion_type=ASSERTION_TYPE, client_assertion=assertion)
    assert_invalid_client(resp)

    # An assertion first used at /introspect (aud = the issuer) cannot then get a token.
    assertion = sign(key, "RS256", assertion_claims(client_id, discovery["issuer"]))
    resp = post_form(discovery["introspection_endpoint"], token=first.json()["access_token"],
                     client_assertion_type=ASSERTION_TYPE, client_assertion=assertion)
    assert resp.status_code == 200 and resp.json().get("active") is True, describe(resp)
    assert_invalid_client(assertion_token_request(discovery, assertion))

    # The same for client_secret_jwt.
    reg = register_secret_jwt(authrim_server)
    assertion = client_secret_jwt_sign(OctKey.import_key(reg["client_secret"]), reg["client_id"],
                                       discovery["token_endpoint"])
    assert_ok_token(assertion_token_request(discovery, assertion), jwks, discovery["issuer"],
                    reg["client_id"])
    assert_invalid_client(assertion_token_request(discovery, assertion))


def test_assertion_with_unregistered_key_refused(authrim_server, discovery, jwks):
    """Signed by a key the client did not register (even with the registered kid): 401."""
    key = new_key("ES256", "mine")
    client_id = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]})["client_id"]
    token_endpoint = discovery["token_endpoint"]

    # Control: the registered key works through Authlib.
    token = pkjwt_session(client_id, key, "ES256", kid="mine").fetch_token(
        token_endpoint, grant_type="client_credentials", scope=SCOPE)
    assert_client_token(token, jwks, discovery["issuer"], client_id)

    for stranger, kid in ((new_key("ES256", "mine"), "mine"), (new_key("ES256"), None),
                          (new_key("RS256"), None)):
        alg = "RS256" if isinstance(stranger, RSAKey) else "ES256"
        session = pkjwt_session(client_id, stranger, alg, kid=kid)
        seen = capture(session)
        with pytest.raises(OAuthError) as excinfo:
            session.fetch_token(token_endpoint, grant_type="client_credentials", scope=SCOPE)
        assert excinfo.value.error == "invalid_client", excinfo.value
        assert_invalid_client(seen[-1])
        # Nor at introspection.
        resp = session.introspect_token(discovery["introspection_endpoint"],
                                        token=token["access_token"])
        assert_invalid_client(resp)

    # Another client's key and assertion, claiming to be this client.
    other_key = new_key("ES256", "theirs")
    register_pkjwt(authrim_server, jwks={"keys": [public_jwk(other_key)]})
    resp = assertion_token_request(
        discovery, sign(other_key, "ES256", assertion_claims(client_id, token_endpoint),
                        {"kid": "theirs"}))
    assert_invalid_client(resp)


def test_bad_assertions_refused(authrim_server, discovery, jwks):
    """Every claim and header the server checks, wrong in turn: 401 invalid_client."""
    key = new_key("RS256", "k1")
    client_id = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]})["client_id"]
    issuer, token_endpoint = discovery["issuer"], discovery["token_endpoint"]
    now = int(time.time())

    def good(**overrides):
        overrides.setdefault("aud", token_endpoint)
        return sign(key, "RS256", assertion_claims(client_id, **overrides), {"kid": "k1"})

    # Controls: each aud the server documents, and the longest lifetime it allows.
    for aud in (issuer, token_endpoint):
        assert_ok_token(assertion_token_request(discovery, good(aud=aud)), jwks, issuer,
                        client_id)
    assert_ok_token(assertion_token_request(discovery, good(exp=now + MAX_LIFETIME_S)), jwks,
                    issuer, client_id)
    # The client_id may be sent too, if it is the assertion's.
    assert_ok_token(assertion_token_request(discovery, good(), client_id=client_id), jwks,
                    issuer, client_id)

    bad = {
        "aud of another endpoint": good(aud=discovery["introspection_endpoint"]),
        "aud of another server": good(aud="https://op.example.com/token"),
        "no aud": good(aud=None),
        "expired": good(iat=now - 600, exp=now - 300),
        "exp too far ahead": good(exp=now + MAX_LIFETIME_S + SERVER_LEEWAY_S + 120),
        "no exp": good(exp=None),
        "no jti": good(jti=None),
        "empty jti": good(jti=""),
        "nbf in the future": good(nbf=now + 600, exp=now + 900),
        "iat in the future": good(iat=now + 600, exp=now + 900),
        "iss not the client": good(iss=client_id + "-other"),
        "sub not the client": good(sub=client_id + "-other"),
        "iss and sub another client": good(iss="someone-else", sub="someone-else"),
        "signature altered": good()[:-6] + ("AAAAAA" if not good().endswith("AAAAAA")
                                            else "BBBBBB"),
        "alg none": unsigned(assertion_claims(client_id, token_endpoint),
                             {"alg": "none", "typ": "JWT"}),
        "HS256 keyed with the public key": hs256_with(
            json.dumps(public_jwk(key)).encode(), assertion_claims(client_id, token_endpoint)),
        "HS256 keyed with the public key's n": hs256_with(
            public_jwk(key)["n"].encode(), assertion_claims(client_id, token_endpoint)),
        "RS384 signed by another RSA key": sign(
            new_key("RS256"), "RS384", assertion_claims(client_id, token_endpoint)),
        "not a JWT": "not-a-jwt",
    }
    for why, assertion in bad.items():
        resp = assertion_token_request(discovery, assertion)
        assert resp.status_code == 401, (why, describe(resp))
        assert_invalid_client(resp)

    # Malformed requests around a good assertion: 400 invalid_request or 401, never a token.
    for form in (
        {"client_assertion_type": "urn:example:other", "client_assertion": good()},
        {"client_assertion": good()},  # no client_assertion_type
        {"client_assertion_type": ASSERTION_TYPE, "client_assertion": good(),
         "client_id": client_id + "-other"},
    ):
        resp = post_form(token_endpoint, grant_type="client_credentials", scope=SCOPE, **form)
        assert resp.status_code in (400, 401), describe(resp)
        assert resp.json().get("error") in ("invalid_request", "invalid_client"), describe(resp)
    # Two methods at once (assertion + Basic) are refused (RFC 6749 §2.3).
    resp = requests.post(token_endpoint, data={"grant_type": "client_credentials", "scope": SCOPE,
                                               "client_assertion_type": ASSERTION_TYPE,
                                               "client_assertion": good()},
                         auth=(client_id, "x"), timeout=HTTP_TIMEOUT_S)
    assert resp.status_code in (400, 401), describe(resp)
    assert "access_token" not in resp.json(), describe(resp)


def test_signing_alg_pinned_for_private_key_jwt(authrim_server, discovery, jwks):
    """token_endpoint_auth_signing_alg: an RSA key registered for PS256 only."""
    key = new_key("PS256", "pk")
    reg = register_pkjwt(authrim_server, jwks={"keys": [public_jwk(key)]},
                         token_endpoint_auth_signing_alg="PS256")
    client_id = reg["client_id"]
    token = pkjwt_session(client_id, key, "PS256", kid="pk").fetch_token(
        discovery["token_endpoint"], grant_type="client_credentials", scope=SCOPE)
    assert_client_token(token, jwks, discovery["issuer"], client_id)
    # The same key, RS256: a good signature, but not the registered algorithm.
    with pytest.raises(OAuthError) as excinfo:
        pkjwt_session(client_id, key, "RS256", kid="pk").fetch_token(
            discovery["token_endpoint"], grant_type="client_credentials", scope=SCOPE)
    assert excinfo.value.error == "invalid_client", excinfo.value
