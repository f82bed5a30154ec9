"""An MCP client with no registration at Authrim gets a resource-bound token through the
official Python MCP SDK's standard OAuth flow, and calls a tool with it.

The parts, all real: a second Authrim (``start_authrim``) accepting Client ID Metadata
Documents (``AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS=any``) with one resource server in its TOML
configuration, the MCP server's URL with scope ``mcp:tools``; an MCP server built with the SDK
(``MCPServer``, streamable HTTP, under uvicorn in a thread) whose ``AuthSettings`` name Authrim
as its authorization server and whose token verifier checks Authrim's JWT access tokens itself
with joserfc (signature against the JWKS, ``typ`` at+jwt, ``iss``, ``exp``, ``aud`` equal to its
own resource URL, ``mcp:tools`` in ``scope``); and the client's metadata document, served over
https by an ``http.server`` here with a certificate from a CA made for the test: the SDK takes
only an https document URL (``is_valid_client_metadata_url``), so Authrim's loopback-http
allowance is not used; Authrim trusts that CA through ``SSL_CERT_FILE``, which its TLS roots
loader (rustls-native-certs, under reqwest's platform verifier) reads.

The SDK's ``OAuthClientProvider``, given the document URL as ``client_metadata_url``, does the
whole flow by itself: the MCP request answered 401 with ``resource_metadata`` in
``WWW-Authenticate``, RFC 9728 protected resource metadata naming Authrim, RFC 8414 metadata
(``client_id_metadata_document_supported``), no registration request, the authorization URL
(PKCE S256, ``resource``, the metadata's scope plus ``offline_access``, which the SDK adds with
``prompt=consent``), and the token request; the test only plays the user in the redirect
handler (Authrim's login and consent pages, driven with requests as in ``test_authlib``) and
hands the code back in the callback handler. The tool is then called again with the access
token taken as expired, so the SDK refreshes it (with ``resource`` again). Checked: every
request the SDK sent (and its token request forms), the consent page naming the document's host
and the resource server, the document fetched by Authrim, both tokens (``aud`` the MCP URL,
``client_id`` the document URL, ``sub`` Alice's) and the tool's answers; then that the MCP
server refuses a request without a token and a valid Authrim token for another audience (a
client-credentials token with ``mcp:tools`` but no ``resource``: 401, refused for its ``aud``),
and accepts that client's token for its own resource.

It runs twice: with the deployment's issuer as the MCP server's authorization server, and with
a tenant's path issuer (``{issuer}/t/acme``, issue 31), which the SDK finds through the RFC 9728
metadata and RFC 8414's path-inserted URL (``/.well-known/oauth-authorization-server/t/acme``).
Then the other issuer of the deployment (the default, or the tenant) gives a token for the same
MCP server, which refuses it (not its authorization server's keys), and refuses this issuer's
token at its userinfo and introspection.
"""

from __future__ import annotations

import html
import ipaddress
import json
import socket
import ssl
import threading
import time
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest
import httpx2
import requests
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet
from joserfc.jwt import JWTClaimsRegistry
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl

from conftest import (ALICE_CLAIMS, ALICE_PASSWORD, HTTP_TIMEOUT_S, assert_inactive_at_other_issuer,
                      assert_not_signed_by_other_issuer, issuer_under_test)
from test_authlib import browser_authorize, describe

