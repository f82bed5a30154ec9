"""End-to-end tests of Authrim driven by Authlib, a third-party OIDC client.

Each test runs the authorization code flow the way a real relying party and a
real browser would: Authlib builds the authorization URL (PKCE S256 + nonce),
a ``requests.Session`` plays the browser through Authrim's HTML login and
consent forms, Authlib exchanges the code at the token endpoint with the
client authentication method under test, the ID token is verified against the
published JWKS with Authlib/joserfc, and the userinfo endpoint is called with
the access token.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import BadSignatureError, InvalidClaimError, JoseError
from joserfc.jwk import KeySet

from conftest import ALICE_CLAIMS, HTTP_TIMEOUT_S

REDIRECT_URI = "http://127.0.0.1:9999/cb"
ALL_SCOPES = "openid profile email address phone offline_access"
PROFILE_CLAIMS = ("name", "given_name", "family_name")
EMAIL_CLAIMS = ("email", "email_verified")
PHONE_CLAIMS = ("phone_number", "phone_number_verified")
CLOCK_LEEWAY_S = 5


# --------------------------------------------------------------------------
# A tiny HTML form scraper (the "browser")
# --------------------------------------------------------------------------


@dataclass
class Form:
    action: str
    method: str
    inputs: dict  # name -> {"type": ..., "value": ...}
    buttons: list  # [(name, value)]


class _FormParser(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.forms: list[Form] = []
        self._current: Form | None = None

    def handle_starttag(self, tag, attrs):
        a = {k.lower(): (v if v is not None else "") for k, v in attrs}
        if tag == "form":
            self._current = Form(
                action=a.get("action", ""),
                method=a.get("method", "get").lower(),
                inputs={},
                buttons=[],
            )
            self.forms.append(self._current)
            return
        if self._current is None:
            return
        if tag == "input":
            typ = a.get("type", "text").lower()
            if typ == "submit":
                self._current.buttons.append((a.get("name", ""), a.get("value", "")))
            elif "name" in a:
                self._current.inputs[a["name"]] = {"type": typ, "value": a.get("value", "")}
        elif tag == "button":
            typ = a.get("type", "submit").lower()
            if typ == "submit":
                self._current.buttons.append((a.get("name", ""), a.get("value", "")))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        if tag == "form":
            self._current = None


def find_form(html: str, action: str) -> Form:
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    for form in parser.forms:
        if urlsplit(form.action).path == action:
            return form
    raise AssertionError(
        f"no <form action={action!r}> in page; forms found: "
        f"{[(f.method, f.action) for f in parser.forms]}\n--- page ---\n{html[:3000]}"
    )


def describe(resp: requests.Response) -> str:
    return (
        f"{resp.request.method} {resp.request.url} -> {resp.status_code}\n"
        f"headers: {dict(resp.headers)}\nbody: {resp.text[:2000]}"
    )


def browser_authorize(server, auth_url: str, username: str, password: str):
    """Play the user agent: login form, consent form.

    Returns ``(redirect Location, whether the consent page was shown)``.
    """
    browser = requests.Session()

    resp = browser.get(auth_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    assert "authrim_browser" in browser.cookies, (
        "GET /authorize did not set the authrim_browser cookie "
        f"(Set-Cookie: {resp.headers.get('Set-Cookie')!r})"
    )

    login = find_form(resp.text, "/login")
    assert login.method == "post", login
    assert login.inputs.get("challenge", {}).get("type") == "hidden", login
    assert login.inputs["challenge"]["value"], "empty login challenge"
    assert "username" in login.inputs, login
    assert login.inputs.get("password", {}).get("type") == "password", login

    resp = browser.post(
        urljoin(resp.url, login.action),
        data={
            "challenge": login.inputs["challenge"]["value"],
            "username": username,
            "password": password,
        },
        allow_redirects=False,
        timeout=HTTP_TIMEOUT_S,
    )
    consent_shown = resp.status_code == 200
    if consent_shown:
        consent = find_form(resp.text, "/consent")
        assert consent.method == "post", consent
        assert consent.inputs.get("challenge", {}).get("type") == "hidden", consent
        assert ("decision", "allow") in consent.buttons, consent
        assert ("decision", "deny") in consent.buttons, consent
        resp = browser.post(
            urljoin(resp.url, consent.action),
            data={"challenge": consent.inputs["challenge"]["value"], "decision": "allow"},
            allow_redirects=False,
            timeout=HTTP_TIMEOUT_S,
        )
    assert resp.status_code == 303, describe(resp)
    location = resp.headers.get("Location")
    assert location, describe(resp)
    return location, consent_shown


# --------------------------------------------------------------------------
# The relying party (Authlib)
# --------------------------------------------------------------------------


@dataclass
class FlowResult:
    client: OAuth2Session
    token: dict
    token_response: requests.Response
    nonce: str
    state: str
    code_verifier: str
    redirect_location: str


def run_code_flow(
    server, discovery, user, client_id, client_secret, auth_method, scope
) -> FlowResult:
    client = OAuth2Session(
        client_id=client_id,
        client_secret=client_secret,
        scope=scope,
        redirect_uri=REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method=auth_method,
    )
    token_responses: list[requests.Response] = []

    def capture(resp):
        token_responses.append(resp)
        return resp

    client.register_compliance_hook("access_token_response", capture)

    code_verifier = generate_token(48)
    nonce = generate_token(20)
    auth_url, state = client.create_authorization_url(
        discovery["authorization_endpoint"], nonce=nonce, code_verifier=code_verifier
    )
    query = parse_qs(urlsplit(auth_url).query)
    assert query["code_challenge"] == [create_s256_code_challenge(code_verifier)]
    assert query["code_challenge_method"] == ["S256"]
    assert query["nonce"] == [nonce]

    location, consent_shown = browser_authorize(
        server, auth_url, user["username"], user["password"])
    # Every test registers a fresh client, so consent cannot have been given yet.
    assert consent_shown, "POST /login skipped the consent page for a never-consented client"

    # The authorization response: back to our redirect_uri, state unchanged,
    # RFC 9207 iss equal to the issuer.
    loc = urlsplit(location)
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, location
    params = parse_qs(loc.query)
    assert "error" not in params, location
    assert params.get("state") == [state], location
    assert params.get("iss") == [discovery["issuer"]], location
    assert params.get("code") and params["code"][0], location

    token = client.fetch_token(
        discovery["token_endpoint"],
        authorization_response=location,
        code_verifier=code_verifier,
        state=state,
    )
    assert len(token_responses) == 1
    token_resp = token_responses[0]
    assert token_resp.status_code == 200, describe(token_resp)
    assert "no-store" in token_resp.headers.get("Cache-Control", ""), describe(token_resp)
    assert token_resp.headers.get("Content-Type", "").startswith("application/json")

    assert token.get("access_token"), token
    assert token.get("token_type") == "Bearer", token
    assert isinstance(token.get("expires_in"), int) and token["expires_in"] > 0, token
    assert "openid" in token.get("scope", "").split(), token
    assert token.get("id_token"), token

    return FlowResult(
        client=client,
        token=token,
        token_response=token_resp,
        nonce=nonce,
        state=state,
        code_verifier=code_verifier,
        redirect_location=location,
    )


def verify_id_token(id_token: str, jwks: dict, issuer: str, client_id: str,
                    nonce: str | None, access_token: str) -> CodeIDToken:
    """Verify signature, iss, aud, exp, iat, nonce, azp, at_hash with Authlib.

    ``nonce=None`` is for ID tokens from a refresh (OpenID Connect Core 12.2),
    which answer no authentication request and so need not carry a nonce.
    """
    key_set = KeySet.import_key_set(jwks)
    decoded = jwt.decode(id_token, key_set, algorithms=["RS256"])
    header = decoded.header
    assert header["alg"] == "RS256", header
    assert header.get("kid"), f"id_token header has no kid: {header}"
    assert header["kid"] in {k.get("kid") for k in jwks["keys"]}, header

    options = {
        "iss": {"essential": True, "value": issuer},
        "aud": {"essential": True, "value": client_id},
        "sub": {"essential": True},
        "exp": {"essential": True},
        "iat": {"essential": True},
        "at_hash": {"essential": True},
    }
    params = {"client_id": client_id, "access_token": access_token}
    if nonce is not None:
        options["nonce"] = {"essential": True}
        params["nonce"] = nonce
    claims = CodeIDToken(decoded.claims, header, options=options, params=params)
    claims.validate(leeway=CLOCK_LEEWAY_S)

    # Belt and braces: at_hash per OIDC Core 3.1.3.6, computed independently.
    digest = hashlib.sha256(access_token.encode("ascii")).digest()
    expected = base64.urlsafe_b64encode(digest[:16]).rstrip(b"=").decode()
    assert claims["at_hash"] == expected, (claims["at_hash"], expected)
    assert claims["exp"] > claims["iat"], dict(claims)
    return claims


def assert_id_token_rejects_tampering(id_token, jwks, issuer, client_id, nonce, access_token):
    """The verifier really verifies: wrong nonce / aud / signature are rejected."""
    with pytest.raises(InvalidClaimError):
        verify_id_token(id_token, jwks, issuer, client_id, nonce + "x", access_token)
    with pytest.raises(InvalidClaimError):
        verify_id_token(id_token, jwks, issuer, client_id + "-other", nonce, access_token)
    with pytest.raises(InvalidClaimError):
        verify_id_token(id_token, jwks, issuer, client_id, nonce, access_token + "x")
    head, payload, sig = id_token.split(".")
    flipped = sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")
    with pytest.raises((BadSignatureError, JoseError)):
        verify_id_token(f"{head}.{payload}.{flipped}", jwks, issuer, client_id, nonce,
                        access_token)


def fetch_userinfo(flow: FlowResult, discovery: dict) -> dict:
    resp = flow.client.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.request.headers["Authorization"] == f"Bearer {flow.token['access_token']}"
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    return resp.json()


def assert_claims(userinfo: dict, names, present: bool):
    for name in names:
        if present:
            assert name in userinfo, (name, userinfo)
            assert userinfo[name] == ALICE_CLAIMS[name], (name, userinfo)
        else:
            assert name not in userinfo, (name, userinfo)


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_discovery_document(authrim_server, discovery, jwks):
    issuer = authrim_server.issuer
    assert discovery["issuer"] == issuer
    for ep in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri"):
        assert discovery.get(ep, "").startswith(issuer + "/"), (ep, discovery.get(ep))
    assert "S256" in discovery.get("code_challenge_methods_supported", []), discovery
    assert "plain" not in discovery.get("code_challenge_methods_supported", []), discovery
    assert "code" in discovery.get("response_types_supported", []), discovery
    assert "RS256" in discovery.get("id_token_signing_alg_values_supported", []), discovery
    assert "openid" in discovery.get("scopes_supported", ["openid"]), discovery
    methods = discovery.get("token_endpoint_auth_methods_supported", ["client_secret_basic"])
    for m in ("client_secret_basic", "client_secret_post", "none"):
        assert m in methods, (m, methods)
    rsa_sig_keys = [k for k in jwks["keys"] if k.get("kty") == "RSA"]
    assert rsa_sig_keys, jwks
    for k in jwks["keys"]:
        assert k.get("kid"), k
        assert not {"d", "p", "q", "dp", "dq", "qi"} & k.keys(), "private key material in JWKS"


def test_code_flow_client_secret_basic(authrim_server, discovery, jwks, alice):
    """Full flow: PKCE + nonce, login, consent, client_secret_basic, ID token, userinfo."""
    client_id = authrim_server.unique("authlib-basic")
    reg = authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
    )
    assert reg["client_id"] == client_id, reg
    assert reg.get("client_secret"), reg
    assert reg.get("token_endpoint_auth_method") == "client_secret_basic", reg
    assert reg.get("redirect_uris") == [REDIRECT_URI], reg

    scope = "openid profile email address phone"
    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", scope)

    # Authlib sent HTTP Basic credentials, not body credentials.
    sent = flow.token_response.request
    assert sent.headers.get("Authorization", "").startswith("Basic "), sent.headers
    body = parse_qs(sent.body if isinstance(sent.body, str) else sent.body.decode())
    assert "client_secret" not in body, body
    assert body.get("code_verifier") == [flow.code_verifier], body
    assert set(flow.token["scope"].split()) == set(scope.split()), flow.token

    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"], (dict(claims), alice)
    assert_id_token_rejects_tampering(flow.token["id_token"], jwks, discovery["issuer"],
                                      client_id, flow.nonce, flow.token["access_token"])

    userinfo = fetch_userinfo(flow, discovery)
    assert userinfo["sub"] == claims["sub"], (userinfo, dict(claims))
    assert_claims(userinfo, PROFILE_CLAIMS + EMAIL_CLAIMS + PHONE_CLAIMS, present=True)
    assert userinfo.get("address", {}).get("country") == "JP", userinfo
    assert userinfo.get("address", {}).get("locality") == "Tokyo", userinfo

    # Without a token the userinfo endpoint must refuse (RFC 6750 section 3).
    resp = requests.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 401, describe(resp)
    assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), describe(resp)


def test_code_flow_client_secret_post(authrim_server, discovery, jwks, alice):
    """Confidential client authenticating with client_secret_post; scope filtering."""
    client_id = authrim_server.unique("authlib-post")
    reg = authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_post",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
    )
    assert reg.get("client_secret"), reg
    assert reg.get("token_endpoint_auth_method") == "client_secret_post", reg

    scope = "openid email"
    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_post", scope)

    sent = flow.token_response.request
    assert "Authorization" not in sent.headers, sent.headers
    body = parse_qs(sent.body if isinstance(sent.body, str) else sent.body.decode())
    assert body.get("client_id") == [client_id], body
    assert body.get("client_secret") == [reg["client_secret"]], body

    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"]

    userinfo = fetch_userinfo(flow, discovery)
    assert userinfo["sub"] == claims["sub"]
    assert_claims(userinfo, EMAIL_CLAIMS, present=True)
    assert_claims(userinfo, PROFILE_CLAIMS + PHONE_CLAIMS + ("address",), present=False)


def test_code_flow_public_client_pkce(authrim_server, discovery, jwks, alice):
    """Public client (token_endpoint_auth_method=none) relying on PKCE alone."""
    client_id = authrim_server.unique("authlib-public")
    reg = authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
    )
    assert "client_secret" not in reg, reg
    assert reg.get("token_endpoint_auth_method") == "none", reg

    scope = "openid profile"
    flow = run_code_flow(authrim_server, discovery, alice, client_id, None, "none", scope)

    sent = flow.token_response.request
    assert "Authorization" not in sent.headers, sent.headers
    body = parse_qs(sent.body if isinstance(sent.body, str) else sent.body.decode())
    assert body.get("client_id") == [client_id], body
    assert "client_secret" not in body, body
    assert body.get("code_verifier") == [flow.code_verifier], body

    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"]

    userinfo = fetch_userinfo(flow, discovery)
    assert userinfo["sub"] == claims["sub"]
    assert_claims(userinfo, PROFILE_CLAIMS, present=True)
    assert_claims(userinfo, EMAIL_CLAIMS + PHONE_CLAIMS + ("address",), present=False)


def _authorize_only(server, discovery, user, client_id, auth_method, client_secret=None):
    client = OAuth2Session(
        client_id=client_id,
        client_secret=client_secret,
        scope="openid",
        redirect_uri=REDIRECT_URI,
        code_challenge_method="S256",
        token_endpoint_auth_method=auth_method,
    )
    code_verifier = generate_token(48)
    auth_url, state = client.create_authorization_url(
        discovery["authorization_endpoint"], nonce=generate_token(20),
        code_verifier=code_verifier,
    )
    location, _ = browser_authorize(server, auth_url, user["username"], user["password"])
    return client, location, state, code_verifier


def test_pkce_wrong_verifier_and_code_replay_rejected(authrim_server, discovery, alice):
    """PKCE is enforced for the public client and codes are single-use."""
    client_id = authrim_server.unique("authlib-public-neg")
    authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
    )

    # Wrong code_verifier -> invalid_grant.
    client, location, state, _verifier = _authorize_only(
        authrim_server, discovery, alice, client_id, "none")
    with pytest.raises(OAuthError) as excinfo:
        client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                           code_verifier=generate_token(48), state=state)
    assert excinfo.value.error == "invalid_grant", excinfo.value

    # Correct verifier works once; replaying the code -> invalid_grant.
    client, location, state, verifier = _authorize_only(
        authrim_server, discovery, alice, client_id, "none")
    token = client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                               code_verifier=verifier, state=state)
    assert token.get("access_token"), token
    with pytest.raises(OAuthError) as excinfo:
        client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                           code_verifier=verifier, state=state)
    assert excinfo.value.error == "invalid_grant", excinfo.value
