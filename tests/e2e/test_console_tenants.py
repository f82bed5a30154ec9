"""The deployment administrator's tenant pages in the admin console, in a real browser (Debian's
Chromium, headless, driven by Playwright: ``browser/console_tenants.mjs``, see its header).

``test_tenants_in_the_console``: a server with a ``localhost`` issuer and the default console
policy (a second factor required); Root and Axer, console admins with an authenticator app; the
tenant ``globex`` made through the admin API. Root signs in, creates the tenant ``acme`` with
the list's form, opens its settings page and saves a name, Japanese as its default language, a
style sheet, an optional second factor, no self-registration and a longer shortest password; a
mail sender that is no address is refused with a 400 page naming the setting, and nothing of
it is stored. A visitor whose browser asks for German then sees acme's account page (sent on to
sign in) in Japanese, with its name and its style sheet applied. Root disables acme from the list (its
pages go: 404), enables it (they come back), disables it again and deletes it, the slug typed (its
data then goes in the background).
The admin API agrees at each step, and the audit log names Root for each change.

Then axe-core (WCAG 2.x A and AA), Axer signed in, on the tenants list and globex's settings page, in the light
and the dark theme. No CSP violation, page error or console error but Chromium's line for the
refusals made on purpose. Screenshots go to ``target/e2e-artifacts/console/tenants-<nn>-<page>.png``.
"""

from __future__ import annotations

import json
import time
import warnings


from conftest import REPO_ROOT, TIME_SCALE, admin, run_browser_program
from test_browser import needs_browser
from test_pages import axe_findings
from test_passkeys import check_browser_clean

PROGRAM = REPO_ROOT / "tests" / "e2e" / "browser" / "console_tenants.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "console"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 130 * TIME_SCALE
PASSWORD = "tenants, one by one"
# The style sheet typed into acme's form, and what it makes of the body's outline.
CSS = "body { outline: 3px solid rgb(11, 122, 85); }"
OUTLINE = "rgb(11, 122, 85)"


