"""Generic JWT bearer grants (RFC 7523 §2.1) from a trusted issuer, end to end.

The issuer is this test: a key made with joserfc, its public half served from a JWKS the test
hosts (``JwksHost`` from test_client_auth.py, on loopback, which the e2e servers may fetch),
and assertions signed by Authlib's own RFC 7523 helper (``sign_jwt_bearer_assertion``, which
adds ``iat``, ``exp`` and a ``jti``). Authrim is started with a TOML file whose
``[[trusted_issuers]]`` names that issuer with ``accept = ["jwt-bearer"]`` and ``subject =
"sub"``; a second issuer is trusted for ID-JAGs only. The token request is Authlib's
``OAuth2Session.fetch_token`` with the jwt-bearer grant type.

Covered: an assertion accepted (ES256 and RS256), the access token verified with joserfc
against Authrim's JWKS and naming the mapped user; refusals with ``invalid_grant`` and a
description: the same assertion again (``jti``), another ``aud``, expired, signed by another
key, from an untrusted issuer, from an issuer trusted for ID-JAGs only, an unknown subject; and
an assertion for the default tenant refused at another tenant, accepted there when made for it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
import requests
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523.assertion import sign_jwt_bearer_assertion
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import HTTP_TIMEOUT_S
from test_client_auth import jwks_host, new_key, public_jwk  # noqa: F401 (jwks_host: fixture)

GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
PASSWORD = "a long test password 1"


def trusted_issuers_toml(issuer: str, jwks_uri: str, jag_only: str, jag_only_jwks: str) -> str:
    return "\n".join([
        "[[trusted_issuers]]",
        f"issuer = {json.dumps(issuer)}",
        f"jwks_uri = {json.dumps(jwks_uri)}",
        'subject = "sub"',
        'accept = ["jwt-bearer"]',
        "",
        "[[trusted_issuers]]",
        f"issuer = {json.dumps(jag_only)}",
        f"jwks_uri = {json.dumps(jag_only_jwks)}",
        'subject = "sub"',
        "",
    ])


class Setup:
    def __init__(self, start_authrim, jwks_host, tmp_path: Path):
        self.keys = {alg: new_key(alg, kid=f"workload-{alg}") for alg in ("ES256", "RS256")}
        self.host = jwks_host([public_jwk(k) for k in self.keys.values()])
        self.issuer = self.host.url.removesuffix("/jwks.json")
        self.other_key = new_key("ES256", kid="jag-only")
        self.jag_only = jwks_host([public_jwk(self.other_key)])
        config = tmp_path / "jwt-bearer.toml"
        config.write_text(trusted_issuers_toml(self.issuer, self.host.url,
                                               self.jag_only.url.removesuffix("/jwks.json"),
                                               self.jag_only.url))
        self.server = start_authrim("jwt-bearer", {"AUTHRIM_CONFIG": str(config)})
        self.discovery = requests.get(self.server.url("/.well-known/openid-configuration"),
                                      timeout=HTTP_TIMEOUT_S).json()
        self.client = self.server.create_client(
            client_id="workload-agent", redirect_uris=[], grant_types=[GRANT], scope="api.read")
        self.user = self.server.create_user("wanda", PASSWORD, {})

    def assertion(self, alg: str = "ES256", key=None, issuer: str | None = None,
                  audience: str | None = None, subject: str = "wanda", **kw) -> str:
        return sign_jwt_bearer_assertion(
            key or self.keys[alg], issuer or self.issuer, audience or self.discovery["issuer"],
            subject, header={"alg": alg, "kid": (key or self.keys[alg]).kid}, **kw)

    def session(self, client: dict | None = None) -> OAuth2Session:
        c = client or self.client
        return OAuth2Session(c["client_id"], c["client_secret"],
                             token_endpoint_auth_method="client_secret_basic")

    def fetch(self, assertion: str, token_endpoint: str | None = None, client: dict | None = None):
        with self.session(client) as s:
            return s.fetch_token(token_endpoint or self.discovery["token_endpoint"],
                                 grant_type=GRANT, assertion=assertion, scope="api.read")

    def refused(self, assertion: str, why: str, **kw):
        with pytest.raises(OAuthError) as e:
            self.fetch(assertion, **kw)
        assert e.value.error == "invalid_grant", (e.value.error, e.value.description)
        assert why in e.value.description, e.value.description


@pytest.fixture
def setup(start_authrim, jwks_host, tmp_path) -> Setup:  # noqa: F811 (jwks_host: fixture)
    return Setup(start_authrim, jwks_host, tmp_path)


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
def test_an_assertion_signed_by_authlib_is_a_grant(setup, alg):
    assert GRANT in setup.discovery["grant_types_supported"]
    assertion = setup.assertion(alg, expires_in=300)
    token = setup.fetch(assertion)
    assert token["token_type"] == "Bearer" and token["scope"] == "api.read", token
    assert "refresh_token" not in token and "id_token" not in token, token
    jwks = requests.get(setup.discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    decoded = jwt.decode(token["access_token"], KeySet.import_key_set(jwks))
    assert decoded.header["typ"] == "at+jwt"
    assert decoded.claims["sub"] == setup.user["id"]
    assert decoded.claims["client_id"] == "workload-agent"
    assert decoded.claims["iss"] == setup.discovery["issuer"]
    # The same assertion again: its jti is spent.
    setup.refused(assertion, "already used")


def test_bad_assertions_are_refused(setup):
    now = int(time.time())
    setup.refused(setup.assertion(audience="https://other-as.example"), "not for this server")
    setup.refused(setup.assertion(issued_at=now - 600, expires_at=now - 300), "expired")
    setup.refused(setup.assertion(expires_in=86400), "must expire within")
    stranger = new_key("ES256", kid=setup.keys["ES256"].kid)
    setup.refused(setup.assertion(key=stranger), "signature")
    setup.refused(setup.assertion(issuer="https://unknown.example"), "not trusted")
    setup.refused(setup.assertion(key=setup.other_key,
                                  issuer=setup.jag_only.url.removesuffix("/jwks.json")),
                  "only identity assertions")
    setup.refused(setup.assertion(subject="nobody"), "no user here")
    # The token endpoint is an audience too (RFC 7523 §3 item 3).
    assert setup.fetch(setup.assertion(audience=setup.discovery["token_endpoint"]))["access_token"]


def test_an_assertion_for_one_tenant_is_refused_at_another(setup):
    acme = setup.server.create_tenant("acme")
    client = acme.create_client(client_id="workload-agent", redirect_uris=[], grant_types=[GRANT],
                                scope="api.read")
    user = acme.create_user("wanda", PASSWORD, {})
    at_acme = acme.url("/token")
    setup.refused(setup.assertion(), "not for this server", token_endpoint=at_acme, client=client)
    token = setup.fetch(setup.assertion(audience=acme.issuer), token_endpoint=at_acme, client=client)
    claims = jwt.decode(token["access_token"], KeySet.import_key_set(
        requests.get(acme.url("/jwks"), timeout=HTTP_TIMEOUT_S).json())).claims
    assert (claims["iss"], claims["sub"]) == (acme.issuer, user["id"])
