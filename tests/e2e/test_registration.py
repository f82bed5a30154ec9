"""Dynamic client registration (RFC 7591, OpenID Connect Dynamic Registration 1.0) and client
configuration (RFC 7592) from the outside: a client registers itself at the discovered
``registration_endpoint`` with requests, and then is the relying party with Authlib
(``OAuth2Session``: the code flow, PKCE, ID token verified against the JWKS, refresh), with
nothing but what the registration response gave it.

Registration is closed by default: the operator hands out initial access tokens (the admin
API's ``POST /admin/registration-tokens``, or ``authrim registration-token`` on the server's
data directory), each good for a number of registrations. ``start_authrim`` runs a second
server with ``AUTHRIM_OPEN_REGISTRATION`` (and ``AUTHRIM_REGISTRATION_MAX_CLIENTS``) for the
tests of open registration.

Whether a client's credentials authenticate at ``/token`` is asked with an authorization
code grant for a code that does not exist: 400 ``invalid_grant`` means the client was
authenticated (and only the code was wrong), 401 ``invalid_client`` that it was not.
"""

from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.base_client import OAuthError
from authlib.integrations.requests_client import OAuth2Session

from conftest import ALICE_CLAIMS, HTTP_TIMEOUT_S
from test_authlib import (
    REDIRECT_URI,
    browser_authorize,
    describe,
    run_code_flow,
    verify_id_token,
)

OLD_REDIRECT_URI = "http://127.0.0.1:9999/old-cb"
# The operator's policy by default (registration_scopes, registration_grant_types).
POLICY_SCOPES = {"openid", "profile", "email", "address", "phone", "offline_access"}
OFFLINE_SCOPE = "openid email offline_access"
CLOCK_LEEWAY_S = 5
# What RFC 7592 GET/PUT answer besides the metadata; the secret only when one is issued.
MANAGEMENT_MEMBERS = {"registration_access_token", "registration_client_uri"}
SECRET_MEMBERS = {"client_secret", "client_secret_expires_at"}


# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------


def initial_access_token(server, max_uses: int = 1, expires_in: int = 600) -> str:
    """An initial access token from the operator's admin API."""
    before = int(time.time())
    resp = server.admin_post("/admin/registration-tokens",
                             {"max_uses": max_uses, "expires_in": expires_in})
    assert resp.status_code == 201, describe(resp)
    body = resp.json()
    assert set(body) == {"initial_access_token", "max_uses", "expires_at"}, body
    assert body["max_uses"] == max_uses, body
    assert before + expires_in <= body["expires_at"] <= int(time.time()) + expires_in + 1, body
    assert isinstance(body["initial_access_token"], str), body
    assert len(body["initial_access_token"]) >= 32, body
    return body["initial_access_token"]