def test_tenants_in_the_console(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("console-tenants", {}, host="localhost")
    people = {}
    for name in ("root", "axer"):
        resp = server.admin_post("/admin/users", {"username": name, "password": PASSWORD, "roles": ["admin"]})
        assert resp.status_code == 201, resp.text
        uid = resp.json()["id"]
        resp = server.admin_post(f"/admin/users/{uid}/factors/totp", {"name": "Phone"})
        assert resp.status_code == 201, resp.text
        people[name] = {"id": uid, "username": name, "totp": resp.json()["secret"]}
    root_id = people["root"]["id"]
    resp = server.admin_post("/admin/tenants", {"slug": "globex", "settings": {"product_name": "Globex"}})
    assert resp.status_code == 201, resp.text

    env = dict(ISSUER=server.issuer, PASSWORD=PASSWORD, ROOT=json.dumps(people["root"]), AXER=json.dumps(people["axer"]), SLUG="acme", OTHER="globex",
               CSS=CSS, WAIT_MS=str(WAIT_MS))
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S,
                               stale=ARTIFACTS.glob("tenants-*"), failure_prefix="tenants-")
    pages = ("overview", "created", "settings", "saved", "refused", "disabled", "enabled", "deleted")
    report = json.dumps({k: v for k, v in seen.items() if k not in pages + ("axe",)}, indent=1) + \
        "\n" + json.dumps({k: seen[k] for k in pages}, indent=1)

    assert (seen["overview"]["path"], seen["overview"]["status"]) == ("/console", 200), report

    # Created from the list's form: its row, with the name given, the issuer under /t/acme.
    created = seen["created"]
    assert (created["status"], created["search"]) == (200, "?done=created") and "Created." in created["statuses"], report
    row = next(r for r in created["rows"] if r.startswith("acme"))
    assert "Acme Rockets" in row and f"{server.issuer}/t/acme" in row and "Active" in row, report

    # The settings page: the name given at creation, the rest the deployment's.
    fields = {f["id"]: f for f in seen["settings"]["fields"]["inputs"]}
    assert fields["product_name"]["value"] == "Acme Rockets" and fields["css"]["value"] == "", report
    assert seen["settings"]["heading"] == "Settings of acme", report
    assert fields["mail_from"]["labels"] == ["Mail sender (Name <address>)"], report

    # Saved: the page again with what was typed, and the admin API has it.
    saved = seen["saved"]
    assert (saved["status"], saved["search"]) == (200, "?done=saved") and "Saved." in saved["statuses"], report
    values = {f["id"]: f["value"] for f in saved["fields"]["inputs"]}
    assert values["product_name"] == "Acme Rockets Ltd" and values["css"] == CSS and values["password_min_length"] == "12", report
    stored = admin(server, "GET", "/admin/tenants/acme")
    # The tenant was deleted at the end of the walk: what it held is read from the audit below.
    assert stored.status_code == 404, stored.text

    # The refused mail sender: the console's 400 page naming the setting.
    refused = seen["refused"]
    assert (refused["status"], refused["heading"]) == (400, "Not done") and "mail_from" in refused["text"], report

    # The visitor (German asked for, no catalogue): acme's default language, its name and its style sheet.
    tp = seen["tenant_page"]
    assert tp["path"].startswith("/t/acme/") and (tp["status"], tp["html_lang"], tp["content_language"]) == (200, "ja", "ja"), report
    assert "Acme Rockets Ltd" in tp["title"], report
    assert tp["outline"] == OUTLINE, report
    assert any(s == "/t/acme/assets/tenant.css" for s in tp["sheets"]), report

    # Disabled: its pages 404; enabled: back; then deleted with the slug typed: no row left.
    assert "Disabled" in next(r for r in seen["disabled"]["rows"] if r.startswith("acme")), report
    assert (seen["while_disabled"], seen["after_enable"]) == (404, 200), report
    assert "Active" in next(r for r in seen["enabled"]["rows"] if r.startswith("acme")), report
    deleted = seen["deleted"]
    assert deleted["search"] == "?done=deleted" and "Deleted." in deleted["statuses"], report
    # Its data goes in the background: the row says so, with nothing left to press.
    row = next(r for r in deleted["rows"] if r.startswith("acme"))
    assert "Being deleted" in row and "Enable" not in row and "Delete" not in row, report
    assert any(r.startswith("globex") and "Active" in r for r in deleted["rows"]), report
    deadline = time.monotonic() + 30 * TIME_SCALE
    while (listed := {t["slug"]: t["state"] for t in admin(server, "GET", "/admin/tenants").json()["tenants"]}).get("acme") not in (None, "deleted"):
        assert time.monotonic() < deadline, listed
        time.sleep(0.2)
    assert listed.get("globex") == "active", listed

    # The audit log: every change made by Root through the console; the refused one recorded nothing.
    events = admin(server, "GET", "/admin/audit?limit=100").json()["events"]
    by_root = [e for e in events if e["event"].startswith("tenant_") and e["detail"].get("admin") == root_id]
    kinds = [e["event"] for e in reversed(by_root)]
    # Created; saved, disabled, enabled, disabled; the deletion started.
    assert kinds == ["tenant_created"] + ["tenant_changed"] * 4 + ["tenant_deletion_started"], events
    changes = [e["detail"] for e in reversed(by_root) if e["event"] == "tenant_changed"]
    assert not any("mail_from" in json.dumps(c) for c in changes), changes
    assert any(e["event"] == "tenant_deleted" for e in events), events

    # axe-core on the list and a tenant's settings page, light and dark: no violation.
    assert [(p["name"], p["status"]) for p in seen["axe"]] == [("tenants", 200), ("tenant", 200)], report
    for p in seen["axe"]:
        light, dark = p["axe"]
        assert (light["dark"], dark["dark"]) == (False, True) and light["body_background"] != dark["body_background"], p["name"]
    incomplete = axe_findings(seen["axe"], "incomplete")
    if incomplete:
        warnings.warn("axe-core could not decide (check by hand):\n" + "\n".join(incomplete))
    violations = axe_findings(seen["axe"], "violations")
    assert not violations, f"axe-core {seen['axe_version']} found:\n" + "\n".join(violations)

    check_browser_clean(seen, report, {("/console/tenants/acme", 400), ("/t/acme/account", 404)})
