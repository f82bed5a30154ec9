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
import queue
import threading
import time
from dataclasses import dataclass
from html.parser import HTMLParser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import BadSignatureError, InvalidClaimError, JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry

from conftest import ALICE_CLAIMS, HTTP_TIMEOUT_S, assert_refused_by_other_issuer

REDIRECT_URI = "http://127.0.0.1:9999/cb"
ALL_SCOPES = "openid profile email address phone offline_access"
PROFILE_CLAIMS = ("name", "given_name", "family_name")
EMAIL_CLAIMS = ("email", "email_verified")
PHONE_CLAIMS = ("phone_number", "phone_number_verified")
CLOCK_LEEWAY_S = 5
POST_LOGOUT_REDIRECT_URI = "http://127.0.0.1:9999/logged-out"
LOGOUT_EVENT = "http://schemas.openid.net/event/backchannel-logout"
SESSION_COOKIE = "authrim_session"
BACKCHANNEL_WAIT_S = 10


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


def browser_authorize(server, auth_url: str, username: str, password: str,
                      browser: requests.Session | None = None, base: str = ""):
    """Play the user agent: login form, consent form.

    ``browser`` is the session (cookie jar) to use, a new one if not given. ``base`` is the
    issuer's path (``/tenant1`` behind a path-forwarding proxy): the forms and the consent
    redirect are expected under it.
    Returns ``(redirect Location, whether the consent page was shown)``.
    """
    browser = browser if browser is not None else requests.Session()

    resp = browser.get(auth_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    assert "authrim_browser" in browser.cookies, (
        "GET /authorize did not set the authrim_browser cookie "
        f"(Set-Cookie: {resp.headers.get('Set-Cookie')!r})"
    )

    login = find_form(resp.text, base + "/login")
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
    # A first consent is asked on a GET page the login redirects to (post-redirect-get).
    if resp.status_code == 303 and resp.headers.get("Location", "").startswith(base + "/consent"):
        resp = browser.get(urljoin(resp.url, resp.headers["Location"]), allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    consent_shown = resp.status_code == 200
    if consent_shown:
        consent = find_form(resp.text, base + "/consent")
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
    # The user agent that signed in: it holds the session cookie.
    browser: requests.Session | None = None


def run_code_flow(
    server, discovery, user, client_id, client_secret, auth_method, scope, base: str = ""
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

    browser = requests.Session()
    location, consent_shown = browser_authorize(
        server, auth_url, user["username"], user["password"], browser, base)
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
        browser=browser,
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


@pytest.mark.parametrize("issuer", ["default", "path-tenant", "host-tenant"], indirect=True)
def test_code_flow_client_secret_basic(issuer):
    """Full flow: PKCE + nonce, login, consent, client_secret_basic, ID token, userinfo; at
    the default issuer and at a tenant's (by path and by host), whose tokens carry its
    issuer, verify against its keys only and mean nothing to another issuer."""
    server, discovery, jwks, alice = issuer.server, issuer.discovery, issuer.jwks, issuer.alice
    client_id = server.unique("authlib-basic")
    reg = server.create_client(
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
    flow = run_code_flow(server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", scope, issuer.base)

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

    # Issued by this issuer alone: discovery named it, the ID token carries it (checked
    # above against this issuer's keys), and the other issuer of the deployment refuses both
    # tokens.
    assert discovery["issuer"] == server.issuer
    assert claims["iss"] == server.issuer
    assert_refused_by_other_issuer(issuer, flow.token["access_token"], flow.token["id_token"])


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


# --------------------------------------------------------------------------
# Logout: RP-Initiated Logout 1.0 and Back-Channel Logout 1.0
# --------------------------------------------------------------------------


@dataclass
class Delivery:
    method: str
    path: str
    content_type: str
    form: dict  # parse_qs of the body


class BackchannelReceiver:
    """A relying party's back-channel logout endpoint: ``http.server`` in a thread on
    127.0.0.1, on a port the kernel picks. It keeps every request and answers 200."""

    def __init__(self):
        self.received: queue.Queue[Delivery] = queue.Queue()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = min(int(self.headers.get("Content-Length") or 0), 65536)
                body = self.rfile.read(length).decode("utf-8", "replace")
                received.put(Delivery("POST", self.path, self.headers.get("Content-Type", ""),
                                      parse_qs(body, keep_blank_values=True)))
                self.send_response(200)
                self.send_header("Cache-Control", "no-store")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self):
                received.put(Delivery("GET", self.path, self.headers.get("Content-Type", ""), {}))
                self.send_error(405)

            def log_message(self, *args):  # keep pytest's output clean
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/backchannel-logout"

    def next(self, timeout: float) -> Delivery:
        try:
            return self.received.get(timeout=timeout)
        except queue.Empty:
            pytest.fail(f"no back-channel logout request at {self.url} within {timeout:.0f}s",
                        pytrace=False)

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def backchannel_receiver():
    receiver = BackchannelReceiver()
    try:
        yield receiver
    finally:
        receiver.close()


def verify_logout_token(token: str, jwks: dict, issuer: str, client_id: str, sub: str,
                        sid: str) -> dict:
    """Back-Channel Logout 1.0 §2.6 with Authlib's JOSE library (joserfc, which replaces the
    deprecated ``authlib.jose``): RS256 signature against the JWKS, ``typ`` logout+jwt, and
    the claims through a claims registry (iss, aud, sub and sid by value; iat, exp, jti and
    events required; exp and iat checked against the clock)."""
    decoded = jwt.decode(token, KeySet.import_key_set(jwks), algorithms=["RS256"])
    header = decoded.header
    assert header.get("typ") == "logout+jwt", header
    assert header["alg"] == "RS256", header
    assert header.get("kid") in {k.get("kid") for k in jwks["keys"]}, header
    registry = JWTClaimsRegistry(
        leeway=CLOCK_LEEWAY_S,
        iss={"essential": True, "value": issuer},
        aud={"essential": True, "value": client_id},
        sub={"essential": True, "value": sub},
        sid={"essential": True, "value": sid},
        iat={"essential": True},
        exp={"essential": True},
        jti={"essential": True},
        events={"essential": True},
    )
    registry.validate(decoded.claims)
    return decoded.claims


def silent_authorize(discovery, client_id: str, cookies: dict) -> dict:
    """An authorization request with prompt=none from a browser holding ``cookies``; returns
    the parameters of the redirect back to the client (which must come)."""
    client = OAuth2Session(client_id=client_id, scope="openid", redirect_uri=REDIRECT_URI)
    auth_url, state = client.create_authorization_url(
        discovery["authorization_endpoint"], prompt="none", nonce=generate_token(20))
    header = "; ".join(f"{k}={v}" for k, v in cookies.items())
    resp = requests.get(auth_url, headers={"Cookie": header} if header else {},
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code in (302, 303), describe(resp)
    loc = urlsplit(resp.headers["Location"])
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, describe(resp)
    params = parse_qs(loc.query)
    assert params.get("state") == [state], describe(resp)
    return params


def test_rp_initiated_and_backchannel_logout(authrim_server, discovery, jwks, alice,
                                             backchannel_receiver):
    """Sign in, log out through end_session_endpoint in the same browser, receive and verify
    the back-channel logout token; afterwards the session's tokens and cookie are dead."""
    issuer = authrim_server.issuer
    end_session_endpoint = discovery.get("end_session_endpoint")
    assert end_session_endpoint == issuer + "/logout", discovery
    assert discovery.get("backchannel_logout_supported") is True, discovery
    assert discovery.get("backchannel_logout_session_supported") is True, discovery

    client_id = authrim_server.unique("authlib-logout")
    reg = authrim_server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code"],
        scope=ALL_SCOPES,
        post_logout_redirect_uris=[POST_LOGOUT_REDIRECT_URI],
        backchannel_logout_uri=backchannel_receiver.url,
        backchannel_logout_session_required=True,
    )
    assert reg.get("post_logout_redirect_uris") == [POST_LOGOUT_REDIRECT_URI], reg
    assert reg.get("backchannel_logout_uri") == backchannel_receiver.url, reg
    assert not reg.get("frontchannel_logout_uri"), reg

    # Sign in (no offline_access: nothing of this login may outlive the session).
    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", "openid profile")
    id_claims = verify_id_token(flow.token["id_token"], jwks, issuer, client_id, flow.nonce,
                                flow.token["access_token"])
    sid = id_claims.get("sid")
    assert isinstance(sid, str) and sid, f"the ID token has no sid: {dict(id_claims)}"
    assert fetch_userinfo(flow, discovery)["sub"] == alice["id"]
    browser = flow.browser
    signed_in_cookies = requests.utils.dict_from_cookiejar(browser.cookies)
    assert signed_in_cookies.get(SESSION_COOKIE), signed_in_cookies

    # RP-Initiated Logout: the URL from the server metadata's end_session_endpoint,
    # followed by the browser that holds the session cookie.
    logout_state = generate_token(20)
    logout_url = add_params_to_uri(end_session_endpoint, [
        ("id_token_hint", flow.token["id_token"]),
        ("post_logout_redirect_uri", POST_LOGOUT_REDIRECT_URI),
        ("state", logout_state),
    ])
    started = time.time()
    resp = browser.get(logout_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    loc = urlsplit(resp.headers["Location"])
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == POST_LOGOUT_REDIRECT_URI, describe(resp)
    assert parse_qs(loc.query) == {"state": [logout_state]}, describe(resp)
    assert SESSION_COOKIE not in browser.cookies, (
        f"the session cookie was not removed (Set-Cookie: {resp.headers.get('Set-Cookie')!r})")

    # Back-Channel Logout: one form POST with the logout token, asynchronously.
    delivery = backchannel_receiver.next(BACKCHANNEL_WAIT_S)
    received = time.time()
    assert delivery.method == "POST", delivery
    assert delivery.path == urlsplit(backchannel_receiver.url).path, delivery
    media_type = delivery.content_type.split(";")[0].strip()
    assert media_type == "application/x-www-form-urlencoded", delivery
    assert list(delivery.form) == ["logout_token"], delivery
    assert len(delivery.form["logout_token"]) == 1, delivery
    token = delivery.form["logout_token"][0]

    claims = verify_logout_token(token, jwks, issuer, client_id, alice["id"], sid)
    assert claims["iss"] == issuer, claims
    assert claims["aud"] in (client_id, [client_id]), claims
    assert claims["sub"] == alice["id"], claims
    assert claims["sid"] == sid == id_claims["sid"], claims
    assert claims["events"] == {LOGOUT_EVENT: {}}, claims
    assert "nonce" not in claims, claims
    assert isinstance(claims["jti"], str) and claims["jti"], claims
    assert started - CLOCK_LEEWAY_S <= claims["iat"] <= received + CLOCK_LEEWAY_S, claims
    assert claims["exp"] > claims["iat"], claims
    # The verification really verifies: another audience, another sid, a broken signature.
    with pytest.raises(InvalidClaimError):
        verify_logout_token(token, jwks, issuer, client_id + "-other", alice["id"], sid)
    with pytest.raises(InvalidClaimError):
        verify_logout_token(token, jwks, issuer, client_id, alice["id"], sid + "x")
    head, payload, sig = token.split(".")
    flipped = sig[:-4] + ("AAAA" if sig[-4:] != "AAAA" else "BBBB")
    with pytest.raises((BadSignatureError, JoseError)):
        verify_logout_token(f"{head}.{payload}.{flipped}", jwks, issuer, client_id,
                            alice["id"], sid)

    # The session is over. Its access token is refused at userinfo...
    resp = flow.client.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 401, describe(resp)
    assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), describe(resp)
    # ... and silent authorization needs a login: in the same browser, and with the old
    # session cookie presented again (the session ended on the server, not only the cookie).
    after = requests.utils.dict_from_cookiejar(browser.cookies)
    for cookies in (after, signed_in_cookies):
        params = silent_authorize(discovery, client_id, cookies)
        assert params.get("error") == ["login_required"], (cookies.keys(), params)
        assert "code" not in params, params