MCP_SCOPE = "mcp:tools"
MCP_SCOPE_WORDS = "Call the test server's tools"
MCP_SERVER_NAME = "Test MCP server"
CLIENT_NAME = "Authrim e2e MCP client"
CLOCK_LEEWAY_S = 5
STARTUP_TIMEOUT_S = 10


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --------------------------------------------------------------------------
# The client's metadata document, over https
# --------------------------------------------------------------------------


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate it signed for 127.0.0.1 (P-256, valid for an hour).
    Returns (CA certificate, server certificate, server key) as PEM files."""
    now = datetime.now(timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Authrim e2e test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, key_cert_sign=True, crl_sign=True,
                                     encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
                       critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = (directory / "ca.pem", directory / "server.pem",
                                    directory / "server.key")
    ca_path.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return ca_path, cert_path, key_path


class DocumentServer:
    """Serves one JSON document at ``/client.json`` over https on 127.0.0.1; records each GET
    as (path, User-Agent)."""

    def __init__(self, cert_path: Path, key_path: Path):
        self.document: dict = {}
        self.requests: list[tuple[str, str]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                outer.requests.append((self.path, self.headers.get("User-Agent", "")))
                if self.path != "/client.json":
                    self.send_error(404)
                    return
                body = json.dumps(outer.document).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):  # keep pytest's output clean
                pass

        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(cert_path, key_path)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.url = f"https://127.0.0.1:{self.httpd.server_address[1]}/client.json"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------
# The MCP server (the SDK's MCPServer) and its verifier of Authrim's tokens
# --------------------------------------------------------------------------


class AuthrimJwtVerifier:
    """The SDK's ``TokenVerifier``: checks an Authrim access token (RFC 9068) locally, with the
    keys at Authrim's ``jwks_uri``; records the claims it accepted and why it refused."""

    def __init__(self, issuer: str, jwks: dict, resource: str):
        self.issuer, self.keys, self.resource = issuer, KeySet.import_key_set(jwks), resource
        self.accepted: list[dict] = []
        self.refused: list[str] = []

    def _refuse(self, why: str) -> None:
        self.refused.append(why)
        return None

    async def verify_token(self, token: str) -> AccessToken | None:
        try:
            decoded = jwt.decode(token, self.keys, algorithms=["RS256", "PS256", "ES256", "EdDSA"])
        except (JoseError, ValueError) as exc:
            return self._refuse(f"signature: {exc!r}")
        if decoded.header.get("typ") != "at+jwt":
            return self._refuse(f"typ {decoded.header.get('typ')!r}")
        claims = decoded.claims
        try:
            JWTClaimsRegistry(
                leeway=CLOCK_LEEWAY_S,
                iss={"essential": True, "value": self.issuer},
                exp={"essential": True},
                sub={"essential": True},
                client_id={"essential": True},
            ).validate(claims)
        except JoseError as exc:
            return self._refuse(f"claims: {exc!r}")
        aud = claims.get("aud")
        if self.resource not in ([aud] if isinstance(aud, str) else list(aud or [])):
            return self._refuse(f"aud {aud!r}")
        scopes = str(claims.get("scope", "")).split()
        if MCP_SCOPE not in scopes:
            return self._refuse(f"scope {claims.get('scope')!r}")
        self.accepted.append(dict(claims))
        # The SDK checks this too (validate_token_resource): the token's own audience.
        resource = aud if isinstance(aud, str) else self.resource
        return AccessToken(token=token, client_id=claims["client_id"], scopes=scopes,
                           expires_at=int(claims["exp"]), resource=resource,
                           subject=claims["sub"], claims={"iss": claims["iss"]})


class McpServerThread:
    """``MCPServer`` with one tool, ``whoami`` (the token's ``sub``), as a streamable HTTP app
    under uvicorn on 127.0.0.1:``port`` in a thread."""

    def __init__(self, port: int, issuer: str, verifier: AuthrimJwtVerifier):
        self.base_url = f"http://127.0.0.1:{port}"
        self.url = self.base_url + "/mcp"
        mcp = MCPServer(
            "authrim-e2e",
            token_verifier=verifier,
            auth=AuthSettings(issuer_url=issuer, resource_server_url=self.url,
                              required_scopes=[MCP_SCOPE], validate_token_resource=True),
        )

        @mcp.tool()
        def whoami() -> str:
            """The subject of the access token this call came with."""
            token = get_access_token()
            return token.subject if token else "anonymous"

        config = uvicorn.Config(mcp.streamable_http_app(), host="127.0.0.1", port=port,
                                log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while not self.server.started:
            assert self.thread.is_alive(), "the MCP server's thread ended before it started"
            assert time.monotonic() < deadline, "the MCP server did not start"
            time.sleep(0.05)

    def close(self):
        self.server.should_exit = True
        self.thread.join(timeout=10)


# --------------------------------------------------------------------------
# The MCP client's side: token storage, the user in the browser
# --------------------------------------------------------------------------


class InMemoryTokenStorage:
    """The SDK's ``TokenStorage``, in memory (nothing stored before: no prior registration)."""

    def __init__(self):
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


class User:
    """The SDK's ``redirect_handler`` and ``callback_handler``: signs Alice in on the pages at
    the authorization URL (login, consent: Allow) and hands back the redirect's parameters."""

    def __init__(self, server, password: str, base: str = ""):
        # base: the issuer's path (`/t/acme` for a path tenant), under which its pages are.
        self.server, self.password, self.base = server, password, base
        self.authorization_urls: list[str] = []
        self.pages: list[requests.Response] = []
        self.location: str | None = None

    async def redirect(self, authorization_url: str) -> None:
        self.authorization_urls.append(authorization_url)
        browser = requests.Session()
        browser.hooks["response"].append(lambda resp, *args, **kwargs: self.pages.append(resp))
        self.location, consent_shown = await anyio.to_thread.run_sync(
            lambda: browser_authorize(self.server, authorization_url, "alice", self.password,
                                      browser, self.base))
        assert consent_shown, "no consent page for a client never seen before"

    async def callback(self) -> AuthorizationCodeResult:
        assert self.location, "the callback handler ran before the redirect handler"
        query = {k: v[0] for k, v in parse_qs(urlsplit(self.location).query).items()}
        assert "code" in query, f"the authorization response has no code: {self.location}"
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"),
                                       iss=query.get("iss"))


