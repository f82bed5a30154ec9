"""Upstream identity providers (``[[identity_providers]]``) end to end, between third parties.

Three parties as in real life: a relying party written with Authlib at the downstream
Authrim (ours, the server under test, configured with a TOML file through
``AUTHRIM_CONFIG``), the downstream Authrim, and an upstream OpenID provider the user
really signs in at. A ``requests.Session`` plays the browser through the whole chain,
following redirects one by one (the downstream's login page or ``idp_hint``, the upstream's
login and consent forms, the callback, the downstream's consent, the redirect to the
client), and Authlib redeems the code and verifies the ID token against the downstream's
JWKS (signature, iss, aud, exp, nonce, at_hash).

* ``test_node_oidc_provider_upstream``: panva's node-oidc-provider 8.x
  (``upstream/op.mjs``; its development interactions sign in the test person, whose
  e-mail and profile it hands out at its userinfo endpoint only, as OpenID Connect Core
  §5.4 has it for the code flow). What the downstream asks the upstream (code, PKCE S256,
  state, nonce, the registered callback), the callback's RFC 9207 ``iss``, ``amr`` fed,
  just-in-time provisioning with the mapped claims, the audit event, and a second sign-in
  (through the login page's button, in a new browser) as the same ``sub``.
* ``test_authrim_upstream``: a second Authrim as the upstream (issuer
  ``http://localhost:<port>`` so that the browser keeps its cookies apart from the
  downstream's on 127.0.0.1). The same chain; then a person whose verified e-mail a local
  user already has: 409 with ``link_by_email = false`` (and no user made), that local
  user's own ``sub`` with ``link_by_email = true``, and 409 again when the local e-mail
  is not verified. The advice of the 409 page followed: the local user signs in with the
  password, links the upstream account on ``/account``, signs in through the upstream as
  herself, removes the link.
* ``test_callback_refusals``: the upstream's real redirect to our callback, altered:
  ``state`` changed (400), the genuine one in another browser (400), ``iss`` changed or
  left out (401, RFC 9207; node-oidc-provider announces
  ``authorization_response_iss_parameter_supported``); no session after any of them, and
  then the genuine response still signs in once (its code replayed: 401). A cancel at the
  upstream signs nobody in; a provider whose discovery document names another issuer: 502.
* ``test_reauthentication_reaches_the_upstream``: ``prompt=login`` and ``max_age=0`` for a
  user who signs in upstream make the upstream ask again (they are passed on), and the ID
  token's ``auth_time`` is new.
* ``test_private_key_jwt_at_node_oidc_provider``: ``token_endpoint_auth_method =
  "private_key_jwt"``, no secret: node-oidc-provider's clients for us hold our
  ``/login/upstream/<id>/jwks`` as their ``jwks_uri`` (fetched by it over loopback http);
  keys made here (P-256, Ed25519, RSA with ``client_assertion_alg = "PS256"``). Those key
  sets (the public half, kid its RFC 7638 thumbprint, Cache-Control; 404 ``not_found``
  otherwise); each key signs a person in, twice as the same ``sub``; every token request
  node-oidc-provider had (``op.mjs`` logs them) carries an assertion only (header alg, kid,
  typ; iss = sub = client_id, aud its token endpoint, a jti never repeated, exp - iat at most
  60 s), no secret. A client holding another key under our kid: ``invalid_client``, the 401
  page, no session, nobody made.
* ``test_private_key_jwt_key_refused_at_start``: ``authrim --config FILE serve`` stops,
  naming the provider, for a key not in PKCS#8 (SEC 1, PKCS#1), a P-384 key, or no
  ``private_key_file``; the same with a PKCS#8 key starts.

Needs Node.js 20+ with ``npm ci`` in ``upstream/`` (``scripts/test.sh`` does it).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import secrets
import signal
import subprocess
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

import conftest
from conftest import HTTP_TIMEOUT_S, _free_port, admin
from test_authlib import REDIRECT_URI, _FormParser, describe, find_form, verify_id_token

OP_DIR = Path(__file__).resolve().parent / "upstream"
OP_PROGRAM = OP_DIR / "op.mjs"
CALLBACK = "/login/upstream/callback"
SCOPE = "openid profile email"
UPSTREAM_SCOPE = "openid email profile"
SESSION_COOKIE = "authrim_session"
PASSWORD = "upstream sign-in test"
NAME = "Upstream Co"
# node-oidc-provider says "ready" within a second or two when warm; the first start after
# `npm ci` on a fresh machine once printed nothing for 20 s (CI of stop 40), so the bound is
# generous. A provider that exits early is reported at once, whatever the bound.
OP_READY_TIMEOUT_S = 60
# node-oidc-provider's first test person (upstream/op.mjs; vera and wanda are made alike).
ULLA_NODE = {
    "sub": "ulla",
    "email": "ulla@upstream.example",
    "name": "Ulla Upstream",
    "given_name": "Ulla",
    "family_name": "Upstream",
    "nickname": "ulla-nick",
    "locale": "sv-SE",
}
EMAIL_TAKEN = f"link your {NAME} account from your account page"


# --------------------------------------------------------------------------
# Servers
# --------------------------------------------------------------------------


def provider_toml(issuer: str, secret: str | None, idp: str = "up", name: str = NAME,
                  client_id: str = "downstream", **extra) -> str:
    """One ``[[identity_providers]]`` table: ``up``, "Upstream Co", client ``downstream``
    (no ``client_secret`` if ``secret`` is None)."""
    lines = ["[[identity_providers]]", f"id = {json.dumps(idp)}", f"name = {json.dumps(name)}",
             f"issuer = {json.dumps(issuer)}", f"client_id = {json.dumps(client_id)}"]
    if secret is not None:
        lines.append(f"client_secret = {json.dumps(secret)}")
    for key, value in extra.items():
        if isinstance(value, bool):
            lines.append(f"{key} = {'true' if value else 'false'}")
        elif isinstance(value, dict):
            inner = ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items())
            lines.append(f"{key} = {{ {inner} }}")
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


def start_downstream(start_authrim, tmp_path: Path, name: str, toml: str):
    """Our Authrim with ``toml`` as its configuration file (the rest from the environment,
    as conftest sets it)."""
    path = tmp_path / f"{name}.toml"
    path.write_text(toml)
    return start_authrim(name, {"AUTHRIM_CONFIG": str(path)})


class NodeProvider:
    """``node upstream/op.mjs`` on ``port``: node-oidc-provider with the client
    ``downstream`` (``secret``, redirect URI ``redirect_uri``) and the ``private_key_jwt``
    clients ``jwt_clients`` (their metadata beside that)."""

    def __init__(self, port: int, secret: str, redirect_uri: str, log_path: Path,
                 jwt_clients: list[dict] = ()):
        self.issuer = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self._log = open(log_path, "wb")
        self.process = subprocess.Popen(
            ["node", str(OP_PROGRAM)], cwd=str(OP_DIR), stdin=subprocess.DEVNULL,
            stdout=self._log, stderr=subprocess.STDOUT,
            env={"PATH": "/usr/local/bin:/usr/bin:/bin", "PORT": str(port),
                 "CLIENT_SECRET": secret, "REDIRECT_URI": redirect_uri,
                 "JWT_CLIENTS": json.dumps(list(jwt_clients)), "NODE_ENV": "test"})
        deadline = time.monotonic() + OP_READY_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self.stop()
                pytest.fail(f"node-oidc-provider exited with {self.process.returncode}:\n"
                            f"{log_path.read_text(errors='replace')}", pytrace=False)
            if b"ready" in log_path.read_bytes():
                break
            time.sleep(0.1)
        else:
            self.stop()
            pytest.fail(f"node-oidc-provider not ready in {OP_READY_TIMEOUT_S}s:\n"
                        f"{log_path.read_text(errors='replace')}", pytrace=False)
        resp = requests.get(self.issuer + "/.well-known/openid-configuration",
                            timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        self.metadata = resp.json()
        assert self.metadata["issuer"] == self.issuer, self.metadata

    def token_requests(self) -> list[dict]:
        """The requests its token endpoint has had, as op.mjs logs them: ``form``,
        ``authorization`` (whether it had that header), ``status``, ``error``."""
        prefix = b"token_request "
        return [json.loads(line[len(prefix):]) for line in self.log_path.read_bytes().splitlines()
                if line.startswith(prefix)]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=5)
        self._log.close()


@pytest.fixture
def start_node_provider(tmp_path):
    """``start(port, secret, redirect_uri, jwt_clients=())``: node-oidc-provider running,
    stopped after the test; its log is attached to the report of a failing test."""
    if not (OP_DIR / "node_modules" / "oidc-provider").is_dir():
        pytest.fail("needs `npm ci` in tests/e2e/upstream (scripts/test.sh does it)",
                    pytrace=False)
    started: list[NodeProvider] = []

    def start(port: int, secret: str, redirect_uri: str, jwt_clients: list[dict] = ()) -> NodeProvider:
        op = NodeProvider(port, secret, redirect_uri, tmp_path / f"node-op-{port}.log",
                          jwt_clients)
        started.append(op)
        conftest._EXTRA_LOGS.append(("node-oidc-provider", op.log_path))
        return op

    try:
        yield start
    finally:
        for op in started:
            op.stop()


def node_setup(start_authrim, start_node_provider, tmp_path, more=lambda port, secret: "",
               jwt_clients=lambda down: ()):
    """node-oidc-provider upstream of a downstream Authrim (which maps its ``nickname`` to
    our ``preferred_username``); ``more(port, secret)`` is more of its TOML,
    ``jwt_clients(down)`` node-oidc-provider's ``private_key_jwt`` clients. The provider's
    port is chosen first: the downstream needs its issuer, the provider the downstream's
    callback (and key sets)."""
    port = _free_port()
    secret = secrets.token_urlsafe(24)
    down = start_downstream(start_authrim, tmp_path, "downstream", provider_toml(
        f"http://127.0.0.1:{port}", secret, claims={"preferred_username": "nickname"})
        + more(port, secret))
    op = start_node_provider(port, secret, down.issuer + CALLBACK, jwt_clients(down))
    return down, op


# --------------------------------------------------------------------------
# The admin API
# --------------------------------------------------------------------------


def users_of(server) -> list[dict]:
    resp = admin(server, "GET", "/admin/users")
    assert resp.status_code == 200, describe(resp)
    return resp.json()["users"]


def audit(server, event: str) -> list[dict]:
    resp = admin(server, "GET", f"/admin/audit?event={event}")
    assert resp.status_code == 200, describe(resp)
    return resp.json()["events"]


def new_rp_client(server) -> dict:
    """The Authlib relying party's registration at the downstream (admin API)."""
    client_id = server.unique("authlib-upstream")
    reg = server.create_client(client_id=client_id, redirect_uris=[REDIRECT_URI],
                               token_endpoint_auth_method="client_secret_basic",
                               grant_types=["authorization_code"], scope=SCOPE)
    assert reg.get("client_secret"), reg
    return {"client_id": client_id, "client_secret": reg["client_secret"]}


