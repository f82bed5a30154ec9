"""Authrim and the official MCP TypeScript SDK (``@modelcontextprotocol/sdk``, issue 36).

``mcp-ts/flow.mjs`` runs both sides with the SDK: an MCP server (McpServer, streamable HTTP,
``mcpAuthMetadataRouter`` naming Authrim, ``requireBearerAuth`` requiring ``mcp:tools``, a jose
verifier of Authrim's access tokens) and the SDK's Client with its OAuth provider, which does
the whole flow by itself; the program plays the user over HTTP (login and consent pages). The
test starts Authrim with one resource server (the MCP server, scope ``mcp:tools``) and checks
what the program reports: every request the SDK sent, the tokens it got, the tool's answers.

- ``test_ts_sdk_metadata_document_client``: a Client ID Metadata Document (https, a CA made for
  the test, as in ``test_mcp.py``); no registration request.
- ``test_ts_sdk_dynamic_registration_and_refresh_without_offline_access``: no document, so the SDK
  registers itself at ``/register`` with the scope its server's challenge named (``mcp:tools``
  alone: a resource-only scope); the authorization asks for ``mcp:tools`` without
  ``offline_access`` and still gets a refresh token (an OAuth request, ``oauth_refresh_tokens``);
  ``AUTHRIM_ACCESS_TOKEN_TTL=2``, the program waits for the access token to expire, the MCP
  server answers 401 and the SDK refreshes (``grant_type=refresh_token``, ``resource``) without
  sending the user through the browser again.
- ``test_ts_sdk_with_a_path_issuer_behind_a_proxy``: Authrim's issuer is
  ``http://localhost:<port>/tenant1`` behind ``PrefixProxy``; the SDK discovers it (RFC 8414's
  path-inserted metadata), registers, and signs in through the pages under the prefix; nothing
  leaves it. Again with a tenant under that issuer (``…/tenant1/t/acme``, issue 31) as the MCP
  server's authorization server: the same through the proxy, the tenant's cookies under its
  path, its token refused by the deployment's issuer.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
import requests

from conftest import ALICE_CLAIMS, ALICE_PASSWORD
from prefix_proxy import PrefixProxy
from test_mcp import DocumentServer, make_tls_files

HERE = Path(__file__).resolve().parent / "mcp-ts"
SCOPE = "mcp:tools"


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _config(tmp_path: Path, mcp_url: str) -> Path:
    config = tmp_path / "authrim.toml"
    config.write_text(
        "[[resource_servers]]\n"
        f"uri = {json.dumps(mcp_url)}\n"
        'name = "TS SDK test server"\n'
        f'scopes = {{ {json.dumps(SCOPE)} = "Call the test server\'s tools" }}\n'
    )
    return config


def _run(issuer: str, mcp_port: int, username: str, **extra) -> dict:
    if not (HERE / "node_modules" / "@modelcontextprotocol" / "sdk").is_dir():
        pytest.fail("run `npm ci` in tests/e2e/mcp-ts first", pytrace=False)
    env = dict(os.environ, ISSUER=issuer, MCP_PORT=str(mcp_port), USERNAME=username, PASSWORD=ALICE_PASSWORD,
               **{k: str(v) for k, v in extra.items()})
    done = subprocess.run(["node", "flow.mjs"], cwd=HERE, env=env, capture_output=True, text=True, timeout=90)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"exit {done.returncode}\nstdout: {done.stdout}\nstderr: {done.stderr}"
    out = json.loads(lines[-1])
    assert done.returncode == 0 and "error" not in out, (
        f"exit {done.returncode}: {out.get('error')}\n{json.dumps(out, indent=1)[:6000]}\nstderr: {done.stderr[-3000:]}")
    return out


def _forms(out: dict, endpoint: str) -> list[dict]:
    return [{k: v[0] for k, v in parse_qs(r.get("body") or "").items()}
            for r in out["requests"] if r["url"].startswith(endpoint) and r["method"] == "POST"]


def _check_challenge(out: dict):
    assert out["challenge"]["status"] == 401, out["challenge"]
    assert f'scope="{SCOPE}"' in out["challenge"]["www_authenticate"], out["challenge"]
    assert "resource_metadata=" in out["challenge"]["www_authenticate"], out["challenge"]


def test_ts_sdk_metadata_document_client(start_authrim, tmp_path):
    ca_path, cert_path, key_path = make_tls_files(tmp_path)
    documents = DocumentServer(cert_path, key_path)
    mcp_port = _free_port()
    mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
    try:
        server = start_authrim("authrim-mcp-ts-doc", {
            "AUTHRIM_CONFIG": str(_config(tmp_path, mcp_url)),
            "AUTHRIM_CLIENT_ID_METADATA_DOCUMENTS": "any",
            "SSL_CERT_FILE": str(ca_path),
        })
        server.create_user("alice-ts", ALICE_PASSWORD, ALICE_CLAIMS)
        documents.document = {
            "client_id": documents.url,
            "client_name": "Authrim e2e TS MCP client",
            "redirect_uris": [f"http://127.0.0.1:{mcp_port}/callback"],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        }
        out = _run(server.issuer, mcp_port, "alice-ts", CLIENT_METADATA_URL=documents.url)
    finally:
        documents.close()
    _check_challenge(out)
    assert out["client_id"] == documents.url
    assert not any(r["url"].endswith("/register") for r in out["requests"]), "no registration"
    assert any(p == "/client.json" for p, _ in documents.requests), "Authrim fetched the document"
    [code_form] = _forms(out, server.issuer + "/token")
    assert code_form["grant_type"] == "authorization_code" and code_form["client_id"] == documents.url, code_form
    assert code_form["resource"] == mcp_url, code_form
    assert out["tools"] and out["tools"][0].startswith("sub=") and documents.url in out["tools"][0], out["tools"]


def test_ts_sdk_dynamic_registration_and_refresh_without_offline_access(start_authrim, tmp_path):
    mcp_port = _free_port()
    mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
    server = start_authrim("authrim-mcp-ts-dcr", {
        "AUTHRIM_CONFIG": str(_config(tmp_path, mcp_url)),
        "AUTHRIM_OPEN_REGISTRATION": "true",
        "AUTHRIM_ACCESS_TOKEN_TTL": "2",
    })
    server.create_user("alice-ts", ALICE_PASSWORD, ALICE_CLAIMS)
    out = _run(server.issuer, mcp_port, "alice-ts", WAIT_FOR_EXPIRY=4)
    _check_challenge(out)
    # Registered with the resource-only scope its server's challenge named.
    [reg] = [r for r in out["requests"] if r["url"] == server.issuer + "/register"]
    assert reg["status"] == 201, reg
    assert json.loads(reg["body"])["scope"] == SCOPE, reg
    assert out["registration"]["scope"] == SCOPE, out["registration"]
    # Authorized for mcp:tools only, no offline_access, and still a refresh token.
    assert "offline_access" not in out["authorization_url"], out["authorization_url"]
    assert f"scope={SCOPE.replace(':', '%3A')}" in out["authorization_url"], out["authorization_url"]
    assert out["tokens"][0]["refresh_token"], out["tokens"]
    forms = _forms(out, server.issuer + "/token")
    assert [f["grant_type"] for f in forms] == ["authorization_code", "refresh_token"], forms
    assert forms[1]["refresh_token"] == out["tokens"][0]["refresh_token"] and forms[1]["resource"] == mcp_url, forms
    assert out["tokens"][1]["refresh_token"] and out["tokens"][1]["refresh_token"] != out["tokens"][0]["refresh_token"], "rotated"
    assert len(out["tools"]) == 2 and out["tools"][0] == out["tools"][1], out["tools"]
    assert out["authorizations"] == 1, "the refresh did not send the user through the browser again"


@pytest.mark.parametrize("at_tenant", [False, True], ids=["deployment", "path-tenant"])
def test_ts_sdk_with_a_path_issuer_behind_a_proxy(start_authrim, tmp_path, at_tenant):
    mcp_port = _free_port()
    mcp_url = f"http://127.0.0.1:{mcp_port}/mcp"
    with PrefixProxy(upstream_port=0, prefix="/tenant1") as proxy:
        deployment_issuer = f"http://localhost:{proxy.port}/tenant1"
        server = start_authrim("authrim-mcp-ts-path", {
            "AUTHRIM_CONFIG": str(_config(tmp_path, mcp_url)),
            "AUTHRIM_OPEN_REGISTRATION": "true",
            "AUTHRIM_ISSUER": deployment_issuer,
        })
        proxy.upstream_port = int(server.base_url.rsplit(":", 1)[1])
        # The MCP server's authorization server: the deployment's issuer, or a tenant's under
        # it (issue 31), `http://localhost:<port>/tenant1/t/acme`, whose RFC 8414 metadata the
        # SDK finds at `/.well-known/oauth-authorization-server/tenant1/t/acme`.
        # (start_authrim's `issuer` is the listening address's; the issuer is the setting.)
        at = server.create_tenant("acme") if at_tenant else server
        issuer = at.issuer if at_tenant else deployment_issuer
        assert issuer == deployment_issuer + ("/t/acme" if at_tenant else ""), issuer
        base = urlsplit(issuer).path
        at.create_user("alice-ts", ALICE_PASSWORD, ALICE_CLAIMS)
        out = _run(issuer, mcp_port, "alice-ts", BASE=base)
        assert proxy.outside == [], f"requests left /tenant1: {proxy.outside}"
        origin = f"http://localhost:{proxy.port}"
        assert any(r["url"] == f"{origin}/.well-known/oauth-authorization-server{base}" and r["status"] == 200
                   for r in out["requests"]), out["requests"]
        if at_tenant:
            # The tenant's token (which its MCP server took) means nothing to the deployment's
            # issuer, asked through the proxy.
            token = out["tokens"][0]["access_token"]
            assert _claims(token)["iss"] == issuer
            resp = requests.get(deployment_issuer + "/userinfo", headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert resp.status_code == 401 and 'error="invalid_token"' in resp.headers.get("WWW-Authenticate", ""), resp.text
    _check_challenge(out)
    assert out["redirect_location_ok"] and out["consent_shown"]
    assert out["cookie_paths"] and all(p.endswith(f"Path={base}") for p in out["cookie_paths"]), out["cookie_paths"]
    assert any(r["url"] == issuer + "/register" and r["status"] == 201 for r in out["requests"]), out["requests"]
    [code_form] = _forms(out, issuer + "/token")
    assert code_form["grant_type"] == "authorization_code", code_form
    assert out["tools"] and out["tools"][0].startswith("sub="), out["tools"]


def _claims(token: str) -> dict:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