def register(server, metadata, token: str | None = None, session=requests) -> requests.Response:
    """POST the metadata as JSON to the registration endpoint, with the token as Bearer."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return session.post(server.url("/register"), json=metadata, headers=headers,
                        timeout=HTTP_TIMEOUT_S)


def assert_registered(server, resp: requests.Response, sent: dict, started: float) -> dict:
    """A 201 client information response (RFC 7591 §3.2.1) for the metadata ``sent``."""
    assert resp.status_code == 201, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    body = resp.json()
    client_id = body.get("client_id")
    assert isinstance(client_id, str) and len(client_id) >= 16, body
    assert started - CLOCK_LEEWAY_S <= body["client_id_issued_at"] <= time.time() + CLOCK_LEEWAY_S, body
    assert isinstance(body.get("registration_access_token"), str), body
    assert len(body["registration_access_token"]) >= 32, body
    assert body["registration_client_uri"] == f"{server.issuer}/register/{client_id}", body
    for name, value in sent.items():
        if name in ("scope", "client_id", "client_secret", "x_unknown_member"):
            continue
        assert body.get(name) == value, (name, body)
    method = body.get("token_endpoint_auth_method")
    if method in ("none", "private_key_jwt"):
        assert not SECRET_MEMBERS & body.keys(), body
    else:
        assert isinstance(body.get("client_secret"), str) and len(body["client_secret"]) >= 32, body
        assert body["client_secret_expires_at"] == 0, body
    return body


def assert_registration_error(resp: requests.Response, status: int, error: str):
    assert resp.status_code == status, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("application/json"), describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    body = resp.json()
    assert body.get("error") == error, describe(resp)
    assert "client_id" not in body and "client_secret" not in body, body
    if status == 401:
        assert resp.headers.get("WWW-Authenticate", "").startswith("Bearer"), describe(resp)


def client_ids(server) -> set[str]:
    resp = requests.get(server.url("/admin/clients"), timeout=HTTP_TIMEOUT_S,
                        headers={"Authorization": f"Bearer {server.admin_token}"})
    assert resp.status_code == 200, describe(resp)
    return {c["client_id"] for c in resp.json()["clients"]}


def manage(method: str, reg: dict, token: str | None = None, body: dict | None = None,
           uri: str | None = None) -> requests.Response:
    """An RFC 7592 request to the client's registration_client_uri with ``token`` (its
    registration access token unless told otherwise; ``""`` for none)."""
    token = reg["registration_access_token"] if token is None else token
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return requests.request(method, uri or reg["registration_client_uri"], json=body,
                            headers=headers, timeout=HTTP_TIMEOUT_S)


def metadata_of(info: dict) -> dict:
    """A client information response without the credentials it may carry."""
    return {k: v for k, v in info.items() if k not in SECRET_MEMBERS}


def token_probe(discovery: dict, client_id: str, secret: str | None,
                method: str = "client_secret_basic") -> requests.Response:
    """An authorization code grant for a code that does not exist, authenticated by
    ``method``: 400 invalid_grant if the client authenticated, 401 invalid_client if not."""
    form = {"grant_type": "authorization_code", "code": generate_token(32),
            "redirect_uri": REDIRECT_URI, "code_verifier": generate_token(48)}
    auth = None
    if method == "client_secret_basic":
        auth = (client_id, secret)
    elif method == "client_secret_post":
        form.update(client_id=client_id, client_secret=secret)
    else:
        form["client_id"] = client_id
    return requests.post(discovery["token_endpoint"], data=form, auth=auth, timeout=HTTP_TIMEOUT_S)


def assert_authenticates(resp: requests.Response):
    assert resp.status_code == 400, describe(resp)
    assert resp.json().get("error") == "invalid_grant", describe(resp)


def assert_invalid_client(resp: requests.Response):
    assert resp.status_code == 401, describe(resp)
    assert resp.json().get("error") == "invalid_client", describe(resp)


def authorize_page(discovery: dict, client_id: str, redirect_uri: str) -> requests.Response:
    """A fresh browser's GET /authorize for ``client_id`` with PKCE, state and nonce."""
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
              "scope": "openid", "state": generate_token(16), "nonce": generate_token(16),
              "code_challenge": generate_token(43), "code_challenge_method": "S256"}
    return requests.get(discovery["authorization_endpoint"] + "?" + urlencode(params),
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)


def assert_refused_page(resp: requests.Response):
    """Refused in the browser, nothing sent to any redirect URI."""
    assert resp.status_code == 400, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    assert resp.headers.get("Content-Type", "").startswith("text/html"), describe(resp)
    assert 'action="/login"' not in resp.text, describe(resp)


def assert_login_page(resp: requests.Response):
    assert resp.status_code == 200, describe(resp)
    assert 'action="/login"' in resp.text, describe(resp)


def concurrently(n: int, server, call) -> list:
    """``call(session)`` from ``n`` threads at once: each opens its connection first (a
    /healthz on its own keep-alive session), then all are released together."""
    barrier = threading.Barrier(n)

    def one(_):
        with requests.Session() as session:
            assert session.get(server.url("/healthz"), timeout=HTTP_TIMEOUT_S).status_code == 200
            barrier.wait(timeout=HTTP_TIMEOUT_S)
            return call(session)

    with ThreadPoolExecutor(max_workers=n) as pool:
        return list(pool.map(one, range(n)))


# --------------------------------------------------------------------------
# Registration with an initial access token
# --------------------------------------------------------------------------


def test_discovery_advertises_the_registration_endpoint(authrim_server, discovery):
    assert discovery.get("registration_endpoint") == authrim_server.issuer + "/register", discovery


def test_registration_needs_a_valid_initial_access_token(authrim_server, discovery):
    """Closed registration: no token, an unknown one, or the operator's admin token are 401
    invalid_token, and no client comes of them."""
    before = client_ids(authrim_server)
    metadata = {"redirect_uris": [REDIRECT_URI], "client_name": "no token"}
    resp = requests.post(discovery["registration_endpoint"], json=metadata, timeout=HTTP_TIMEOUT_S)
    assert_registration_error(resp, 401, "invalid_token")
    for token in (secrets.token_urlsafe(32), authrim_server.admin_token):
        resp = register(authrim_server, metadata, token)
        assert_registration_error(resp, 401, "invalid_token")
        assert 'error="invalid_token"' in resp.headers["WWW-Authenticate"], describe(resp)
    assert client_ids(authrim_server) == before


