"""An organization administrator in the admin console, in a real browser (Debian's Chromium,
headless, driven by Playwright: ``browser/console_orgs.mjs``, see its header).

``test_organization_administrator_in_the_console``: a server with a ``localhost`` issuer and
the default console policy (a second factor required); two organizations, ``acme`` and
``globex``, made through the admin API; Olga, a member of acme with the organization role
``admin`` and no console role, with an authenticator app; Mia, a user of the tenant in no
organization. Olga signs in (password, then the code), lands on the organizations page
with acme only and no other navigation, adds Mia to acme by her e-mail address with a role,
changes Mia's roles, and is refused (403, nothing of globex shown) at globex's page and at
the users page, both typed as URLs. The admin API then holds Mia's membership with the
roles typed, and the audit log names Olga as who did it.

No CSP violation, page error or console error but Chromium's line for the two refusals.
Screenshots go to ``target/e2e-artifacts/console/org-admin-<nn>-<page>.png``.
"""

from __future__ import annotations

import json
from pathlib import Path


from conftest import REPO_ROOT, TIME_SCALE, admin, run_browser_program
from test_browser import needs_browser
from test_pages import check_axe_pages
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "console_orgs.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "console"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 120 * TIME_SCALE
PASSWORD = "organizations, page by page"


def test_organization_administrator_in_the_console(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("console-orgs", {}, host="localhost")
    olga = server.create_user("olga", PASSWORD, {"email": "olga@acme.example", "email_verified": True})
    resp = server.admin_post(f"/admin/users/{olga['id']}/factors/totp", {"name": "Phone"})
    assert resp.status_code == 201, resp.text
    totp = resp.json()["secret"]
    mia = server.create_user("mia", PASSWORD, {"email": "mia@example.com"})
    resp = server.admin_post("/admin/users", {"username": "root", "password": PASSWORD, "roles": ["admin"]})
    assert resp.status_code == 201, resp.text
    resp = server.admin_post(f"/admin/users/{resp.json()['id']}/factors/totp", {"name": "Phone"})
    assert resp.status_code == 201, resp.text
    root = {"username": "root", "totp": resp.json()["secret"]}
    orgs = {}
    for slug, name in (("acme", "Acme Inc."), ("globex", "Globex Corporation")):
        resp = server.admin_post("/admin/organizations", {"slug": slug, "display_name": name, "domains": [f"{slug}.example"]})
        assert resp.status_code == 201, resp.text
        orgs[slug] = resp.json()["id"]
    resp = admin(server, "PUT", "/admin/organizations/acme/members/olga", {"roles": ["admin"]})
    assert resp.status_code == 200, resp.text

    env = dict(ISSUER=server.issuer, PASSWORD=PASSWORD, ADMIN=json.dumps({"username": "olga", "totp": totp}), ROOT=json.dumps(root),
               ORG=orgs["acme"], OTHER=orgs["globex"], MEMBER="mia@example.com", WAIT_MS=str(WAIT_MS))
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S,
                               stale=ARTIFACTS.glob("org-admin-*"), failure_prefix="org-admin-")
    report = json.dumps({k: v for k, v in seen.items() if k not in ("home", "added", "changed", "other", "users", "axe")}, indent=1) + \
        "\n" + json.dumps({k: {x: y for x, y in seen[k].items() if x != "html"} for k in ("home", "added", "changed", "other", "users")}, indent=1)

    # Signed in with the code, straight to their organizations: acme only, nothing else offered.
    home = seen["home"]
    assert (home["path"], home["status"], home["heading"]) == ("/console/organizations", 200, "Organizations"), report
    assert home["nav"] == ["/console/organizations"], report
    assert "organization administrator" in home["text"] and "Acme Inc." in home["text"], report
    assert "globex" not in home["html"].lower(), report

    # Mia added by her e-mail, then her roles changed: on the page and in the admin API.
    added = seen["added"]
    assert added["status"] == 200 and "Created." in added["text"], report
    assert any("mia@example.com" in r for r in added["rows"]), report
    changed = seen["changed"]
    assert changed["status"] == 200 and "Saved." in changed["text"], report
    members = admin(server, "GET", "/admin/organizations/acme/members").json()["members"]
    assert {m["username"]: m["roles"] for m in members} == {"olga": ["admin"], "mia": ["billing", "support"]}, members
    events = admin(server, "GET", "/admin/audit?limit=50").json()["events"]
    by_olga = {e["event"] for e in events if e["detail"].get("by") == "console" and e["detail"].get("admin") == olga["id"]}
    assert {"organization_member_added", "organization_member_changed"} <= by_olga, events
    assert all(e["user_id"] == mia["id"] for e in events if e["event"].startswith("organization_member_") and e["detail"].get("admin") == olga["id"]), events

    # Another organization's page and the users page, typed: refused, nothing of globex shown.
    for name, path in (("other", f"/console/organizations/{orgs['globex']}"), ("users", "/console/users")):
        page = seen[name]
        assert (page["path"], page["status"], page["heading"]) == (path, 403, "Outside your organizations"), report
        assert "globex" not in page["html"].lower() and "mia@example.com" not in page["html"], report
    assert admin(server, "GET", "/admin/organizations/globex/members").json()["members"] == [], "globex untouched"

    # The tenant admin's organization and credential pages: no axe-core violation (WCAG 2.x A, AA).
    check_axe_pages(seen, report, [("organizations", 200), ("organization", 200), ("credentials", 200)])

    check_browser_clean(seen, report, {(f"/console/organizations/{orgs['globex']}", 403), ("/console/users", 403)})
