"""Pushed authorization requests (RFC 9126) and signed request objects (RFC 9101, OpenID
Connect Core §6.1) from an Authlib relying party.

Authlib has no PAR client: the push is made by hand with requests, authenticated by Authlib's
own client authentication (``OAuth2Session.client_auth``: client_secret_basic and _post,
``PrivateKeyJWT``, ``ClientSecretJWT``, or the public client's bare client_id) and carrying
the parameters Authlib's ``create_authorization_url`` made (PKCE S256, state, nonce); the
browser (test_authlib's form scraper) then goes to ``/authorize`` with ``client_id`` and
``request_uri`` only, and the code is redeemed with ``OAuth2Session.fetch_token``. Request
objects are signed with joserfc, the JOSE library Authlib signs with (``authlib.jose`` is
deprecated), by keys registered inline as the client's ``jwks``, or HS256 with the secret of a
``client_secret_jwt`` client. ID tokens are verified against the JWKS (test_authlib's helper).

What must be refused is each checked after a request that goes through, so that a refusal
cannot come from a broken setup.
"""

from __future__ import annotations

import time
import warnings
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.common.urls import add_params_to_uri
from authlib.integrations.requests_client import OAuth2Session
from authlib.oauth2.rfc7523 import ClientSecretJWT, PrivateKeyJWT
from joserfc import jwt
from joserfc.jwk import OctKey

from conftest import HTTP_TIMEOUT_S
from test_authlib import (
    REDIRECT_URI,
    _FormParser,
    browser_authorize,
    describe,
    find_form,
    verify_id_token,
)
from test_client_auth import ASSERTION_TYPE, b64url_json, form_of, new_key, public_jwk, unsigned

# Registered for every client here, never asked for: a decoy the server must not use.
OTHER_REDIRECT_URI = "http://127.0.0.1:9999/other-cb"
SCOPE = "openid email"
REGISTERED_SCOPE = "openid profile email phone"
REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:"
PAR_TTL_S = 90  # pushed_request_ttl (default)
SPENT = "invalid_request_uri"  # what the error page says of a spent or foreign request_uri
JAR_TYP = "oauth-authz-req+jwt"  # RFC 9101 §10.8


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def redirect_params(resp: requests.Response, redirect_uri: str = REDIRECT_URI) -> dict:
    """The parameters of a redirect back to the client (which must be one, to ``redirect_uri``)."""
    assert resp.status_code in (302, 303), describe(resp)
    loc = urlsplit(resp.headers["Location"])
    assert f"{loc.scheme}://{loc.netloc}{loc.path}" == redirect_uri, describe(resp)
    return {k: v[0] for k, v in parse_qs(loc.query).items()}


def form_post_params(resp: requests.Response, redirect_uri: str = REDIRECT_URI) -> dict:
    """The fields of a form_post response page, whose form must post to ``redirect_uri``."""
    assert resp.status_code == 200, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    parser = _FormParser()
    parser.feed(resp.text)
    [form] = parser.forms
    assert (form.method, form.action) == ("post", redirect_uri), form
    return {k: v["value"] for k, v in form.inputs.items()}


def assert_error_page(resp: requests.Response, *words: str):
    """Refused in the browser, with nothing sent to any client."""
    assert resp.status_code == 400, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    assert "<form" not in resp.text, describe(resp)
    for w in words:
        assert w in resp.text, describe(resp)


def assert_no_second_code(resp: requests.Response, state: str):
    """A request_uri whose code was issued, presented again by a signed-in browser: the
    error goes back to the client, and no code with it."""
    assert resp.status_code in (302, 303), describe(resp)
    back = {k: v[0] for k, v in parse_qs(urlsplit(resp.headers["Location"]).query).items()}
    # RFC 9126 §2.2 / RFC 9101 §7: the error for a request_uri that cannot be used.
    assert back.get("error") == "invalid_request_uri" and "code" not in back, back
    assert back.get("state") == state, back