def test_token_is_checked_before_the_metadata(authrim_server):
    """An unknown or used-up initial access token is 401 invalid_token whatever the body:
    who may not register learns nothing of the registration rules (here a redirect URI with
    a fragment, which a valid token gets 400 invalid_redirect_uri for)."""
    token = initial_access_token(authrim_server, max_uses=1)
    ok = {"redirect_uris": [REDIRECT_URI]}
    assert_registered(authrim_server, register(authrim_server, ok, token), ok, time.time())
    bad = {"redirect_uris": [REDIRECT_URI + "#frag"], "grant_types": ["client_credentials"]}
    for unusable in (token, secrets.token_urlsafe(32)):
        assert_registration_error(register(authrim_server, bad, unusable), 401, "invalid_token")


def test_registration_with_an_admin_api_token_then_code_flow(authrim_server, discovery, jwks,
                                                            alice):
    """A token from the admin API (max_uses 1) registers one client, whose metadata come back
    (scopes outside the policy dropped, unknown members ignored); the token is then used up.
    The client, with only its registration response, signs Alice in with Authlib
    (client_secret_basic), gets a verified ID token, userinfo and a refresh."""
    token = initial_access_token(authrim_server, max_uses=1)
    sent = {
        "client_name": "Authlib (registered)",
        "redirect_uris": [REDIRECT_URI],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic",
        "scope": "openid profile email offline_access https://api.example.com/write",
        "contacts": ["ops@rp.example.com"],
        "client_uri": "https://rp.example.com/",
        "policy_uri": "https://rp.example.com/privacy",
        "tos_uri": "https://rp.example.com/terms",
        "logo_uri": "https://rp.example.com/logo.png",
        "x_unknown_member": "ignored",
    }
    before = client_ids(authrim_server)
    started = time.time()
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, started)
    assert set(reg["scope"].split()) == {"openid", "profile", "email", "offline_access"}, reg
    assert "x_unknown_member" not in reg, reg
    client_id = reg["client_id"]
    assert client_ids(authrim_server) == before | {client_id}

    # max_uses 1: the same token registers nothing more.
    again = register(authrim_server, {"redirect_uris": [REDIRECT_URI]}, token)
    assert_registration_error(again, 401, "invalid_token")
    assert client_ids(authrim_server) == before | {client_id}

    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", "openid profile email offline_access")
    assert flow.token_response.request.headers["Authorization"].startswith("Basic "), flow
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)
    userinfo = flow.client.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert userinfo.status_code == 200, describe(userinfo)
    info = userinfo.json()
    assert info["sub"] == alice["id"] and info["email"] == ALICE_CLAIMS["email"], info
    assert info["name"] == ALICE_CLAIMS["name"], info

    assert flow.token.get("refresh_token"), flow.token
    refreshed = flow.client.refresh_token(discovery["token_endpoint"],
                                          refresh_token=flow.token["refresh_token"])
    assert refreshed["refresh_token"] != flow.token["refresh_token"], refreshed
    again_claims = verify_id_token(refreshed["id_token"], jwks, discovery["issuer"], client_id,
                                   None, refreshed["access_token"])
    assert again_claims["sub"] == alice["id"], dict(again_claims)


def test_registration_with_a_cli_token(authrim_server, discovery, jwks, alice):
    """``authrim registration-token --max-uses 2`` (on the running server's data directory)
    registers two clients and no third: one sending only redirect_uris (the defaults filled
    in), one for client_secret_post that signs Alice in with Authlib."""
    before_cli = int(time.time())
    done = authrim_server.cli("registration-token", "--max-uses", "2", "--expires-in", "600")
    out = json.loads(done.stdout)
    assert out["max_uses"] == 2, out
    assert before_cli + 600 <= out["expires_at"] <= int(time.time()) + 601, out
    token = out["initial_access_token"]
    assert token not in done.stderr, "the CLI printed the token on stderr too"

    started = time.time()
    minimal = {"redirect_uris": [REDIRECT_URI]}
    defaults = assert_registered(authrim_server, register(authrim_server, minimal, token),
                                 minimal, started)
    assert defaults["grant_types"] == ["authorization_code"], defaults
    assert defaults["response_types"] == ["code"], defaults
    assert defaults["token_endpoint_auth_method"] == "client_secret_basic", defaults
    assert set(defaults["scope"].split()) == POLICY_SCOPES, defaults

    sent = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "client_secret_post",
            "scope": "openid email", "client_name": "Authlib (CLI token)"}
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, started)
    assert reg["scope"] == "openid email", reg
    assert reg["client_id"] != defaults["client_id"], reg

    assert_registration_error(register(authrim_server, minimal, token), 401, "invalid_token")

    flow = run_code_flow(authrim_server, discovery, alice, reg["client_id"], reg["client_secret"],
                         "client_secret_post", "openid email")
    form = parse_qs(flow.token_response.request.body)
    assert form["client_secret"] == [reg["client_secret"]], form
    assert "Authorization" not in flow.token_response.request.headers
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], reg["client_id"],
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)