# --------------------------------------------------------------------------
# The relying party (Authlib)
# --------------------------------------------------------------------------


class RelyingParty:
    """One authorization request of an Authlib client at ``server`` (PKCE S256, state,
    nonce) and the redemption of its answer."""

    def __init__(self, server, client: dict, **extra):
        self.server = server
        self.discovery = requests.get(server.url("/.well-known/openid-configuration"),
                                      timeout=HTTP_TIMEOUT_S).json()
        self.client_id = client["client_id"]
        self.session = OAuth2Session(client_id=client["client_id"],
                                     client_secret=client["client_secret"], scope=SCOPE,
                                     redirect_uri=REDIRECT_URI, code_challenge_method="S256",
                                     token_endpoint_auth_method="client_secret_basic")
        self.nonce = generate_token(20)
        self.code_verifier = generate_token(48)
        self.url, self.state = self.session.create_authorization_url(
            self.discovery["authorization_endpoint"], nonce=self.nonce,
            code_verifier=self.code_verifier, **extra)
        query = parse_qs(urlsplit(self.url).query)
        for name, value in extra.items():
            assert query.get(name) == [value], (name, self.url)
        assert query.get("code_challenge_method") == ["S256"], self.url

    def response_params(self, location: str) -> dict:
        loc = urlsplit(location)
        assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, location
        params = parse_qs(loc.query)
        assert params.get("state") == [self.state], location
        assert params.get("iss") == [self.discovery["issuer"]], location
        return params

    def redeem(self, location: str) -> tuple[dict, dict]:
        """The code redeemed with Authlib, the ID token verified against the JWKS; the
        federated sign-in's ``amr``; the userinfo answer. Returns (ID token claims,
        userinfo)."""
        params = self.response_params(location)
        assert "error" not in params and params.get("code"), location
        token = self.session.fetch_token(self.discovery["token_endpoint"],
                                         authorization_response=location,
                                         code_verifier=self.code_verifier, state=self.state)
        assert token.get("id_token"), token
        jwks = requests.get(self.discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
        claims = dict(verify_id_token(token["id_token"], jwks, self.discovery["issuer"],
                                      self.client_id, self.nonce, token["access_token"]))
        assert claims.get("amr") == ["fed"], claims
        assert isinstance(claims.get("auth_time"), int), claims
        resp = self.session.get(self.discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        userinfo = resp.json()
        assert userinfo["sub"] == claims["sub"], (userinfo, claims)
        return claims, userinfo


# --------------------------------------------------------------------------
# The browser
# --------------------------------------------------------------------------


def get(browser: requests.Session, url: str) -> requests.Response:
    return browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)


def post(browser: requests.Session, url: str, data: dict) -> requests.Response:
    return browser.post(url, data=data, allow_redirects=False, timeout=HTTP_TIMEOUT_S)


def follow(browser: requests.Session, resp: requests.Response, stop) -> tuple[requests.Response, str | None]:
    """Follow redirects with GET, as a browser does, until a page, or a Location for which
    ``stop(url)`` holds (not followed). Returns (last response, that Location or None)."""
    for _ in range(20):
        if resp.status_code not in (301, 302, 303, 307, 308):
            return resp, None
        location = urljoin(resp.url, resp.headers["Location"])
        if stop(location):
            return resp, location
        resp = get(browser, location)
    pytest.fail(f"too many redirects, last {describe(resp)}")


def forms(html: str):
    parser = _FormParser()
    parser.feed(html)
    parser.close()
    return parser.forms


def with_param(url: str, name: str, value: str | None) -> str:
    """``url`` with its query parameter ``name`` replaced (``None``: removed)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qs(parts.query, keep_blank_values=True).items()]
    pairs = [(k, vs[0]) for k, vs in query if k != name]
    if value is not None:
        pairs.append((name, value))
    return urlunsplit(parts._replace(query=urlencode(pairs)))


def upstream_request(resp: requests.Response, down, authorization_endpoint: str,
                     client_id: str = "downstream") -> dict:
    """The downstream's redirect to the upstream: what it asks there (OpenID Connect Core
    §3.1.2.1, RFC 7636). Returns its parameters (single values)."""
    assert resp.status_code in (302, 303), describe(resp)
    location = resp.headers["Location"]
    assert location.startswith(authorization_endpoint + "?"), describe(resp)
    query = parse_qs(urlsplit(location).query)
    assert all(len(v) == 1 for v in query.values()), location
    params = {k: v[0] for k, v in query.items()}
    assert params["response_type"] == "code", params
    assert params["client_id"] == client_id, params
    assert params["redirect_uri"] == down.issuer + CALLBACK, params
    assert params["scope"] == UPSTREAM_SCOPE, params
    assert len(params.get("state", "")) >= 22, params
    assert len(params.get("nonce", "")) >= 22, params
    assert re.fullmatch(r"[A-Za-z0-9_-]{43}", params.get("code_challenge", "")), params
    assert params["code_challenge_method"] == "S256", params
    return params


def to_upstream(browser: requests.Session, rp: RelyingParty, down, authorization_endpoint: str,
                via: str, client_id: str = "downstream") -> tuple[requests.Response, dict]:
    """From the client's authorization URL to the downstream's redirect to the upstream:
    ``via="hint"`` (``idp_hint`` in the URL: no login page) or ``"button"`` (the login
    page's "Sign in with Upstream Co" form). Returns (that redirect, its parameters; the
    upstream client ``client_id``)."""
    resp = get(browser, rp.url)
    if via == "button":
        assert resp.status_code == 200, describe(resp)
        page = resp.text
        assert f"Sign in with {NAME}" in page, page
        password = find_form(page, "/login")
        button = find_form(page, "/login/upstream")
        assert button.method == "post", button
        assert button.inputs.get("idp") == {"type": "hidden", "value": "up"}, button
        assert button.inputs.get("challenge", {}).get("type") == "hidden", button
        assert button.inputs["challenge"]["value"] == password.inputs["challenge"]["value"]
        resp = post(browser, urljoin(resp.url, button.action),
                    {"challenge": button.inputs["challenge"]["value"], "idp": "up"})
    return resp, upstream_request(resp, down, authorization_endpoint, client_id)


def callback_params(location: str, down, sent: dict, upstream_issuer: str) -> dict:
    """The upstream's authorization response to our callback: a code, our state, and its
    issuer (RFC 9207)."""
    assert location.startswith(down.issuer + CALLBACK + "?"), location
    params = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert params.get("code"), location
    assert params.get("state") == sent["state"], location
    assert params.get("iss") == upstream_issuer, location
    return params


def at_node_provider(browser, resp, down, login: str = "ulla") -> tuple[str, list[str]]:
    """At node-oidc-provider: its login form (the account id), its consent form, as they
    come; stops at the redirect to our callback. Returns (that URL, the prompts shown)."""
    prompts = []
    for _ in range(4):
        resp, location = follow(browser, resp, lambda u: u.startswith(down.issuer + CALLBACK))
        if location:
            return location, prompts
        assert resp.status_code == 200, describe(resp)
        (form,) = [f for f in forms(resp.text) if f.inputs.get("prompt")]
        prompt = form.inputs["prompt"]["value"]
        prompts.append(prompt)
        data = {"prompt": prompt}
        if prompt == "login":
            data |= {"login": login, "password": "any password"}
        resp = post(browser, urljoin(resp.url, form.action), data)
    pytest.fail(f"no way back from node-oidc-provider; prompts {prompts}")


def at_authrim_provider(browser, resp, down, user: dict) -> tuple[str, bool]:
    """At the upstream Authrim: its login page (``user``'s password) and, the first time,
    its consent for ``downstream``; stops at the redirect to our callback. Returns (that URL,
    whether consent was asked)."""
    resp, location = follow(browser, resp, lambda u: u.startswith(down.issuer + CALLBACK))
    assert location is None and resp.status_code == 200, describe(resp)
    login = find_form(resp.text, "/login")
    resp = post(browser, urljoin(resp.url, login.action),
                {"challenge": login.inputs["challenge"]["value"], "username": user["username"],
                 "password": PASSWORD})
    resp, location = follow(browser, resp, lambda u: u.startswith(down.issuer + CALLBACK))
    consent = location is None
    if consent:
        assert resp.status_code == 200, describe(resp)
        assert "downstream" in resp.text, resp.text
        form = find_form(resp.text, "/consent")
        resp = post(browser, urljoin(resp.url, form.action),
                    {"challenge": form.inputs["challenge"]["value"], "decision": "allow"})
        resp, location = follow(browser, resp, lambda u: u.startswith(down.issuer + CALLBACK))
    assert location, describe(resp)
    return location, consent


def at_downstream(browser, callback_url: str) -> tuple[requests.Response, str | None, bool]:
    """Our callback, then our consent page if asked; stops at the redirect to the client.
    Returns (the last response, that Location or None if a page ended it, consent shown)."""
    resp, location = follow(browser, get(browser, callback_url),
                            lambda u: u.startswith(REDIRECT_URI))
    consent = False
    if location is None and resp.status_code == 200 and urlsplit(resp.url).path == "/consent":
        consent = True
        form = find_form(resp.text, "/consent")
        resp = post(browser, urljoin(resp.url, form.action),
                    {"challenge": form.inputs["challenge"]["value"], "decision": "allow"})
        resp, location = follow(browser, resp, lambda u: u.startswith(REDIRECT_URI))
    return resp, location, consent


def has_session_cookie(browser: requests.Session, server) -> bool:
    """Whether ``browser`` holds ``server``'s session cookie (not the upstream Authrim's:
    it is on another host, ``localhost``)."""
    host = urlsplit(server.issuer).hostname
    return any(c.name == SESSION_COOKIE and c.domain in (host, host + ".local")
               for c in browser.cookies)


def no_session(browser: requests.Session, resp: requests.Response, down, client: dict):
    """No session came of ``resp``: no session cookie set or held, and ``prompt=none`` in
    this browser is answered ``login_required``."""
    assert SESSION_COOKIE not in resp.headers.get("Set-Cookie", ""), describe(resp)
    assert not has_session_cookie(browser, down), browser.cookies
    rp = RelyingParty(down, client, prompt="none")
    answer = get(browser, rp.url)
    assert answer.status_code in (302, 303), describe(answer)
    params = rp.response_params(answer.headers["Location"])
    assert params.get("error") == ["login_required"], params


def error_page(resp: requests.Response, status: int, text: str):
    assert resp.status_code == status, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    page = re.sub(r"\s+", " ", resp.text.replace("&#39;", "'").replace("&#x27;", "'"))
    assert text in page, page


# --------------------------------------------------------------------------
# node-oidc-provider upstream
# --------------------------------------------------------------------------


def test_node_oidc_provider_upstream(start_authrim, start_node_provider, tmp_path):
    down, op = node_setup(start_authrim, start_node_provider, tmp_path)
    assert op.metadata.get("authorization_response_iss_parameter_supported") is True
    client = new_rp_client(down)
    assert users_of(down) == []

    # 1. idp_hint: straight to node-oidc-provider, its login and consent, back; our consent.
    rp = RelyingParty(down, client, idp_hint="up")
    browser = requests.Session()
    resp, sent = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint")
    assert sent["nonce"] != rp.nonce and sent["state"] != rp.state, "the client's values sent on"
    callback, prompts = at_node_provider(browser, resp, down)
    assert prompts == ["login", "consent"], prompts
    callback_params(callback, down, sent, op.issuer)
    resp, location, consent = at_downstream(browser, callback)
    assert location, describe(resp)
    assert consent, "no consent asked for a client the new user never saw"
    claims, userinfo = rp.redeem(location)
    assert has_session_cookie(browser, down), browser.cookies

    # Provisioned: the upstream's e-mail (verified there), profile, nickname as username.
    (user,) = users_of(down)
    assert claims["sub"] == user["id"], (claims, user)
    assert user["username"] == ULLA_NODE["nickname"], user
    for name in ("email", "name", "given_name", "family_name", "locale"):
        assert user["claims"].get(name) == ULLA_NODE[name], (name, user)
        assert userinfo.get(name) == ULLA_NODE[name], (name, userinfo)
    assert user["claims"].get("email_verified") is True, user
    assert userinfo.get("email_verified") is True, userinfo
    assert userinfo.get("preferred_username") == ULLA_NODE["nickname"], userinfo
    created = [e for e in audit(down, "user_created") if e.get("user_id") == user["id"]]
    assert len(created) == 1, created
    assert created[0]["detail"] == {"by": "upstream", "provider": "up"}, created

    # 2. A new browser, the login page's button: signed in there again, the same sub, no
    # second user, no consent asked again here.
    rp2 = RelyingParty(down, client)
    other = requests.Session()
    resp, sent2 = to_upstream(other, rp2, down, op.metadata["authorization_endpoint"], "button")
    assert sent2["state"] != sent["state"] and sent2["nonce"] != sent["nonce"], (sent, sent2)
    assert sent2["code_challenge"] != sent["code_challenge"], (sent, sent2)
    callback, prompts = at_node_provider(other, resp, down)
    assert prompts[0] == "login", prompts
    callback_params(callback, down, sent2, op.issuer)
    resp, location, consent = at_downstream(other, callback)
    assert location and not consent, describe(resp)
    again, _ = rp2.redeem(location)
    assert again["sub"] == claims["sub"], (claims, again)
    assert [u["id"] for u in users_of(down)] == [user["id"]]
    assert len(audit(down, "user_created")) == 1


# --------------------------------------------------------------------------
# private_key_jwt: our signed assertion at node-oidc-provider's token endpoint
# --------------------------------------------------------------------------

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# The members of a public JWK of each type (RFC 7518 §6.2.1, §6.3.1; RFC 8037 §2): those
# of its RFC 7638 thumbprint.
JWK_PUBLIC = {"EC": ("crv", "kty", "x", "y"), "OKP": ("crv", "kty", "x"), "RSA": ("e", "kty", "n")}
# Our providers that sign an assertion: id, node-oidc-provider's client for it, the key's
# type, the configured client_assertion_alg, the assertion's alg, who signs in through it.
PKJWT = [
    ("es", "downstream-es", "p256", None, "ES256", "ulla"),
    ("ed", "downstream-ed", "ed25519", None, "EdDSA", "vera"),
    ("ps", "downstream-ps", "rsa", "PS256", "PS256", "wanda"),
]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def new_private_key(kind: str):
    if kind == "p256":
        return ec.generate_private_key(ec.SECP256R1())
    if kind == "p384":
        return ec.generate_private_key(ec.SECP384R1())
    if kind == "ed25519":
        return ed25519.Ed25519PrivateKey.generate()
    assert kind == "rsa", kind
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def pem(key, form=serialization.PrivateFormat.PKCS8) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, form, serialization.NoEncryption())


def public_jwk(key) -> dict:
    """The public half of ``key`` as a JWK (its required members only)."""
    public = key.public_key()
    if isinstance(public, ed25519.Ed25519PublicKey):
        raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        return {"kty": "OKP", "crv": "Ed25519", "x": b64url(raw)}
    numbers = public.public_numbers()
    if isinstance(public, ec.EllipticCurvePublicKey):
        return {"kty": "EC", "crv": "P-256", "x": b64url(numbers.x.to_bytes(32, "big")),
                "y": b64url(numbers.y.to_bytes(32, "big"))}
    unsigned = lambda i: i.to_bytes((i.bit_length() + 7) // 8, "big")  # noqa: E731
    return {"kty": "RSA", "n": b64url(unsigned(numbers.n)), "e": b64url(unsigned(numbers.e))}


def thumbprint(jwk: dict) -> str:
    """RFC 7638: SHA-256 of the required members, in order, as JSON without whitespace."""
    required = {name: jwk[name] for name in JWK_PUBLIC[jwk["kty"]]}
    return b64url(hashlib.sha256(json.dumps(required, separators=(",", ":"),
                                            sort_keys=True).encode()).digest())


def sent_assertion(request: dict, op: NodeProvider, client_id: str, alg: str, kid: str) -> dict:
    """The client authentication of a token request node-oidc-provider had: an assertion
    (RFC 7523 §2.2, §3; OpenID Connect Core §9), nothing else (no secret, no Authorization
    header). Returns its claims."""
    form = request["form"]
    assert not request["authorization"], request
    assert "client_secret" not in form, request
    assert form.get("client_assertion_type") == ASSERTION_TYPE, request
    assert form.get("client_id", client_id) == client_id, request
    encoded = form["client_assertion"].split(".")
    assert len(encoded) == 3, form
    header, claims = (json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
                      for part in encoded[:2])
    assert header.get("alg") == alg, header
    assert header.get("kid") == kid, header
    assert header.get("typ") == "JWT", header
    assert claims.get("iss") == client_id and claims.get("sub") == client_id, claims
    assert claims.get("aud") == op.metadata["token_endpoint"], (claims, op.metadata)
    assert isinstance(claims.get("jti"), str) and len(claims["jti"]) >= 16, claims
    assert abs(claims["iat"] - time.time()) <= 30, claims
    assert 0 < claims["exp"] - claims["iat"] <= 60, claims
    return claims


def test_private_key_jwt_at_node_oidc_provider(start_authrim, start_node_provider, tmp_path):
    """``token_endpoint_auth_method = "private_key_jwt"``: node-oidc-provider's clients
    for us hold, as ``jwks_uri``, our ``/login/upstream/<id>/jwks``, which it fetches; our
    assertions signed with a P-256 key (ES256), an Ed25519 key (EdDSA) and an RSA key
    (``client_assertion_alg = "PS256"``; its client registered for that alg alone) sign
    people in, twice each as the same ``sub``. A client holding another key than ours: its
    token endpoint refuses (``invalid_client``), nobody signed in or made."""
    keys = {idp: new_private_key(kind) for idp, _, kind, _, _, _ in PKJWT}
    keys["stale"] = new_private_key("p256")
    for idp, key in keys.items():
        (tmp_path / f"{idp}.pem").write_bytes(pem(key))
    algs = {idp: alg for idp, _, _, _, alg, _ in PKJWT} | {"stale": "ES256"}

    def more(port: int, secret: str) -> str:
        tables = [(idp, client, {"client_assertion_alg": configured} if configured else {})
                  for idp, client, _, configured, _, _ in PKJWT]
        tables.append(("stale", "downstream-stale", {}))
        return "".join(provider_toml(
            f"http://127.0.0.1:{port}", None, idp=idp, name=f"{idp.title()} Co",
            client_id=client, token_endpoint_auth_method="private_key_jwt",
            private_key_file=str(tmp_path / f"{idp}.pem"), **extra)
            for idp, client, extra in tables)

    def jwt_clients(down) -> list[dict]:
        clients = [{"client_id": client, "jwks_uri": down.url(f"/login/upstream/{idp}/jwks"),
                    "token_endpoint_auth_signing_alg": alg}
                   for idp, client, _, _, alg, _ in PKJWT]
        # Another P-256 key than ours under our key's kid (node-oidc-provider picks the
        # key by kid): the signature alone is wrong.
        stale = public_jwk(new_private_key("p256")) | {
            "kid": thumbprint(public_jwk(keys["stale"])), "alg": "ES256", "use": "sig"}
        clients.append({"client_id": "downstream-stale", "jwks": {"keys": [stale]},
                        "token_endpoint_auth_signing_alg": "ES256"})
        return clients

    down, op = node_setup(start_authrim, start_node_provider, tmp_path, more, jwt_clients)
    assert "private_key_jwt" in op.metadata["token_endpoint_auth_methods_supported"]
    assert {"ES256", "EdDSA", "PS256"} <= set(
        op.metadata["token_endpoint_auth_signing_alg_values_supported"]), op.metadata
    client = new_rp_client(down)

    # The key sets: each our key's public half and nothing private, kid its thumbprint.
    kids = {}
    for idp, key in keys.items():
        resp = requests.get(down.url(f"/login/upstream/{idp}/jwks"), timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        assert resp.headers["Content-Type"].startswith("application/json"), describe(resp)
        assert re.search(r"max-age=\d+", resp.headers.get("Cache-Control", "")), describe(resp)
        body = resp.json()
        assert list(body) == ["keys"] and len(body["keys"]) == 1, body
        (jwk,) = body["keys"]
        public = public_jwk(key)
        assert set(jwk) == set(public) | {"kid", "use", "alg"}, jwk  # no d, p, q, dp, dq, qi
        assert {name: jwk[name] for name in public} == public, (jwk, public)
        assert jwk["kid"] == thumbprint(public) and jwk["alg"] == algs[idp], jwk
        assert jwk["use"] == "sig", jwk
        kids[idp] = jwk["kid"]
    assert len(set(kids.values())) == len(kids), kids
    # None for a provider we know nothing of, nor for one that uses a secret.
    for idp in ("nope", "up"):
        resp = requests.get(down.url(f"/login/upstream/{idp}/jwks"), timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 404, describe(resp)
        assert resp.headers["Content-Type"].startswith("application/json"), describe(resp)
        assert resp.json()["error"] == "not_found", describe(resp)

    # The provider holding another key: the code is not redeemed, 401, nobody signed in.
    rp = RelyingParty(down, client, idp_hint="stale")
    browser = requests.Session()
    resp, sent = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint",
                             "downstream-stale")
    callback, _ = at_node_provider(browser, resp, down)
    callback_params(callback, down, sent, op.issuer)
    resp = get(browser, callback)
    error_page(resp, 401, "The answer from Stale Co could not be trusted")
    assert "invalid_client" in resp.text, resp.text
    no_session(browser, resp, down, client)
    assert users_of(down) == []
    (refused,) = op.token_requests()
    assert refused["status"] == 401 and refused["error"] == "invalid_client", refused
    jtis = [sent_assertion(refused, op, "downstream-stale", "ES256", kids["stale"])["jti"]]
    (failure,) = [e["detail"] for e in audit(down, "login_failure")]
    assert failure["provider"] == "stale" and "invalid_client" in failure["reason"], failure

    # Each of our keys: a person signed in, provisioned, and the same one in a new browser.
    for idp, node_client, _, _, alg, person in PKJWT:
        subs = []
        for _ in range(2):
            before = len(op.token_requests())
            rp = RelyingParty(down, client, idp_hint=idp)
            browser = requests.Session()
            resp, sent = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"],
                                     "hint", node_client)
            callback, prompts = at_node_provider(browser, resp, down, person)
            assert prompts[0] == "login", prompts
            callback_params(callback, down, sent, op.issuer)
            resp, location, _ = at_downstream(browser, callback)
            assert location, describe(resp)
            claims, userinfo = rp.redeem(location)
            assert userinfo["email"] == f"{person}@upstream.example", userinfo
            (request,) = op.token_requests()[before:]
            assert request["status"] == 200 and request.get("error") is None, request
            jtis.append(sent_assertion(request, op, node_client, alg, kids[idp])["jti"])
            subs.append(claims["sub"])
        assert subs[0] == subs[1], (idp, subs)
        (user,) = [u for u in users_of(down) if u["id"] == subs[0]]
        assert user["claims"]["email"] == f"{person}@upstream.example", user
        created = [e["detail"] for e in audit(down, "user_created") if e["user_id"] == user["id"]]
        assert created == [{"by": "upstream", "provider": idp}], created
    assert len(users_of(down)) == len(PKJWT)
    assert len(set(jtis)) == len(jtis) == 1 + 2 * len(PKJWT), jtis


def test_private_key_jwt_key_refused_at_start(tmp_path):
    """``authrim --config FILE serve`` with a ``private_key_jwt`` provider whose key it
    cannot use stops at once, and says which provider: a key not in PKCS#8 (SEC 1 P-256,
    PKCS#1 RSA), a P-384 key, no ``private_key_file`` at all. The same with a PKCS#8 key
    starts (so that the refusals are the key's)."""
    rsa_key = new_private_key("rsa")
    cases = {
        "sec1": (pem(new_private_key("p256"), serialization.PrivateFormat.TraditionalOpenSSL),
                 "a PKCS#8 PEM key is wanted"),
        "pkcs1": (pem(rsa_key, serialization.PrivateFormat.TraditionalOpenSSL),
                  "a PKCS#8 PEM key is wanted"),
        "p384": (pem(new_private_key("p384")), "not an RSA, P-256 or Ed25519 private key"),
        "none": (None, "private_key_jwt needs private_key_file"),
        "pkcs8": (pem(rsa_key), None),
    }
    for name, (key, refusal) in cases.items():
        extra = {"token_endpoint_auth_method": "private_key_jwt"}
        if key is not None:
            (tmp_path / f"{name}.pem").write_bytes(key)
            extra["private_key_file"] = str(tmp_path / f"{name}.pem")
        config = tmp_path / f"{name}.toml"
        config.write_text(provider_toml("http://127.0.0.1:9", None, idp="partner",
                                        client_id="authrim", **extra))
        port = _free_port()
        data = tmp_path / f"data-{name}"
        data.mkdir()
        env = dict(os.environ, AUTHRIM_LISTEN=f"127.0.0.1:{port}",
                   AUTHRIM_ISSUER=f"http://127.0.0.1:{port}", AUTHRIM_DATA_DIR=str(data),
                   AUTHRIM_ADMIN_TOKEN=secrets.token_urlsafe(32))
        env.pop("AUTHRIM_CONFIG", None)
        process = subprocess.Popen([str(conftest._resolve_binary()), "--config", str(config),
                                    "serve"], cwd=str(tmp_path), env=env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        try:
            if refusal is not None:
                output, _ = process.communicate(timeout=30)
                assert process.returncode not in (0, None), (name, output)
                message = [line for line in output.splitlines() if refusal in line]
                assert message, (name, output)
                assert "partner" in message[0], (name, message)
                if key is not None:
                    assert str(tmp_path / f"{name}.pem") in message[0], (name, message)
                continue
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and process.poll() is None:
                try:
                    if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=2).ok:
                        break
                except requests.ConnectionError:
                    time.sleep(0.1)
            assert process.poll() is None, process.communicate()[0]
            resp = requests.get(f"http://127.0.0.1:{port}/login/upstream/partner/jwks",
                                timeout=HTTP_TIMEOUT_S)
            assert resp.status_code == 200, describe(resp)
            assert resp.json()["keys"][0]["kid"] == thumbprint(public_jwk(rsa_key)), resp.text
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.communicate(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.communicate()


# --------------------------------------------------------------------------
# A second Authrim upstream
# --------------------------------------------------------------------------


def authrim_person(up, name: str) -> dict:
    user = up.create_user(name, PASSWORD, {"email": f"{name}@example.com",
                                           "email_verified": True,
                                           "name": f"{name.title()} Upstream"})
    return {**user, "username": name}


def through_authrim(rp, down, up, up_meta, user, via="hint") -> tuple[requests.Session, requests.Response, str | None]:
    """A new browser from the client through the upstream Authrim (as ``user``) back to our
    callback and on. Returns (browser, last response, redirect to the client or None)."""
    browser = requests.Session()
    resp, sent = to_upstream(browser, rp, down, up_meta["authorization_endpoint"], via)
    callback, _ = at_authrim_provider(browser, resp, down, user)
    callback_params(callback, down, sent, up.issuer)
    resp, location, _ = at_downstream(browser, callback)
    return browser, resp, location


def account_page(browser, down) -> requests.Response:
    """``/account`` in ``browser`` (signing in to the account client through the session)."""
    resp, location = follow(browser, get(browser, down.url("/account")), lambda u: False)
    assert location is None and resp.status_code == 200, describe(resp)
    assert urlsplit(resp.url).path == "/account", describe(resp)
    return resp


def password_sign_in(down, username: str) -> requests.Session:
    """A browser signed in at ``down`` with a password, through ``/account``."""
    browser = requests.Session()
    resp, _ = follow(browser, get(browser, down.url("/account")), lambda u: False)
    login = find_form(resp.text, "/login")
    resp = post(browser, urljoin(resp.url, login.action),
                {"challenge": login.inputs["challenge"]["value"], "username": username,
                 "password": PASSWORD})
    resp, location = follow(browser, resp, lambda u: False)
    assert resp.status_code == 200 and urlsplit(resp.url).path == "/account", describe(resp)
    return browser


def test_authrim_upstream(start_authrim, tmp_path):
    up = start_authrim("upstream", {}, host="localhost")
    up_meta = requests.get(up.url("/.well-known/openid-configuration"),
                           timeout=HTTP_TIMEOUT_S).json()
    assert up_meta["issuer"] == "http://localhost:" + up.base_url.rsplit(":", 1)[1], up_meta
    ulla = authrim_person(up, "ulla")
    vera = authrim_person(up, "vera")
    wanda = authrim_person(up, "wanda")
    # The downstreams' client there; its redirect URIs once they are known.
    reg = up.create_client(client_id="downstream", redirect_uris=["http://127.0.0.1:9/none"],
                           token_endpoint_auth_method="client_secret_basic",
                           grant_types=["authorization_code"], scope=UPSTREAM_SCOPE)
    down = start_downstream(start_authrim, tmp_path, "downstream",
                            provider_toml(up_meta["issuer"], reg["client_secret"]))
    linking = start_downstream(start_authrim, tmp_path, "downstream-link",
                               provider_toml(up_meta["issuer"], reg["client_secret"],
                                             link_by_email=True))
    resp = admin(up, "PATCH", "/admin/clients/downstream",
                 {"redirect_uris": [down.issuer + CALLBACK, linking.issuer + CALLBACK]})
    assert resp.status_code == 200, describe(resp)
    client = new_rp_client(down)

    # ulla, new here: idp_hint, provisioned, amr fed; then the button in a new browser.
    rp = RelyingParty(down, client, idp_hint="up")
    browser, resp, location = through_authrim(rp, down, up, up_meta, ulla)
    assert location, describe(resp)
    claims, userinfo = rp.redeem(location)
    (user,) = users_of(down)
    assert claims["sub"] == user["id"] != ulla["id"], (claims, user, ulla)
    assert user["username"] == "ulla", user  # the upstream's preferred_username
    assert user["claims"]["email"] == userinfo["email"] == "ulla@example.com", (user, userinfo)
    assert user["claims"]["email_verified"] is True, user
    assert userinfo["name"] == "Ulla Upstream", userinfo
    assert [e["detail"] for e in audit(down, "user_created")] == [
        {"by": "upstream", "provider": "up"}]
    rp = RelyingParty(down, client)
    _, resp, location = through_authrim(rp, down, up, up_meta, ulla, via="button")
    assert location, describe(resp)
    assert rp.redeem(location)[0]["sub"] == claims["sub"]
    assert len(users_of(down)) == 1

    # vera: a local user here has her e-mail, verified. link_by_email off: 409, nothing made.
    local = {}
    for server in (down, linking):
        local[server.issuer] = server.create_user(
            "vera-local", PASSWORD, {"email": "vera@example.com", "email_verified": True})
    before = users_of(down)
    rp = RelyingParty(down, client, idp_hint="up")
    browser, resp, location = through_authrim(rp, down, up, up_meta, vera)
    assert location is None, location
    error_page(resp, 409, EMAIL_TAKEN)
    no_session(browser, resp, down, client)
    assert users_of(down) == before

    # link_by_email on: vera signs in as the local user.
    link_client = new_rp_client(linking)
    rp = RelyingParty(linking, link_client, idp_hint="up")
    _, resp, location = through_authrim(rp, linking, up, up_meta, vera)
    assert location, describe(resp)
    claims, _ = rp.redeem(location)
    assert claims["sub"] == local[linking.issuer]["id"], (claims, local)
    assert [u["id"] for u in users_of(linking)] == [local[linking.issuer]["id"]]
    linked = audit(linking, "identity_linked")
    assert [(e["user_id"], e["detail"]) for e in linked] == [
        (local[linking.issuer]["id"], {"provider": "up", "by": "email"})], linked
    # ... but not a local user whose e-mail is not verified here.
    linking.create_user("wanda-local", PASSWORD,
                        {"email": "wanda@example.com", "email_verified": False})
    rp = RelyingParty(linking, link_client, idp_hint="up")
    browser, resp, location = through_authrim(rp, linking, up, up_meta, wanda)
    assert location is None, location
    error_page(resp, 409, EMAIL_TAKEN)
    no_session(browser, resp, linking, link_client)

    # The 409 page's advice at the first downstream: vera-local signs in with her password
    # and links an Upstream Co account on /account: ulla's, linked to another user here
    # (409); then, in a new browser, her own; then she signs in through it as herself.
    for upstream_user in (ulla, vera):
        browser = password_sign_in(down, "vera-local")
        page = account_page(browser, down)
        assert "Linked accounts" in page.text, page.text
        link = find_form(page.text, "/account/links/new")
        assert link.inputs["idp"]["value"] == "up", link
        resp = post(browser, down.url(link.action), {"csrf": link.inputs["csrf"]["value"],
                                                     "idp": "up"})
        params = upstream_request(resp, down, up_meta["authorization_endpoint"])
        callback, _ = at_authrim_provider(browser, resp, down, upstream_user)
        callback_params(callback, down, params, up.issuer)
        resp = get(browser, callback)
        if upstream_user is ulla:
            error_page(resp, 409, f"This {NAME} account is linked to another user")
    resp, location = follow(browser, resp, lambda u: False)
    assert urlsplit(resp.url).path == "/account" and resp.status_code == 200, describe(resp)
    remove = find_form(resp.text, "/account/links/remove")
    assert remove.inputs["idp"]["value"] == "up", remove
    assert "vera@example.com" in resp.text, resp.text
    rp = RelyingParty(down, client, idp_hint="up")
    _, resp, location = through_authrim(rp, down, up, up_meta, vera)
    assert location, describe(resp)
    assert rp.redeem(location)[0]["sub"] == local[down.issuer]["id"]
    # Removed: the upstream sign-in is vera-local's no more.
    resp = post(browser, down.url(remove.action), {"csrf": remove.inputs["csrf"]["value"],
                                                   "idp": "up"})
    assert resp.status_code == 303, describe(resp)
    find_form(account_page(browser, down).text, "/account/links/new")
    rp = RelyingParty(down, client, idp_hint="up")
    _, resp, location = through_authrim(rp, down, up, up_meta, vera)
    error_page(resp, 409, EMAIL_TAKEN)


def test_reauthentication_reaches_the_upstream(start_authrim, start_node_provider, tmp_path):
    """A client that asks for a new authentication (``prompt=login``, ``max_age=0``) of a
    user who signs in upstream: the upstream asks the user to sign in again."""
    down, op = node_setup(start_authrim, start_node_provider, tmp_path)
    client = new_rp_client(down)
    rp = RelyingParty(down, client, idp_hint="up")
    browser = requests.Session()
    resp, _ = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint")
    callback, prompts = at_node_provider(browser, resp, down)
    assert prompts == ["login", "consent"], prompts
    _, location, _ = at_downstream(browser, callback)
    first, _ = rp.redeem(location)
    seen = {}
    for extra in ({"prompt": "login"}, {"max_age": "0"}):
        time.sleep(1.1)  # auth_time has a resolution of one second
        rp = RelyingParty(down, client, idp_hint="up", **extra)
        resp, _ = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint")
        callback, prompts = at_node_provider(browser, resp, down)
        _, location, _ = at_downstream(browser, callback)
        claims, _ = rp.redeem(location)
        assert claims["sub"] == first["sub"] and claims["auth_time"] > first["auth_time"]
        seen[json.dumps(extra)] = prompts
    assert all("login" in prompts for prompts in seen.values()), (
        f"the upstream did not ask the user to sign in again: prompts there {seen}")


# --------------------------------------------------------------------------
# Refused answers at the callback
# --------------------------------------------------------------------------


def test_callback_refusals(start_authrim, start_node_provider, tmp_path):
    # Beside "up": the same provider under another spelling of its issuer, which its
    # discovery document does not name.
    down, op = node_setup(start_authrim, start_node_provider, tmp_path,
                          lambda port, secret: provider_toml(
                              f"http://localhost:{port}", secret, idp="spelt", name="Spelt Co"))
    client = new_rp_client(down)
    rp = RelyingParty(down, client, idp_hint="up")
    browser = requests.Session()
    resp, sent = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint")
    genuine, _ = at_node_provider(browser, resp, down)
    params = callback_params(genuine, down, sent, op.issuer)

    # state altered (one character in the middle): 400, nothing else looked at.
    state = params["state"]
    middle = len(state) // 2
    altered = state[:middle] + ("A" if state[middle] != "A" else "B") + state[middle + 1:]
    resp = get(browser, with_param(genuine, "state", altered))
    error_page(resp, 400, "This sign-in has expired or was started in another browser")
    no_session(browser, resp, down, client)
    # The genuine answer in another browser (state bound to the first one's cookie): 400.
    stranger = requests.Session()
    resp = get(stranger, genuine)
    error_page(resp, 400, "This sign-in has expired or was started in another browser")
    assert not has_session_cookie(stranger, down), stranger.cookies

    # iss altered (RFC 9207 §2.4: compared as strings) or left out (the provider announces
    # it): 401, no session, audited.
    for iss in (op.issuer + "/", "http://127.0.0.1:1", None):
        resp = get(browser, with_param(genuine, "iss", iss))
        error_page(resp, 401, f"The answer from {NAME} could not be trusted")
        no_session(browser, resp, down, client)
    failures = [e["detail"] for e in audit(down, "login_failure")]
    assert len(failures) == 3, failures
    for detail in failures:
        assert detail.get("kind") == "upstream" and detail.get("provider") == "up", detail
        assert "iss" in detail.get("reason", ""), detail
    assert users_of(down) == []

    # The genuine answer still signs in (the refusals spent nothing), once.
    resp, location, consent = at_downstream(browser, genuine)
    assert location and consent, describe(resp)
    claims, _ = rp.redeem(location)
    (user,) = users_of(down)
    assert claims["sub"] == user["id"], (claims, user)
    resp = get(browser, genuine)
    error_page(resp, 401, f"The answer from {NAME} could not be trusted")

    # Cancelled at node-oidc-provider (its "[ Cancel ]" link: error=access_denied to our
    # callback): no session, no code for the client.
    rp = RelyingParty(down, client, idp_hint="up")
    browser = requests.Session()
    resp, sent = to_upstream(browser, rp, down, op.metadata["authorization_endpoint"], "hint")
    resp, _ = follow(browser, resp, lambda u: False)
    (cancel,) = re.findall(r'href="([^"]*/abort)"', resp.text)
    resp, location = follow(browser, get(browser, urljoin(resp.url, cancel)),
                            lambda u: u.startswith(down.issuer + CALLBACK))
    answer = {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}
    assert answer.get("error") == "access_denied" and answer["state"] == sent["state"], answer
    resp, location, _ = at_downstream(browser, location)
    # Told to the client (OpenID Connect Core §3.1.2.6).
    assert location, describe(resp)
    params = rp.response_params(location)
    assert params.get("error") == ["access_denied"] and "code" not in params, location
    no_session(browser, resp, down, client)

    # A provider whose discovery document names another issuer (OpenID Connect Discovery
    # §4.3): the button leads nowhere but to an error (502), not to the provider.
    rp = RelyingParty(down, client)
    browser = requests.Session()
    page = get(browser, rp.url)
    assert f"Sign in with {NAME}" in page.text and "Sign in with Spelt Co" in page.text
    challenge = find_form(page.text, "/login").inputs["challenge"]["value"]
    resp = post(browser, down.url("/login/upstream"), {"challenge": challenge, "idp": "spelt"})
    error_page(resp, 502, "Spelt Co cannot be reached right now")
    # An id no provider has: 400.
    resp = post(browser, down.url("/login/upstream"), {"challenge": challenge, "idp": "nope"})
    error_page(resp, 400, "This way of signing in is not offered here")
    no_session(browser, resp, down, client)
