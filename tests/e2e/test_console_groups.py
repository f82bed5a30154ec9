"""Groups and roles in the admin console, in a real browser (Debian's Chromium, headless,
driven by Playwright: ``browser/console_groups.mjs``, see its header).

``test_groups_and_roles_in_the_console``: a server with a ``localhost`` issuer and the default
console policy (a second factor required); two tenant admins with an authenticator app, a
client ``reports`` and Alice, made through the admin API. The first admin signs in, creates
the groups Engineering and Backend through the Groups page, adds Alice to Backend by her
e-mail address and Backend to Engineering, and is refused (a 400 page that says why) when
adding Engineering to Backend; on the client's page defines the role ``reports:read`` and
gives it to Engineering; Alice's page then shows Backend, Engineering through it, and the
role. The admin API then holds the same, and the audit log names the admin for each change.
The second admin runs axe-core on the groups page, a group's page, the client's page (its
roles) and the user's page (their groups and roles), light and dark.

No CSP violation, page error or console error but Chromium's line for the refused cycle.
Screenshots go to ``target/e2e-artifacts/console/groups-<nn>-<page>.png``.
"""

from __future__ import annotations

import json
from pathlib import Path


from conftest import REPO_ROOT, TIME_SCALE, admin, run_browser_program
from test_browser import needs_browser
from test_pages import check_axe_pages
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "console_groups.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "console"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 120 * TIME_SCALE
PASSWORD = "groups, page by page"


def console_admin(server, name: str) -> dict:
    resp = server.admin_post("/admin/users", {"username": name, "password": PASSWORD, "roles": ["admin"]})
    assert resp.status_code == 201, resp.text
    user_id = resp.json()["id"]
    resp = server.admin_post(f"/admin/users/{user_id}/factors/totp", {"name": "Phone"})
    assert resp.status_code == 201, resp.text
    return {"id": user_id, "username": name, "totp": resp.json()["secret"]}


def test_groups_and_roles_in_the_console(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("console-groups", {}, host="localhost")
    root = console_admin(server, "root")
    rita = console_admin(server, "rita")
    alice = server.create_user("alice", PASSWORD, {"email": "alice@example.com", "email_verified": True})
    resp = server.admin_post("/admin/clients", {"client_id": "reports", "client_name": "Reports", "redirect_uris": ["https://reports.example/cb"]})
    assert resp.status_code == 201, resp.text

    env = dict(ISSUER=server.issuer, PASSWORD=PASSWORD, ADMIN=json.dumps({k: root[k] for k in ("username", "totp")}),
               AXE=json.dumps({k: rita[k] for k in ("username", "totp")}), CLIENT="reports", MEMBER="alice@example.com",
               USER=alice["id"], WAIT_MS=str(WAIT_MS))
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S,
                               stale=ARTIFACTS.glob("groups-*"), failure_prefix="groups-")
    report = json.dumps({k: v for k, v in seen.items() if k != "axe"}, indent=1)
    groups = {g["display_name"]: g for g in admin(server, "GET", "/admin/groups").json()["groups"]}
    assert sorted(groups) == ["Backend", "Engineering"], groups
    eng, back = groups["Engineering"]["id"], groups["Backend"]["id"]
    assert seen["paths"] == {"engineering": f"/console/groups/{eng}", "backend": f"/console/groups/{back}"}, report

    # Created through the form: the group's page, with the notice and its external id.
    created = seen["engineering"]
    assert (created["status"], created["heading"]) == (200, "Group Engineering") and "Created." in created["text"], report
    assert groups["Engineering"]["external_id"] == "E-1", groups
    # Alice by her e-mail into Backend, Backend into Engineering: listed, linked.
    added = seen["added"]
    assert added["status"] == 200 and any("alice" in r and "alice@example.com" in r for r in added["rows"]), report
    assert f"/console/users/{alice['id']}" in added["links"], report
    nested = seen["nested"]
    assert nested["status"] == 200 and f"/console/groups/{back}" in nested["links"], report
    # The cycle: refused on Backend's page, with the reason in an alert; nothing changed.
    cycle = seen["cycle"]
    assert (cycle["path"], cycle["status"], cycle["heading"]) == (f"/console/groups/{back}/members", 400, "Group Backend"), report
    assert len(cycle["alerts"]) == 1 and "cannot contain itself" in cycle["alerts"][0], report
    members = {g: admin(server, "GET", f"/admin/groups/{g}/members").json()["members"] for g in (eng, back)}
    assert [(m["type"], m["id"]) for m in members[eng]] == [("group", back)], members
    assert [(m["type"], m["id"]) for m in members[back]] == [("user", alice["id"])], members
    # The list: each group with its direct members.
    assert sorted(seen["groups"]["rows"]) == ["Backend 1", "Engineering E-1 1"], report

    # The role, defined and given to Engineering on the client's page; Alice holds it through Backend.
    assert seen["defined"]["status"] == 200 and "reports:read" in seen["defined"]["text"] and "Reads the reports" in seen["defined"]["text"], report
    given = seen["given"]
    assert given["status"] == 200 and "Saved." in given["text"] and f"/console/groups/{eng}" in given["links"], report
    # Provisioning set by keyboard alone: the page shows the target and never the credential;
    # Back returns to the page before, with nothing sent again (one provisioning_set).
    provisioned = seen["provisioned"]
    assert provisioned["status"] == 200 and "Saved." in provisioned["text"] and "https://reports.invalid/scim/v2" in provisioned["text"], report
    assert "a-token-from-reports" not in json.dumps(provisioned), report
    target = admin(server, "GET", "/admin/clients/reports/provisioning").json()
    assert (target["endpoint"], target["users"], target["enabled"]) == ("https://reports.invalid/scim/v2", "assigned", True), target
    back_again = seen["back_again"]
    assert back_again["path"] == "/console/clients/reports" and "Provisioning (SCIM)" in back_again["text"], report
    held = admin(server, "GET", f"/admin/users/{alice['id']}/groups").json()
    assert (sorted(g["display_name"] for g in held["effective_groups"]), held["roles"]) == (["Backend", "Engineering"], {"reports": ["reports:read"]}), held
    user = seen["user"]
    assert user["status"] == 200 and "Directly in Backend" in user["text"] and "Backend, Engineering" in user["text"], report
    assert any(r == "Reports reports:read" for r in user["rows"]), report

    events = admin(server, "GET", "/admin/audit?limit=100").json()["events"]
    by_root = {e["event"] for e in events if e["detail"].get("by") == "console" and e["detail"].get("admin") == root["id"]}
    assert {"group_created", "group_member_added", "client_role_defined", "role_assigned", "provisioning_set"} <= by_root, events
    assert sum(e["event"] == "provisioning_set" for e in events) == 1, events

    # The new pages and sections: no axe-core violation (WCAG 2.x A, AA).
    check_axe_pages(seen, report, [("groups", 200), ("group", 200), ("client", 200), ("user", 200)])

    check_browser_clean(seen, report, {(f"/console/groups/{back}/members", 400)})