@pytest.mark.parametrize("max_uses", [1, 3])
def test_initial_access_token_uses_hold_under_concurrency(authrim_server, max_uses):
    """Twelve registrations at once with a token good for ``max_uses``: exactly that many
    clients, the rest 401 invalid_token."""
    token = initial_access_token(authrim_server, max_uses=max_uses)
    before = client_ids(authrim_server)
    answers = concurrently(12, authrim_server, lambda session: register(
        authrim_server, {"redirect_uris": [REDIRECT_URI]}, token, session))
    created = [r.json()["client_id"] for r in answers if r.status_code == 201]
    refused = [r for r in answers if r.status_code != 201]
    assert len(created) == max_uses, [describe(r) for r in answers]
    for r in refused:
        assert_registration_error(r, 401, "invalid_token")
    assert client_ids(authrim_server) == before | set(created)


def test_expired_initial_access_token(authrim_server):
    """A token past its expires_in registers nothing; the admin API refuses tokens good for
    no use or no time."""
    token = initial_access_token(authrim_server, max_uses=5, expires_in=1)
    time.sleep(2.2)
    before = client_ids(authrim_server)
    assert_registration_error(register(authrim_server, {"redirect_uris": [REDIRECT_URI]}, token),
                              401, "invalid_token")
    assert client_ids(authrim_server) == before
    for body in ({"max_uses": 0}, {"expires_in": 0}, {"max_uses": 1, "uses": 3}):
        resp = authrim_server.admin_post("/admin/registration-tokens", body)
        assert resp.status_code == 400, describe(resp)


def test_server_chooses_the_client_id_and_secret(authrim_server, discovery):
    """A client_id or client_secret in the registration request is not taken: the server
    issues its own, and a client registered by the operator cannot be taken over."""
    operator = authrim_server.create_client(
        client_id=authrim_server.unique("operator-client"), redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
        scope="openid")
    chosen_secret = secrets.token_urlsafe(32)
    sent = {"client_id": operator["client_id"], "client_secret": chosen_secret,
            "redirect_uris": [REDIRECT_URI]}
    token = initial_access_token(authrim_server)
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    assert reg["client_id"] != operator["client_id"], reg
    assert reg["client_secret"] != chosen_secret, reg
    assert_authenticates(token_probe(discovery, reg["client_id"], reg["client_secret"]))
    assert_invalid_client(token_probe(discovery, reg["client_id"], chosen_secret))
    # The operator's client is as it was: its secret authenticates, the chosen one does not,
    # and the new registration access token does not manage it.
    assert_authenticates(token_probe(discovery, operator["client_id"], operator["client_secret"]))
    assert_invalid_client(token_probe(discovery, operator["client_id"], chosen_secret))
    uri = f"{authrim_server.issuer}/register/{operator['client_id']}"
    resp = manage("GET", reg, uri=uri)
    assert_registration_error(resp, 401, "invalid_token")


REFUSALS = [
    ("fragment", {"redirect_uris": [REDIRECT_URI + "#frag"]}, "invalid_redirect_uri"),
    ("http-not-loopback", {"redirect_uris": ["http://rp.example.com/cb"]}, "invalid_redirect_uri"),
    ("relative", {"redirect_uris": ["/cb"]}, "invalid_redirect_uri"),
    ("no-redirect-uri", {"grant_types": ["authorization_code"]}, "invalid_redirect_uri"),
    ("client-credentials", {"redirect_uris": [REDIRECT_URI],
                            "grant_types": ["authorization_code", "client_credentials"]},
     "invalid_client_metadata"),
    ("client-credentials-only", {"grant_types": ["client_credentials"], "response_types": []},
     "invalid_client_metadata"),
    ("token-exchange", {"redirect_uris": [REDIRECT_URI], "grant_types": [
        "authorization_code", "urn:ietf:params:oauth:grant-type:token-exchange"]},
     "invalid_client_metadata"),
    ("implicit", {"redirect_uris": [REDIRECT_URI], "response_types": ["id_token token"],
                  "grant_types": ["implicit"]}, "invalid_client_metadata"),
    ("private-key-jwt-without-keys", {"redirect_uris": [REDIRECT_URI],
                                      "token_endpoint_auth_method": "private_key_jwt"},
     "invalid_client_metadata"),
    ("unknown-auth-method", {"redirect_uris": [REDIRECT_URI],
                             "token_endpoint_auth_method": "tls_client_auth"},
     "invalid_client_metadata"),
    ("unsigned-id-token", {"redirect_uris": [REDIRECT_URI], "id_token_signed_response_alg": "none"},
     "invalid_client_metadata"),
    ("not-an-object", ["redirect_uris", REDIRECT_URI], "invalid_client_metadata"),
    ("software-statement", {"redirect_uris": [REDIRECT_URI], "software_statement":
                            "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJodHRwczovL3Rwcy5leGFtcGxlIn0.c2ln"},
     "unapproved_software_statement"),
]