def assert_only_a_sign_in_page(resp: requests.Response):
    """A browser that is not signed in may still load the page (the request_uri is spent
    when a code is issued): the sign-in form, nothing sent to any client."""
    assert resp.status_code == 200, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    assert 'action="/login"' in resp.text, describe(resp)


def assert_json_error(resp: requests.Response, status: int, error: str):
    assert resp.status_code == status, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    body = resp.json()
    assert body.get("error") == error, describe(resp)
    assert "request_uri" not in body, describe(resp)


def authorize_url(discovery: dict, **params) -> str:
    return discovery["authorization_endpoint"] + "?" + urlencode(params)


class Relying:
    """One Authlib relying party: its session, and each authorization's PKCE verifier,
    state and nonce."""

    def __init__(self, client_id: str, secret, auth_method, scope: str = SCOPE):
        self.client_id = client_id
        self.session = OAuth2Session(
            client_id=client_id,
            client_secret=secret,
            scope=scope,
            redirect_uri=REDIRECT_URI,
            code_challenge_method="S256",
            token_endpoint_auth_method=auth_method,
            default_timeout=HTTP_TIMEOUT_S,
        )
        self.auth_method = auth_method

    def request_params(self, discovery: dict) -> tuple[dict, str]:
        """Authlib's authorization request parameters (PKCE S256, state, nonce), as a dict,
        and the code verifier."""
        verifier = generate_token(48)
        url, _state = self.session.create_authorization_url(
            discovery["authorization_endpoint"], code_verifier=verifier,
            nonce=generate_token(20))
        return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}, verifier

    def push(self, discovery: dict, params: dict) -> requests.Response:
        """POST the request to the PAR endpoint, authenticated the client's way by Authlib.
        client_secret_post and none add client_id themselves (a parameter may not repeat)."""
        if self.auth_method in ("client_secret_post", "none"):
            params = {k: v for k, v in params.items() if k != "client_id"}
        return self.session.post(discovery["pushed_authorization_request_endpoint"], data=params,
                                 auth=self.session.client_auth(self.auth_method),
                                 withhold_token=True, allow_redirects=False)

    def redeem(self, discovery: dict, location: str, verifier: str, state: str) -> dict:
        return self.session.fetch_token(discovery["token_endpoint"], authorization_response=location,
                                        code_verifier=verifier, state=state)


def check_pushed(resp: requests.Response) -> str:
    """A push the server took (RFC 9126 §2.2); returns its request_uri."""
    assert resp.status_code == 201, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    body = resp.json()
    assert set(body) == {"request_uri", "expires_in"}, body
    assert body["request_uri"].startswith(REQUEST_URI_PREFIX), body
    assert len(body["request_uri"]) >= len(REQUEST_URI_PREFIX) + 22, body  # >= 128 bits
    assert body["expires_in"] == PAR_TTL_S, body
    return body["request_uri"]


def sign_request_object(key, alg: str, claims: dict, kid: str | None = None,
                        typ: str | None = JAR_TYP) -> str:
    header = {"alg": alg}
    if kid:
        header["kid"] = kid
    if typ:
        header["typ"] = typ
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # joserfc's SecurityWarning on short HMAC keys etc.
        return jwt.encode(header, claims, key, algorithms=[alg])


def request_object_claims(client_id: str, issuer: str, params: dict, **overrides) -> dict:
    """RFC 9101 §4: the request's parameters and iss (the client), aud (us), iat, exp, jti.
    An override of None leaves that claim out."""
    now = int(time.time())
    claims = {**params, "client_id": client_id, "iss": client_id, "aud": issuer, "iat": now,
              "nbf": now, "exp": now + 300, "jti": generate_token(16)}
    claims.update(overrides)
    return {k: v for k, v in claims.items() if v is not None}


def fresh_browser_get(url: str) -> requests.Response:
    return requests.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)


# --------------------------------------------------------------------------
# Discovery
# --------------------------------------------------------------------------