def mcp_post(url: str, token: str | None) -> requests.Response:
    """A raw MCP request (``initialize``), with ``token`` as a Bearer token if given."""
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    body = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "e2e-probe", "version": "0"}}}
    return requests.post(url, json=body, headers=headers, timeout=HTTP_TIMEOUT_S)


# --------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------


@pytest.mark.parametrize("at_tenant", [False, True], ids=["default", "path-tenant"])
def test_mcp_sdk_client_without_registration(start_authrim, tmp_path, at_tenant):
    ca_path, cert_path, key_path = make_tls_files(tmp_path)
    documents = DocumentServer(cert_path, key_path)
    mcp_port = _free_port()
    mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
    config = tmp_path / "authrim.toml"
    config.write_text(
        "[[resource_servers]]\n"
        f"uri = {json.dumps(mcp_url)}\n"
        f"name = {json.dumps(MCP_SERVER_NAME)}\n"
        f"scopes = {{ {json.dumps(MCP_SCOPE)} = {json.dumps(MCP_SCOPE_WORDS)} }}\n"
    )
    deployment = start_authrim("authrim-mcp", {
        "AUTHRIM_CONFIG": str(config),
        "AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS": "any",
        # Authrim's TLS roots (rustls-native-certs) come from this file: the test's CA.
        "SSL_CERT_FILE": str(ca_path),
    })
    # The MCP server's authorization server: the deployment's issuer, or a tenant's at
    # `{issuer}/t/acme` (issue 31), whose RFC 8414 metadata is at the path-inserted URL.
    server = deployment.create_tenant("acme") if at_tenant else deployment
    issuer_path = urlsplit(server.issuer).path
    as_metadata_url = deployment.url("/.well-known/oauth-authorization-server" + issuer_path)
    alice = server.create_user("alice", ALICE_PASSWORD, ALICE_CLAIMS)

    as_metadata = requests.get(as_metadata_url, timeout=HTTP_TIMEOUT_S)
    assert as_metadata.status_code == 200, describe(as_metadata)
    as_metadata = as_metadata.json()
    assert as_metadata["issuer"] == server.issuer, as_metadata
    assert as_metadata.get("client_id_metadata_document_supported") is True, as_metadata
    assert "S256" in as_metadata.get("code_challenge_methods_supported", []), as_metadata
    jwks = requests.get(as_metadata["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()

    redirect_uri = f"http://127.0.0.1:{_free_port()}/callback"
    documents.document = {
        "client_id": documents.url,
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }

    verifier = AuthrimJwtVerifier(server.issuer, jwks, mcp_url)
    mcp_server = McpServerThread(mcp_port, server.issuer, verifier)
    try:
        # RFC 9728 metadata, as the SDK serves it, names Authrim.
        prm_url = f"{mcp_server.base_url}/.well-known/oauth-protected-resource/mcp"
        prm = requests.get(prm_url, timeout=HTTP_TIMEOUT_S)
        assert prm.status_code == 200, describe(prm)
        assert prm.json()["resource"] == mcp_url, prm.json()
        assert prm.json()["authorization_servers"] == [server.issuer], prm.json()
        assert prm.json()["scopes_supported"] == [MCP_SCOPE], prm.json()

        # No token: 401, pointing at that metadata.
        resp = mcp_post(mcp_url, None)
        assert resp.status_code == 401, describe(resp)
        challenge = resp.headers.get("WWW-Authenticate", "")
        assert challenge.startswith("Bearer ") and f'resource_metadata="{prm_url}"' in challenge, (
            describe(resp))

        # The SDK's own flow, from scratch.
        storage = InMemoryTokenStorage()
        user = User(server, ALICE_PASSWORD, issuer_path)
        provider = OAuthClientProvider(
            server_url=mcp_url,
            client_metadata=OAuthClientMetadata(client_name=CLIENT_NAME,
                                                redirect_uris=[AnyUrl(redirect_uri)]),
            storage=storage,
            redirect_handler=user.redirect,
            callback_handler=user.callback,
            client_metadata_url=documents.url,
        )
        sent: list[tuple[str, str, str | None]] = []
        token_forms: list[dict] = []

        async def record(request: httpx2.Request) -> None:
            sent.append((request.method, str(request.url), request.headers.get("Authorization")))
            if str(request.url) == as_metadata["token_endpoint"]:
                token_forms.append({k: v[0] for k, v in parse_qs(request.content.decode()).items()})

        first_tokens: list[OAuthToken] = []

        async def call_whoami_twice():
            async with httpx2.AsyncClient(auth=provider, timeout=HTTP_TIMEOUT_S,
                                          event_hooks={"request": [record]}) as http:
                async with Client(streamable_http_client(mcp_url, http_client=http)) as client:
                    first = await client.call_tool("whoami", {})
                    first_tokens.append(storage.tokens)
                    # The access token taken as expired: the SDK refreshes it before its next
                    # request (with the resource again).
                    provider.context.token_expiry_time = time.time() - 1
                    return first, await client.call_tool("whoami", {})

        results = anyio.run(call_whoami_twice)
        for result in results:
            assert not result.is_error, result
            assert [c.text for c in result.content if c.type == "text"] == [alice["id"]], result

        # What the SDK sent: the MCP request (401), RFC 9728, RFC 8414, no registration, the
        # token request, the MCP request again with the token.
        flow = [(m, u) for m, u, _ in sent]
        first = sent[0]
        assert first[0] == "POST" and first[1] == mcp_url and first[2] is None, sent
        assert ("GET", prm_url) in flow, flow
        assert ("GET", as_metadata_url) in flow, flow
        assert ("POST", as_metadata["token_endpoint"]) in flow, flow
        assert not any(urlsplit(u).path.startswith("/register") for _, u in flow), flow
        assert "registration_endpoint" not in as_metadata or (
            "POST", as_metadata["registration_endpoint"]) not in flow, flow
        token_at = [i for i, f in enumerate(flow) if f == ("POST", as_metadata["token_endpoint"])]
        assert len(token_at) == 2, flow  # the code, then the refresh
        assert flow.index(("GET", prm_url)) < token_at[0], flow
        code_form, refresh_form = token_forms
        assert code_form["grant_type"] == "authorization_code", code_form
        assert code_form["client_id"] == documents.url and "client_secret" not in code_form, (
            code_form)
        assert code_form["code_verifier"] and code_form["resource"] == mcp_url, code_form
        assert refresh_form["grant_type"] == "refresh_token", refresh_form
        assert refresh_form["client_id"] == documents.url, refresh_form
        assert refresh_form["resource"] == mcp_url, refresh_form
        assert not any(a for m, u, a in sent if u == as_metadata["token_endpoint"]), sent
        for start, end, token in ((token_at[0], token_at[1], first_tokens[0]),
                                  (token_at[1], len(sent), storage.tokens)):
            after = [s for s in sent[start + 1:end] if s[1] == mcp_url]
            assert after and all(a == f"Bearer {token.access_token}" for _, _, a in after), sent

        # The authorization request the SDK built.
        assert len(user.authorization_urls) == 1, user.authorization_urls
        auth_url = urlsplit(user.authorization_urls[0])
        assert f"{auth_url.scheme}://{auth_url.netloc}{auth_url.path}" == (
            as_metadata["authorization_endpoint"]), auth_url
        query = {k: v[0] for k, v in parse_qs(auth_url.query).items()}
        assert query["client_id"] == documents.url, query
        assert query["redirect_uri"] == redirect_uri, query
        assert query["response_type"] == "code", query
        assert query["code_challenge_method"] == "S256" and query["code_challenge"], query
        assert query["resource"] == mcp_url, query
        # The scope is the one in the RFC 9728 metadata; the SDK adds offline_access (SEP-2207:
        # Authrim offers it and the client has the refresh grant), and so asks prompt=consent.
        assert query["scope"] == f"{MCP_SCOPE} offline_access", query
        assert query.get("prompt") == "consent", query
        assert user.location.startswith(redirect_uri + "?"), user.location

        # Authrim fetched the document; the consent page said whose it is and for what.
        assert documents.requests and all(
            path == "/client.json" and agent.startswith("authrim/")
            for path, agent in documents.requests), documents.requests
        consent_pages = [r for r in user.pages
                         if urlsplit(r.url).path == issuer_path + "/consent" and r.request.method == "GET"]
        assert len(consent_pages) == 1, [describe(r) for r in user.pages]
        page = consent_pages[0].text
        assert "identified by its address on <strong>127.0.0.1</strong>" in page, page
        assert CLIENT_NAME in page and MCP_SERVER_NAME in page and mcp_url in page, page
        assert MCP_SCOPE_WORDS in html.unescape(page), page

        # The tokens, from the code and from the refresh: bound to the MCP server, issued to
        # the document URL, for Alice; each one the MCP server accepted.
        assert first_tokens[0].refresh_token, first_tokens[0]
        assert storage.tokens.access_token != first_tokens[0].access_token, storage.tokens
        jtis = []
        for token in (first_tokens[0], storage.tokens):
            assert token.token_type.lower() == "bearer", token
            assert token.scope is not None and MCP_SCOPE in token.scope.split(), token
            decoded = jwt.decode(token.access_token, KeySet.import_key_set(jwks),
                                 algorithms=["RS256"])
            assert decoded.header.get("typ") == "at+jwt", decoded.header
            claims = decoded.claims
            assert claims["aud"] in (mcp_url, [mcp_url]), claims
            assert claims["client_id"] == documents.url, claims
            assert claims["sub"] == alice["id"], claims
            assert claims["iss"] == server.issuer, claims
            assert MCP_SCOPE in claims["scope"].split(), claims
            jtis.append(claims["jti"])
        assert {c["jti"] for c in verifier.accepted} == set(jtis), verifier.accepted
        assert storage.client_info.client_id == documents.url, storage.client_info

        # A valid Authrim token for another audience is refused; the same client's token for
        # this server is not.
        svc_id = server.unique("mcp-svc")
        svc = server.create_client(client_id=svc_id, grant_types=["client_credentials"],
                                   redirect_uris=[], scope=MCP_SCOPE)

        def client_credentials(**extra) -> str:
            resp = requests.post(as_metadata["token_endpoint"],
                                 data={"grant_type": "client_credentials", "scope": MCP_SCOPE,
                                       **extra},
                                 auth=(svc_id, svc["client_secret"]), timeout=HTTP_TIMEOUT_S)
            assert resp.status_code == 200, describe(resp)
            return resp.json()["access_token"]

        elsewhere = client_credentials()
        other_aud = jwt.decode(elsewhere, KeySet.import_key_set(jwks)).claims["aud"]
        assert mcp_url not in ([other_aud] if isinstance(other_aud, str) else other_aud), other_aud
        refused_before = len(verifier.refused)
        resp = mcp_post(mcp_url, elsewhere)
        assert resp.status_code == 401, describe(resp)
        assert 'error="invalid_token"' in resp.headers.get("WWW-Authenticate", ""), describe(resp)
        assert [r.split(" ")[0] for r in verifier.refused[refused_before:]] == ["aud"], (
            verifier.refused)

        resp = mcp_post(mcp_url, client_credentials(resource=mcp_url))
        assert resp.status_code == 200, describe(resp)

        # Another issuer of the deployment (a tenant's, or the default's) gives a client of
        # its own a token for the same resource: the MCP server, whose authorization server is
        # this issuer alone, refuses it (not this issuer's keys); and this issuer's token
        # means nothing to the other (userinfo, introspection, keys).
        other = deployment if at_tenant else deployment.create_tenant("acme")
        here = issuer_under_test("mcp", server, alice, other)
        svc_elsewhere = other.create_client(client_id="mcp-svc", grant_types=["client_credentials"],
                                            redirect_uris=[], scope=MCP_SCOPE)
        resp = requests.post(other.url("/token"), auth=("mcp-svc", svc_elsewhere["client_secret"]), timeout=HTTP_TIMEOUT_S,
                             data={"grant_type": "client_credentials", "scope": MCP_SCOPE, "resource": mcp_url})
        assert resp.status_code == 200, describe(resp)
        foreign = resp.json()["access_token"]
        assert jwt.decode(foreign, KeySet.import_key_set(
            requests.get(other.url("/jwks"), timeout=HTTP_TIMEOUT_S).json())).claims["aud"] in (mcp_url, [mcp_url])
        refused_before = len(verifier.refused)
        resp = mcp_post(mcp_url, foreign)
        assert resp.status_code == 401, describe(resp)
        assert [r.split(" ")[0] for r in verifier.refused[refused_before:]] == ["signature:"], verifier.refused
        assert_inactive_at_other_issuer(here, storage.tokens.access_token)
        assert_not_signed_by_other_issuer(here, storage.tokens.access_token)
    finally:
        mcp_server.close()
        documents.close()