@pytest.mark.parametrize("name,metadata,error", REFUSALS, ids=[r[0] for r in REFUSALS])
def test_registration_refused(authrim_server, name, metadata, error):
    """RFC 7591 §3.2.2: 400 with the error code, no client, and the initial access token
    (max_uses 1) not spent: the same token then registers a valid client."""
    token = initial_access_token(authrim_server, max_uses=1)
    before = client_ids(authrim_server)
    assert_registration_error(register(authrim_server, metadata, token), 400, error)
    assert client_ids(authrim_server) == before
    ok = {"redirect_uris": [REDIRECT_URI]}
    assert_registered(authrim_server, register(authrim_server, ok, token), ok, time.time())


def test_scopes_outside_the_policy_are_dropped_not_refused(authrim_server):
    """Scopes beyond registration_scopes are dropped, as documented (issue 36, MCP item 1):
    a request naming only such scopes is registered as if it had named none, with the
    policy's scopes, and the answer's `scope` says what was registered (RFC 7591 §3.2.1)."""
    token = initial_access_token(authrim_server, max_uses=2)
    sent = {"redirect_uris": [REDIRECT_URI], "scope": "admin write"}
    body = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    assert set(body["scope"].split()) == POLICY_SCOPES, body
    sent = {"redirect_uris": [REDIRECT_URI], "scope": "openid admin email"}
    body = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    assert set(body["scope"].split()) == {"openid", "email"}, body


# --------------------------------------------------------------------------
# Client configuration (RFC 7592)
# --------------------------------------------------------------------------