def test_discovery_lists_par_and_request_objects(authrim_server, discovery):
    issuer = authrim_server.issuer
    assert discovery.get("pushed_authorization_request_endpoint") == issuer + "/par", discovery
    assert discovery.get("require_pushed_authorization_requests") is False, discovery
    assert discovery.get("request_parameter_supported") is True, discovery
    # request_uri values are only ours (from /par): none is fetched.
    assert discovery.get("request_uri_parameter_supported") is True, discovery
    algs = discovery.get("request_object_signing_alg_values_supported")
    for alg in ("RS256", "PS256", "ES256", "ES384", "EdDSA", "HS256"):
        assert alg in algs, (alg, algs)
    assert "none" not in algs, algs
    assert "form_post" in discovery.get("response_modes_supported", []), discovery
    assert "query" in discovery.get("response_modes_supported", []), discovery


# --------------------------------------------------------------------------
# PAR
# --------------------------------------------------------------------------

# method -> how the client is registered and which Authlib method authenticates it
PAR_METHODS = ["client_secret_basic", "client_secret_post", "private_key_jwt",
               "client_secret_jwt", "none"]


def register_par_client(server, method: str, **metadata) -> Relying:
    client_id = server.unique(f"authlib-par-{method.replace('_', '-')}")
    body = dict(client_id=client_id, redirect_uris=[REDIRECT_URI, OTHER_REDIRECT_URI],
                token_endpoint_auth_method=method, grant_types=["authorization_code"],
                scope=REGISTERED_SCOPE, **metadata)
    key = None
    if method == "private_key_jwt":
        key = new_key("ES256", kid=f"par-{generate_token(6)}")
        body["jwks"] = {"keys": [public_jwk(key)]}
    reg = server.create_client(**body)
    for name, value in metadata.items():
        assert reg.get(name) == value, (name, reg)
    if method == "private_key_jwt":
        # No token_endpoint: the assertion's aud is the URL it is sent to (/par, /token).
        return Relying(client_id, key, PrivateKeyJWT(alg="ES256", headers={"kid": key.kid}))
    if method == "client_secret_jwt":
        return Relying(client_id, reg["client_secret"], ClientSecretJWT(alg="HS256"))
    return Relying(client_id, reg.get("client_secret"), method)


def assert_authenticated_as(request, method: str, client_id: str, par_endpoint: str):
    """The push carried the client's credentials the way its method says, and only those."""
    form = form_of(request)
    has_basic = request.headers.get("Authorization", "").startswith("Basic ")
    assert has_basic == (method == "client_secret_basic"), request.headers
    assert ("client_secret" in form) == (method == "client_secret_post"), form
    assert ("client_assertion" in form) == (method in ("private_key_jwt", "client_secret_jwt")), form
    if "client_assertion" in form:
        assert form["client_assertion_type"] == ASSERTION_TYPE, form
        header = b64url_json(form["client_assertion"].split(".")[0])
        claims = b64url_json(form["client_assertion"].split(".")[1])
        assert header["alg"] == ("ES256" if method == "private_key_jwt" else "HS256"), header
        assert claims["iss"] == claims["sub"] == client_id, claims
        assert claims["aud"] == par_endpoint, claims
    if method == "none":
        assert form["client_id"] == client_id, form


