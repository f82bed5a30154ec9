"""Groups and roles (issue 32) as two third-party relying parties decode them.

Alice is put in a group nested in another, and a role of the client is assigned to the outer
group; the client takes groups by name. Authlib verifies the ID token (signature, nonce,
at_hash) and reads ``groups`` and ``roles`` from it and from userinfo; panva's openid-client
(``openid-client/flow.mjs``) does the same through its own validation, and introspects the
refreshed access token, which still carries them. The groups are removed afterwards, so that
the session's other tests see Alice as before.
"""

from __future__ import annotations

import pytest

from conftest import admin
from test_authlib import ALL_SCOPES, REDIRECT_URI, fetch_userinfo, run_code_flow, verify_id_token
from test_openid_client import FLOW, needs_npm_ci


def ok(resp, status: int) -> dict:
    assert resp.status_code == status, f"{resp.request.method} {resp.url} -> {resp.status_code} {resp.text}"
    return resp.json() if resp.content else {}


@pytest.fixture
def alice_in_groups(authrim_server):
    """Two groups, the inner one holding Alice; returns their names and a function that gives a
    client the role ``deploy``, assigned to the outer group."""
    outer, inner = authrim_server.unique("Platform"), authrim_server.unique("SRE")
    for name in (outer, inner):
        ok(admin(authrim_server, "POST", "/admin/groups", {"display_name": name}), 201)
    ok(admin(authrim_server, "PUT", f"/admin/groups/{outer}/members/groups/{inner}"), 204)
    ok(admin(authrim_server, "PUT", f"/admin/groups/{inner}/members/users/alice"), 204)

    def give_role(client_id: str) -> None:
        ok(admin(authrim_server, "PUT", f"/admin/clients/{client_id}/roles/deploy", {"description": "ships it"}), 204)
        ok(admin(authrim_server, "PUT", f"/admin/clients/{client_id}/roles/deploy/assignments/groups/{outer}"), 204)

    yield sorted([outer, inner]), give_role
    for name in (outer, inner):
        ok(admin(authrim_server, "DELETE", f"/admin/groups/{name}"), 204)


def test_authlib_reads_groups_and_roles(authrim_server, discovery, jwks, alice, alice_in_groups):
    groups, give_role = alice_in_groups
    client_id = authrim_server.unique("authlib-groups")
    reg = authrim_server.create_client(client_id=client_id, redirect_uris=[REDIRECT_URI],
                                       token_endpoint_auth_method="client_secret_basic",
                                       grant_types=["authorization_code"], scope=ALL_SCOPES,
                                       groups_claim="names")
    give_role(client_id)
    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", "openid profile")
    claims = verify_id_token(flow.token["id_token"], jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["groups"] == groups, dict(claims)
    assert claims["roles"] == ["deploy"], dict(claims)
    userinfo = fetch_userinfo(flow, discovery)
    assert (userinfo["groups"], userinfo["roles"]) == (groups, ["deploy"]), userinfo


def test_openid_client_reads_groups_and_roles(alice_in_groups, run_relying_party):
    needs_npm_ci()
    groups, give_role = alice_in_groups
    _, seen = run_relying_party("openid-client-groups", ["node", str(FLOW)], FLOW.parent,
                                metadata={"groups_claim": "names"}, prepare=give_role)
    want = {"groups": groups, "roles": ["deploy"]}
    assert seen["directory"] == {"id_token": want, "userinfo": want, "introspection": want}, seen