def test_client_configuration_read_update_delete(authrim_server, discovery, jwks, alice):
    """RFC 7592 with the registration access token: GET is the registration without the
    secret; PUT replaces the registration (omitted members reset, the old redirect URI then
    refused, the client signs in with the new one and its unchanged secret); what PUT
    refuses changes nothing; DELETE (204) ends the client: the management URI is 401, the
    secret no longer authenticates at /token (a refresh and a probe: 401 invalid_client),
    /authorize knows no such client. Wrong, missing or foreign tokens are 401 throughout."""
    token = initial_access_token(authrim_server, max_uses=2)
    sent = {"client_name": "before", "redirect_uris": [OLD_REDIRECT_URI],
            "grant_types": ["authorization_code", "refresh_token"],
            "token_endpoint_auth_method": "client_secret_basic", "scope": OFFLINE_SCOPE,
            "contacts": ["before@rp.example.com"], "client_uri": "https://rp.example.com/"}
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    other = register(authrim_server, {"redirect_uris": [REDIRECT_URI]}, token).json()
    secret, client_id = reg["client_secret"], reg["client_id"]

    # Read.
    resp = manage("GET", reg)
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    assert resp.json() == metadata_of(reg), (resp.json(), reg)

    # Who may not: no token, a wrong one, the initial access token, another client's, the
    # admin token; and a client_id that does not exist.
    refused_tokens = ["", secrets.token_urlsafe(32), token, other["registration_access_token"],
                      authrim_server.admin_token]
    for bad in refused_tokens:
        for method in ("GET", "PUT", "DELETE"):
            body = {"client_id": client_id, "redirect_uris": [REDIRECT_URI]} if method == "PUT" else None
            assert_registration_error(manage(method, reg, token=bad, body=body), 401, "invalid_token")
    assert_registration_error(manage("GET", reg, uri=reg["registration_client_uri"] + "x"),
                              401, "invalid_token")

    # Updates refused: the registration is unchanged after each.
    replacement = {"client_id": client_id, "redirect_uris": [REDIRECT_URI],
                   "grant_types": ["authorization_code", "refresh_token"],
                   "token_endpoint_auth_method": "client_secret_basic", "client_name": "after"}
    refused_updates = [
        ({k: v for k, v in replacement.items() if k != "client_id"}, "invalid_request"),
        ({**replacement, "client_id": other["client_id"]}, "invalid_request"),
        ({**replacement, "client_secret": "not-the-secret"}, "invalid_request"),
        ({**replacement, "grant_types": ["client_credentials"]}, "invalid_client_metadata"),
        ({**replacement, "redirect_uris": [REDIRECT_URI + "#frag"]}, "invalid_redirect_uri"),
        ({**replacement, "software_statement": "e30.e30.c2ln"}, "unapproved_software_statement"),
    ]
    for body, error in refused_updates:
        assert_registration_error(manage("PUT", reg, body=body), 400, error)
        assert manage("GET", reg).json() == metadata_of(reg), body

    # Update: a full replacement. scope, contacts and client_uri are left out (reset).
    resp = manage("PUT", reg, body={**replacement, "client_secret": secret})
    assert resp.status_code == 200, describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    updated = resp.json()
    assert updated["client_id"] == client_id, updated
    assert updated["client_id_issued_at"] == reg["client_id_issued_at"], updated
    assert updated["redirect_uris"] == [REDIRECT_URI], updated
    assert updated["client_name"] == "after", updated
    assert set(updated["scope"].split()) == POLICY_SCOPES, updated  # reset to the default
    assert not updated.get("contacts") and not updated.get("client_uri"), updated
    assert updated["registration_client_uri"] == reg["registration_client_uri"], updated
    assert not SECRET_MEMBERS & updated.keys(), "the same auth method needs no new secret"
    reg = {**reg, "registration_access_token": updated["registration_access_token"]}
    assert manage("GET", reg).json() == metadata_of(updated)

    # The old redirect URI is gone, the new one signs in with the secret from registration.
    assert_refused_page(authorize_page(discovery, client_id, OLD_REDIRECT_URI))
    flow = run_code_flow(authrim_server, discovery, alice, client_id, secret,
                         "client_secret_basic", OFFLINE_SCOPE)
    verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id, flow.nonce,
                    flow.token["access_token"])
    assert flow.token.get("refresh_token"), flow.token
    assert_authenticates(token_probe(discovery, client_id, secret))

    # Delete.
    resp = manage("DELETE", reg)
    assert resp.status_code == 204, describe(resp)
    assert resp.content == b"", describe(resp)
    assert "no-store" in resp.headers.get("Cache-Control", ""), describe(resp)
    for method in ("GET", "PUT", "DELETE"):
        body = replacement if method == "PUT" else None
        assert_registration_error(manage(method, reg, body=body), 401, "invalid_token")
    assert client_id not in client_ids(authrim_server)

    # The client's credentials are dead: Authlib's refresh, and a probe in both secret forms.
    with pytest.raises(OAuthError) as refused:
        flow.client.refresh_token(discovery["token_endpoint"],
                                  refresh_token=flow.token["refresh_token"])
    assert refused.value.error == "invalid_client", refused.value
    for method in ("client_secret_basic", "client_secret_post"):
        assert_invalid_client(token_probe(discovery, client_id, secret, method))
    probe = token_probe(discovery, client_id, secret)
    assert probe.headers.get("WWW-Authenticate", "").startswith("Basic"), describe(probe)
    assert_refused_page(authorize_page(discovery, client_id, REDIRECT_URI))
    # The other client is untouched.
    assert manage("GET", other).status_code == 200