@pytest.mark.parametrize("method", PAR_METHODS)
def test_pushed_authorization_request(authrim_server, discovery, jwks, alice, method):
    """RFC 9126 through Authlib's client authentication: a client that must push is refused a
    plain request (to its redirect URI); its pushed request signs in through the browser with
    only client_id and request_uri (other query parameters ignored: another registered
    redirect URI, state, scope, response_mode, prompt=none); the code redeems with Authlib;
    the request_uri is spent after one use."""
    rp = register_par_client(authrim_server, method, require_pushed_authorization_requests=True)
    par_endpoint = discovery["pushed_authorization_request_endpoint"]

    # A plain authorization request is refused, to the client, in the request's state.
    params, _ = rp.request_params(discovery)
    refused = redirect_params(fresh_browser_get(authorize_url(discovery, **params)))
    assert refused.get("error") == "invalid_request", refused
    assert "PAR" in refused.get("error_description", ""), refused
    assert refused["state"] == params["state"] and refused["iss"] == discovery["issuer"], refused
    assert "code" not in refused, refused

    # The push.
    params, verifier = rp.request_params(discovery)
    resp = rp.push(discovery, params)
    request_uri = check_pushed(resp)
    assert_authenticated_as(resp.request, method, rp.client_id, par_endpoint)
    assert form_of(resp.request)["code_challenge_method"] == "S256", form_of(resp.request)

    # The browser, with the request_uri and decoys the server must ignore (RFC 9126 §4).
    decoys = {"redirect_uri": OTHER_REDIRECT_URI, "state": "decoy-state", "nonce": "decoy",
              "scope": "openid phone profile", "response_mode": "form_post", "prompt": "none"}
    url = authorize_url(discovery, client_id=rp.client_id, request_uri=request_uri, **decoys)
    browser = requests.Session()
    location, consent_shown = browser_authorize(authrim_server, url, "alice", alice["password"],
                                                browser)
    assert consent_shown, "a fresh client's first sign-in skipped the consent page"
    back = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert location.startswith(REDIRECT_URI + "?"), location
    assert set(back) == {"code", "state", "iss", "session_state"}, back
    assert back["state"] == params["state"] and back["iss"] == discovery["issuer"], back

    token = rp.redeem(discovery, location, verifier, params["state"])
    assert token.get("scope") == SCOPE, token  # the pushed scope, not the decoy's
    claims = verify_id_token(token["id_token"], jwks, discovery["issuer"], rp.client_id,
                             params["nonce"], token["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)

    # Spent once its code was issued (RFC 9126 §4; the FAPI tests' "one-time use at the
    # point of authorization"): the signed-in browser gets an error back at the client and
    # no code; another browser may load the sign-in page, but no code will come of it.
    assert_no_second_code(browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S), params["state"])
    assert_only_a_sign_in_page(fresh_browser_get(
        authorize_url(discovery, client_id=rp.client_id, request_uri=request_uri)))


def test_pushed_request_refusals(authrim_server, discovery, alice):
    """What /par answers as JSON (RFC 9126 §2.3), and request_uris /authorize will not take:
    another client's, a URL to fetch, an unknown one."""
    basic = register_par_client(authrim_server, "client_secret_basic")
    public = register_par_client(authrim_server, "none")
    par_endpoint = discovery["pushed_authorization_request_endpoint"]

    # Control: a push that is taken, and signs in without require_pushed_authorization_requests
    # (a plain request from this client works too).
    params, _ = basic.request_params(discovery)
    check_pushed(basic.push(discovery, params))
    resp = fresh_browser_get(authorize_url(discovery, **params))
    assert resp.status_code == 200 and find_form(resp.text, "/login"), describe(resp)

    # Client authentication fails: 401 invalid_client.
    wrong = Relying(basic.client_id, basic.session.client_secret + "x", "client_secret_basic")
    resp = wrong.push(discovery, params)
    assert_json_error(resp, 401, "invalid_client")
    assert resp.headers.get("WWW-Authenticate", "").startswith("Basic"), describe(resp)
    resp = requests.post(par_endpoint, data=params, timeout=HTTP_TIMEOUT_S)  # no credentials
    assert_json_error(resp, 401, "invalid_client")

    # A request that /authorize would refuse is refused here, as JSON, not redirected.
    for bad, error in [
        ({"redirect_uri": "http://127.0.0.1:9999/not-registered"}, "invalid_request"),
        ({"request_uri": REQUEST_URI_PREFIX + "x"}, "invalid_request"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"response_mode": "query.jws"}, "invalid_request"),
        ({"scope": "not-a-scope"}, "invalid_scope"),
    ]:
        params, _ = basic.request_params(discovery)
        resp = basic.push(discovery, {**params, **bad})
        assert_json_error(resp, 400, error)
        assert "Location" not in resp.headers, describe(resp)

    # A public client pushes with its client_id only, and must use PKCE.
    params, _ = public.request_params(discovery)
    check_pushed(public.push(discovery, params))
    no_pkce = {k: v for k, v in params.items() if not k.startswith("code_challenge")}
    assert_json_error(public.push(discovery, no_pkce), 400, "invalid_request")

    # A request_uri is for the client that pushed it (it is the request, sealed to that
    # client): presented for another client it is refused, and nothing is recorded, so the
    # client that pushed it can still use it.
    params, _ = basic.request_params(discovery)
    request_uri = check_pushed(basic.push(discovery, params))
    assert_error_page(fresh_browser_get(
        authorize_url(discovery, client_id=public.client_id, request_uri=request_uri)), SPENT)
    assert_only_a_sign_in_page(fresh_browser_get(
        authorize_url(discovery, client_id=basic.client_id, request_uri=request_uri)))
    # Without client_id it is refused as well.
    params, _ = basic.request_params(discovery)
    request_uri = check_pushed(basic.push(discovery, params))
    assert_error_page(fresh_browser_get(authorize_url(discovery, request_uri=request_uri)),
                      "client_id")
    # An unknown one of ours.
    assert_error_page(fresh_browser_get(authorize_url(
        discovery, client_id=basic.client_id, request_uri=REQUEST_URI_PREFIX + generate_token(32))),
        SPENT)
    # A request_uri to fetch that is not one of the client's registered request_uris is never
    # fetched: said to the client when the query names one of its redirect URIs (and in the
    # query's state), else on a page.
    resp = fresh_browser_get(authorize_url(
        discovery, client_id=basic.client_id, request_uri="https://rp.example/request.jwt",
        redirect_uri=REDIRECT_URI, state="s1"))
    back = redirect_params(resp)
    assert (back.get("error"), back.get("state")) == ("invalid_request_uri", "s1"), back
    assert "code" not in back, back
    assert_error_page(fresh_browser_get(authorize_url(
        discovery, client_id=basic.client_id, request_uri="https://rp.example/request.jwt")),
        "invalid_request_uri")