def test_deleted_client_tokens_are_invalidated(authrim_server, discovery, jwks, alice):
    """RFC 7592 §2.3: when a client deletes itself the server SHOULD invalidate its grants
    and active access and refresh tokens. The access token it held is refused at userinfo
    and introspected as inactive by a resource server afterwards."""
    token = initial_access_token(authrim_server)
    sent = {"redirect_uris": [REDIRECT_URI], "scope": "openid email"}
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    flow = run_code_flow(authrim_server, discovery, alice, reg["client_id"], reg["client_secret"],
                         "client_secret_basic", "openid email")
    access_token = flow.token["access_token"]
    bearer = {"Authorization": f"Bearer {access_token}"}
    resp = requests.get(discovery["userinfo_endpoint"], headers=bearer, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    rs = authrim_server.create_client(
        client_id=authrim_server.unique("dcr-resource-server"), grant_types=["client_credentials"],
        redirect_uris=[], scope="openid")
    introspection = requests.post(discovery["introspection_endpoint"], data={"token": access_token},
                                  auth=(rs["client_id"], rs["client_secret"]), timeout=HTTP_TIMEOUT_S)
    assert introspection.json().get("active") is True, describe(introspection)

    assert manage("DELETE", reg).status_code == 204

    resp = requests.get(discovery["userinfo_endpoint"], headers=bearer, timeout=HTTP_TIMEOUT_S)
    introspection = requests.post(discovery["introspection_endpoint"], data={"token": access_token},
                                  auth=(rs["client_id"], rs["client_secret"]), timeout=HTTP_TIMEOUT_S)
    assert (resp.status_code, introspection.json().get("active")) == (401, False), (
        "the deleted client's access token still works:\n"
        f"{describe(resp)}\n{describe(introspection)}")


def test_update_changes_the_authentication_method(authrim_server, discovery):
    """PUT from client_secret_basic to none drops the secret (it no longer authenticates; the
    bare client_id does); back to client_secret_basic issues a new secret in the response."""
    token = initial_access_token(authrim_server)
    sent = {"redirect_uris": [REDIRECT_URI], "token_endpoint_auth_method": "client_secret_basic"}
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    client_id, first_secret = reg["client_id"], reg["client_secret"]
    assert_authenticates(token_probe(discovery, client_id, first_secret))

    resp = manage("PUT", reg, body={"client_id": client_id, "redirect_uris": [REDIRECT_URI],
                                    "token_endpoint_auth_method": "none"})
    assert resp.status_code == 200, describe(resp)
    public = resp.json()
    assert public["token_endpoint_auth_method"] == "none", public
    assert not SECRET_MEMBERS & public.keys(), public
    assert_invalid_client(token_probe(discovery, client_id, first_secret))
    assert_authenticates(token_probe(discovery, client_id, None, "none"))

    resp = manage("PUT", reg, body={"client_id": client_id, "redirect_uris": [REDIRECT_URI],
                                    "token_endpoint_auth_method": "client_secret_basic"})
    assert resp.status_code == 200, describe(resp)
    confidential = resp.json()
    assert confidential["token_endpoint_auth_method"] == "client_secret_basic", confidential
    new_secret = confidential.get("client_secret")
    assert isinstance(new_secret, str) and new_secret != first_secret, confidential
    assert confidential["client_secret_expires_at"] == 0, confidential
    assert_authenticates(token_probe(discovery, client_id, new_secret))
    assert_invalid_client(token_probe(discovery, client_id, first_secret))
    assert_invalid_client(token_probe(discovery, client_id, None, "none"))


# --------------------------------------------------------------------------
# A public native client (RFC 8252)
# --------------------------------------------------------------------------


def test_public_native_client_with_pkce(authrim_server, discovery, jwks, alice):
    """A native app registers itself as a public client (token_endpoint_auth_method none) with
    a loopback redirect URI and gets no secret; an authorization without PKCE is refused
    (to its redirect URI, with its state); with PKCE S256 Authlib signs Alice in, redeeming
    the code with client_id and code_verifier only; the code is then spent, and another
    code with the wrong verifier is refused."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    redirect_uri = f"http://127.0.0.1:{port}/cb"
    sent = {"application_type": "native", "client_name": "Native app",
            "redirect_uris": [redirect_uri], "token_endpoint_auth_method": "none",
            "grant_types": ["authorization_code"], "scope": "openid email"}
    token = initial_access_token(authrim_server)
    reg = assert_registered(authrim_server, register(authrim_server, sent, token), sent, time.time())
    client_id = reg["client_id"]

    # Without PKCE: refused to the app, with its state.
    state = generate_token(16)
    params = {"response_type": "code", "client_id": client_id, "redirect_uri": redirect_uri,
              "scope": "openid", "state": state}
    resp = requests.get(discovery["authorization_endpoint"] + "?" + urlencode(params),
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code in (302, 303), describe(resp)
    location = urlsplit(resp.headers["Location"])
    assert f"{location.scheme}://{location.netloc}{location.path}" == redirect_uri, describe(resp)
    answer = parse_qs(location.query)
    assert answer.get("error") == ["invalid_request"] and answer.get("state") == [state], answer
    assert "code" not in answer, answer

    def authorize(verifier: str):
        """A fresh browser through login (and consent) to the redirect; returns (Authlib
        session, redirect Location, state, its token responses, nonce)."""
        client = OAuth2Session(client_id=client_id, scope="openid email", redirect_uri=redirect_uri,
                               code_challenge_method="S256", token_endpoint_auth_method="none",
                               default_timeout=HTTP_TIMEOUT_S)
        seen: list[requests.Response] = []
        client.register_compliance_hook("access_token_response", lambda r: seen.append(r) or r)
        nonce = generate_token(20)
        url, state = client.create_authorization_url(discovery["authorization_endpoint"],
                                                     nonce=nonce, code_verifier=verifier)
        location, _ = browser_authorize(authrim_server, url, alice["username"], alice["password"])
        back = urlsplit(location)
        assert f"{back.scheme}://{back.netloc}{back.path}" == redirect_uri, location
        assert parse_qs(back.query).get("state") == [state], location
        return client, location, state, seen, nonce

    verifier = generate_token(48)
    client, location, state, seen, nonce = authorize(verifier)
    tokens = client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                                code_verifier=verifier, state=state)
    [sent_request] = [r.request for r in seen]
    assert "Authorization" not in sent_request.headers, sent_request.headers
    form = parse_qs(sent_request.body)
    assert form["client_id"] == [client_id] and form["code_verifier"] == [verifier], form
    assert "client_secret" not in form, form
    claims = verify_id_token(tokens["id_token"], jwks, discovery["issuer"], client_id, nonce,
                             tokens["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)
    assert "refresh_token" not in tokens, tokens  # no refresh_token grant registered

    # The code is spent.
    with pytest.raises(OAuthError) as replay:
        client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                           code_verifier=verifier, state=state)
    assert replay.value.error == "invalid_grant", replay.value

    # Another code, redeemed with another verifier: refused.
    client, location, state, _, _ = authorize(generate_token(48))
    with pytest.raises(OAuthError) as wrong:
        client.fetch_token(discovery["token_endpoint"], authorization_response=location,
                           code_verifier=generate_token(48), state=state)
    assert wrong.value.error == "invalid_grant", wrong.value


# --------------------------------------------------------------------------
# Open registration, and its bound
# --------------------------------------------------------------------------


OPEN = {"AUTHRIM_OPEN_REGISTRATION": "true"}


def test_open_registration(start_authrim):
    """With AUTHRIM_OPEN_REGISTRATION=true anyone registers without a token; the client then
    signs a user in with Authlib and manages its registration (RFC 7592)."""
    server = start_authrim("authrim-open", OPEN)
    discovery = requests.get(server.url("/.well-known/openid-configuration"),
                             timeout=HTTP_TIMEOUT_S).json()
    jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()
    assert discovery["registration_endpoint"] == server.issuer + "/register", discovery
    user = server.create_user("bob", "open registration pw", {"email": "bob@example.com"})
    user = {**user, "password": "open registration pw"}

    sent = {"redirect_uris": [REDIRECT_URI], "scope": "openid email", "client_name": "open"}
    resp = requests.post(discovery["registration_endpoint"], json=sent, timeout=HTTP_TIMEOUT_S)
    reg = assert_registered(server, resp, sent, time.time())

    flow = run_code_flow(server, discovery, user, reg["client_id"], reg["client_secret"],
                         "client_secret_basic", "openid email")
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], reg["client_id"],
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == user["id"], dict(claims)
    resp = manage("GET", reg)
    assert resp.status_code == 200 and resp.json() == metadata_of(reg), describe(resp)


def test_registration_max_clients(start_authrim):
    """AUTHRIM_REGISTRATION_MAX_CLIENTS=2: a third self-registered client is 503
    temporarily_unavailable (clients the operator creates do not count); once one deletes
    itself, another may register."""
    server = start_authrim("authrim-capped", {**OPEN, "AUTHRIM_REGISTRATION_MAX_CLIENTS": "2"})
    metadata = {"redirect_uris": [REDIRECT_URI]}
    first = assert_registered(server, register(server, metadata), metadata, time.time())
    assert_registered(server, register(server, metadata), metadata, time.time())
    assert_registration_error(register(server, metadata), 503, "temporarily_unavailable")
    server.create_client(client_id="operator-made", redirect_uris=[REDIRECT_URI],
                         token_endpoint_auth_method="client_secret_basic", scope="openid")
    assert_registration_error(register(server, metadata), 503, "temporarily_unavailable")
    assert manage("DELETE", first).status_code == 204
    assert_registered(server, register(server, metadata), metadata, time.time())
    assert_registration_error(register(server, metadata), 503, "temporarily_unavailable")
    assert len(client_ids(server)) == 3


def test_registration_max_clients_holds_under_concurrency(start_authrim):
    """The bound holds when registrations come at once: in each of five rounds, sixteen
    parallel registrations against AUTHRIM_REGISTRATION_MAX_CLIENTS=2 make at most two
    clients (the rest 503), which then delete themselves (RFC 7592) for the next round."""
    # 80 registrations from one address: past the per-address limit, which is not under test.
    server = start_authrim("authrim-capped-burst", {**OPEN, "AUTHRIM_REGISTRATION_MAX_CLIENTS": "2",
                                                    "AUTHRIM_REGISTRATION_MAX_PER_ADDRESS": "1000"})
    rounds = []
    for _ in range(5):
        answers = concurrently(16, server, lambda session: register(
            server, {"redirect_uris": [REDIRECT_URI]}, session=session))
        created = [r.json() for r in answers if r.status_code == 201]
        for r in answers:
            if r.status_code != 201:
                assert_registration_error(r, 503, "temporarily_unavailable")
        rounds.append((len(created), len(client_ids(server))))
        for reg in created:
            assert manage("DELETE", reg).status_code == 204
        assert client_ids(server) == set()
    assert all(made <= 2 and held <= 2 for made, held in rounds), (
        "registration_max_clients 2, 16 parallel registrations per round: "
        f"(clients registered, clients held) per round {rounds}")