# --------------------------------------------------------------------------
# Signed request objects
# --------------------------------------------------------------------------

JAR_CASES = [
    # (alg, the client's token endpoint auth method, pushed to /par first)
    ("RS256", "client_secret_basic", False),
    ("ES256", "client_secret_basic", False),
    ("ES256", "client_secret_post", True),
    ("HS256", "client_secret_jwt", False),
]


@pytest.mark.parametrize("alg,method,pushed", JAR_CASES,
                         ids=[f"{a}-{m}{'-par' if p else ''}" for a, m, p in JAR_CASES])
def test_signed_request_object(authrim_server, discovery, jwks, alice, alg, method, pushed):
    """A request object signed with the client's registered key (joserfc; HS256: the
    client_secret_jwt client's secret), in the browser's query or pushed to /par: the
    object's parameters are the whole request (the query's others, decoys, are ignored);
    sign-in, code redeemed with Authlib, ID token with the object's nonce."""
    client_id = authrim_server.unique(f"authlib-jar-{alg.lower()}")
    metadata = dict(client_id=client_id, redirect_uris=[REDIRECT_URI, OTHER_REDIRECT_URI],
                    token_endpoint_auth_method=method, grant_types=["authorization_code"],
                    scope=REGISTERED_SCOPE)
    kid = None
    if alg == "HS256":
        reg = authrim_server.create_client(**metadata)
        key = OctKey.import_key(reg["client_secret"])
        rp = Relying(client_id, reg["client_secret"], ClientSecretJWT(alg="HS256"))
    else:
        kid = f"jar-{alg.lower()}-{generate_token(6)}"
        key = new_key(alg, kid)
        decoy = new_key(alg, kid + "-decoy")
        reg = authrim_server.create_client(
            **metadata, jwks={"keys": [public_jwk(decoy), public_jwk(key)]})
        rp = Relying(client_id, reg["client_secret"], method)

    params, verifier = rp.request_params(discovery)
    obj = sign_request_object(key, alg, request_object_claims(client_id, discovery["issuer"],
                                                              params), kid=kid)
    decoys = {"redirect_uri": OTHER_REDIRECT_URI, "state": "decoy-state", "nonce": "decoy",
              "scope": "openid phone profile", "prompt": "none", "response_type": "code"}
    if pushed:
        # client_id and the object only: the object is the request.
        resp = rp.push(discovery, {"client_id": client_id, "request": obj})
        request_uri = check_pushed(resp)
        assert set(form_of(resp.request)) == {"client_id", "client_secret", "request"}
        url = authorize_url(discovery, client_id=client_id, request_uri=request_uri, **decoys)
    else:
        url = authorize_url(discovery, client_id=client_id, request=obj, **decoys)

    browser = requests.Session()
    location, consent_shown = browser_authorize(authrim_server, url, "alice", alice["password"],
                                                browser)
    assert consent_shown, "a fresh client's first sign-in skipped the consent page"
    assert location.startswith(REDIRECT_URI + "?"), location
    back = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert set(back) == {"code", "state", "iss", "session_state"}, back
    assert back["state"] == params["state"] and back["iss"] == discovery["issuer"], back

    token = rp.redeem(discovery, location, verifier, params["state"])
    assert token.get("scope") == SCOPE, token
    claims = verify_id_token(token["id_token"], jwks, discovery["issuer"], client_id,
                             params["nonce"], token["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)
    if pushed:
        assert_only_a_sign_in_page(fresh_browser_get(
            authorize_url(discovery, client_id=client_id, request_uri=request_uri)))


def test_request_object_refusals(authrim_server, discovery, alice):
    """Request objects that cannot be used: error=invalid_request_object to the query's
    redirect URI when it is one of the client's (in the query's state and response mode), a
    page otherwise, 400 JSON at /par; require_signed_request_object and
    request_object_signing_alg."""
    issuer = discovery["issuer"]
    kid = f"jar-rs-{generate_token(6)}"
    key = new_key("RS256", kid)
    client_id = authrim_server.unique("authlib-jar-neg")
    reg = authrim_server.create_client(
        client_id=client_id, redirect_uris=[REDIRECT_URI, OTHER_REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
        scope=REGISTERED_SCOPE, jwks={"keys": [public_jwk(key)]})
    rp = Relying(client_id, reg["client_secret"], "client_secret_basic")
    params, _ = rp.request_params(discovery)
    good = request_object_claims(client_id, issuer, params)

    def front(obj: str, **query) -> requests.Response:
        return fresh_browser_get(authorize_url(discovery, client_id=client_id, request=obj, **query))

    def refused(obj: str, **extra) -> dict:
        """Sent with the registered redirect URI and a state in the query: the error must come
        back there, with that state."""
        back = redirect_params(front(obj, redirect_uri=REDIRECT_URI, state="outer", **extra))
        assert back.get("error") == "invalid_request_object", back
        assert back.get("state") == "outer" and back.get("iss") == issuer, back
        assert "code" not in back, back
        return back

    # Control: the right key, with and without kid, signs in (the login page).
    for k in (kid, None):
        resp = front(sign_request_object(key, "RS256", good, kid=k), redirect_uri=REDIRECT_URI)
        assert resp.status_code == 200 and find_form(resp.text, "/login"), describe(resp)

    stranger = new_key("RS256", kid)  # unregistered, under the registered kid
    stranger_es = new_key("ES256")
    bad_objects = {
        "unregistered key, registered kid": sign_request_object(stranger, "RS256", good, kid=kid),
        "unregistered key, no kid": sign_request_object(stranger, "RS256", good),
        "unregistered EC key": sign_request_object(stranger_es, "ES256", good),
        "HS256 with the client_secret_basic secret": sign_request_object(
            OctKey.import_key(reg["client_secret"]), "HS256", good),
        "alg none": unsigned(good, {"alg": "none", "typ": JAR_TYP}),
        "aud another server": sign_request_object(
            key, "RS256", {**good, "aud": "https://other.example"}, kid=kid),
        "no aud": sign_request_object(key, "RS256", {k: v for k, v in good.items() if k != "aud"}, kid=kid),
        "iss another client": sign_request_object(key, "RS256", {**good, "iss": "someone-else"}, kid=kid),
        "expired": sign_request_object(
            key, "RS256", {**good, "iat": int(time.time()) - 600, "exp": int(time.time()) - 300},
            kid=kid),
        "nbf in the future": sign_request_object(
            key, "RS256", {**good, "nbf": int(time.time()) + 600}, kid=kid),
        "client_id another client": sign_request_object(
            key, "RS256", {**good, "client_id": "someone-else"}, kid=kid),
        "request_uri inside": sign_request_object(
            key, "RS256", {**good, "request_uri": REQUEST_URI_PREFIX + "x"}, kid=kid),
        "signature altered": (lambda t: t[:-6] + ("AAAAAA" if not t.endswith("AAAAAA") else "BBBBBB"))(
            sign_request_object(key, "RS256", good, kid=kid)),
    }
    for why, obj in bad_objects.items():
        try:
            refused(obj)
        except AssertionError as e:
            raise AssertionError(f"{why}: {e}") from None
    # response_type in the query and the object must agree (OIDC Core §6.3.3).
    refused(sign_request_object(key, "RS256", good, kid=kid), response_type="none")

    # In the query's response mode: form_post gets a page that posts the error.
    fields = form_post_params(front(bad_objects["unregistered key, registered kid"],
                                    redirect_uri=REDIRECT_URI, state="outer",
                                    response_mode="form_post"))
    assert fields.get("error") == "invalid_request_object", fields
    assert (fields.get("state"), fields.get("iss")) == ("outer", issuer), fields

    # Not to a redirect URI the client does not have, nor without one: a page.
    obj = bad_objects["unregistered key, registered kid"]
    assert_error_page(front(obj, redirect_uri="http://127.0.0.1:9999/not-registered", state="x"),
                      "invalid_request_object")
    assert_error_page(front(obj, state="x"), "invalid_request_object")

    # At /par: JSON, after a control push.
    check_pushed(rp.push(discovery, {"client_id": client_id,
                                     "request": sign_request_object(key, "RS256", good, kid=kid)}))
    assert_json_error(rp.push(discovery, {"client_id": client_id, "request": obj}), 400,
                      "invalid_request_object")

    # A client that must sign, with ES256 only.
    es_kid = f"jar-es-{generate_token(6)}"
    es_key, rs_key = new_key("ES256", es_kid), new_key("RS256", es_kid + "-rs")
    strict_id = authrim_server.unique("authlib-jar-strict")
    strict = authrim_server.create_client(
        client_id=strict_id, redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
        scope=REGISTERED_SCOPE, jwks={"keys": [public_jwk(es_key), public_jwk(rs_key)]},
        require_signed_request_object=True, request_object_signing_alg="ES256")
    assert strict.get("require_signed_request_object") is True, strict
    assert strict.get("request_object_signing_alg") == "ES256", strict
    strict_rp = Relying(strict_id, strict["client_secret"], "client_secret_basic")
    params, _ = strict_rp.request_params(discovery)
    claims = request_object_claims(strict_id, issuer, params)
    resp = fresh_browser_get(add_params_to_uri(discovery["authorization_endpoint"], [
        ("client_id", strict_id), ("request", sign_request_object(es_key, "ES256", claims, es_kid))]))
    assert resp.status_code == 200 and find_form(resp.text, "/login"), describe(resp)
    # Unsigned: refused (invalid_request), in the browser and at /par.
    back = redirect_params(fresh_browser_get(authorize_url(discovery, **params)))
    assert back.get("error") == "invalid_request" and back.get("state") == params["state"], back
    assert "code" not in back, back
    assert_json_error(strict_rp.push(discovery, params), 400, "invalid_request")
    # Signed with its other, registered, key (RS256): not the algorithm it registered.
    rs_obj = sign_request_object(rs_key, "RS256", claims, es_kid + "-rs")
    back = redirect_params(fresh_browser_get(authorize_url(
        discovery, client_id=strict_id, request=rs_obj, redirect_uri=REDIRECT_URI, state="o")))
    assert back.get("error") == "invalid_request_object" and back.get("state") == "o", back
    assert_json_error(strict_rp.push(discovery, {"client_id": strict_id, "request": rs_obj}), 400,
                      "invalid_request_object")
