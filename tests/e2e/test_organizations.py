"""Organizations (issue 31) in Chromium (``browser/organizations.mjs``), with a real SMTP server
(aiosmtpd, ``mail_walks.Mailbox``) and a second Authrim as an organization's own identity
provider (as ``test_upstream.py``'s ``test_authrim_upstream``).

- The invitation: the admin API invites ``erin@example.com`` to Globex as ``editor``; the mail
  arrives (to that address, its link on the issuer); in the browser the link opens the sign-in,
  Erin signs in, is offered "Join Globex" with her role, accepts, and the link then answers 410.
  Her sign-in for Globex gives an ID token with ``org_id``, ``org_name`` and ``org_roles``.
- The chooser: Alice, a member of Acme and Globex, signs in to a client with
  ``organization_required``; the chooser offers her two organizations (not a third she is not
  in); she chooses Globex, and the ID token names Globex with her roles there.
- Domain routing: a request of that client with ``login_hint=bob@acme.example`` goes straight
  to Acme's identity provider (the upstream Authrim); Bob signs in there; back here he is
  provisioned, joins Acme by his verified address's domain, and the ID token names Acme.

Needs Chromium and ``npm ci`` in ``browser/`` (as test_browser.py).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, TIME_SCALE, admin, run_browser_program
from mail_walks import Mailbox, decode
from test_browser import CHROMIUM, WAIT_MS, needs_browser
from test_tenants import RelyingParty
from test_upstream import CALLBACK, provider_toml

PROGRAM = Path(__file__).resolve().parent / "browser" / "organizations.mjs"
PASSWORD = "correct horse battery staple"


def ok(resp: requests.Response, status: int = 200) -> dict:
    assert resp.status_code == status, f"{resp.request.method} {resp.url} -> {resp.status_code} {resp.text}"
    return resp.json() if resp.content else {}


def claims(jwt: str) -> dict:
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def id_token(server, client_id: str, secret: str, code: str, redirect_uri: str) -> dict:
    resp = requests.post(server.url("/token"), auth=(client_id, secret), timeout=HTTP_TIMEOUT_S,
                         data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})
    got = claims(ok(resp)["id_token"])
    assert got["iss"] == server.issuer and got["aud"] in (client_id, [client_id]), got
    return got


def with_acme_provider(start_authrim, tmp_path: Path, settings: dict) -> tuple[str, object]:
    """Acme's own identity provider: a second Authrim (on "localhost", so that the browser keeps
    its cookies apart), with Bob (``bob@acme.example``, verified) and a client for ours; and ours,
    with ``settings``, that provider as ``acme-idp``. Returns the provider's issuer and ours."""
    up = start_authrim("org-upstream", {}, host="localhost")
    up_issuer = requests.get(up.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()["issuer"]
    up.create_user("bob", PASSWORD, {"email": "bob@acme.example", "email_verified": True, "name": "Bob Acme"})
    reg = up.create_client(client_id="downstream", redirect_uris=["http://127.0.0.1:9/none"],
                           token_endpoint_auth_method="client_secret_basic",
                           grant_types=["authorization_code"], scope="openid email profile")
    toml = tmp_path / "orgs.toml"
    toml.write_text(provider_toml(up_issuer, reg["client_secret"], idp="acme-idp", name="Acme SSO"))
    down = start_authrim("orgs", {"AUTHRIM_CONFIG": str(toml), **settings})
    ok(admin(up, "PATCH", "/admin/clients/downstream", {"redirect_uris": [down.issuer + CALLBACK]}))
    return up_issuer, down


def test_invitation_chooser_and_domain_routing_in_chromium(start_authrim, tmp_path):
    needs_browser()
    mailbox = Mailbox().start()
    rp = RelyingParty()
    try:
        up_issuer, down = with_acme_provider(start_authrim, tmp_path, {"AUTHRIM_SMTP_URL": mailbox.url})

        secrets = {}
        for client_id, extra in (("rp", {}), ("rp-org", {"organization_required": True})):
            reg = down.create_client(client_id=client_id, client_name=f"Client {client_id}", redirect_uris=[rp.redirect_uri], **extra)
            secrets[client_id] = reg["client_secret"]
        assert ok(admin(down, "GET", "/admin/clients/rp-org"))["organization_required"] is True
        down.create_user("erin", PASSWORD, {"email": "erin@example.com", "email_verified": True})
        down.create_user("alice", PASSWORD, {"email": "alice@example.com", "email_verified": True})
        orgs = {}
        for body in ({"slug": "acme", "display_name": "Acme", "domains": ["acme.example"], "upstream": "acme-idp"},
                     {"slug": "globex", "display_name": "Globex"}, {"slug": "initech", "display_name": "Initech"}):
            orgs[body["slug"]] = ok(admin(down, "POST", "/admin/organizations", body), 201)["id"]
        for org, roles in (("acme", ["admin"]), ("globex", ["viewer"])):
            ok(admin(down, "PUT", f"/admin/organizations/{org}/members/alice", {"roles": roles}))

        # The invitation, and its mail.
        inv = ok(admin(down, "POST", "/admin/organizations/globex/invitations", {"email": "erin@example.com", "roles": ["editor"]}), 201)
        assert "token" not in inv, inv
        mail = decode(mailbox.next_to("erin@example.com"))
        assert mail["to"] == ["erin@example.com"] and "Globex" in mail["body"], mail
        links = [w for w in mail["body"].split() if w.startswith("http")]
        assert len(links) == 1 and links[0].startswith(f"{down.issuer}/organizations/invitation?token="), mail["body"]

        env = dict(os.environ, ISSUER=down.issuer, REDIRECT_URI=rp.redirect_uri, PASSWORD=PASSWORD, CLIENT_ID="rp",
                   ORG_CLIENT_ID="rp-org", INVITE_LINK=links[0], INVITED_USER="erin", INVITE_ORG="globex",
                   CHOOSER_USER="alice", CHOOSE="Globex", UPSTREAM_ISSUER=up_issuer, DOMAIN_USER="bob",
                   DOMAIN_USER_EMAIL="bob@acme.example", CHROMIUM=CHROMIUM, WAIT_MS=str(WAIT_MS),
                   ARTIFACTS_DIR=str(tmp_path))
        done = subprocess.run(["node", str(PROGRAM)], cwd=PROGRAM.parent, env=env, capture_output=True,
                              text=True, timeout=120 * TIME_SCALE)
        assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
        seen = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        rp.close()
        mailbox.stop()
    # No page error, no page answered 5xx (the used invitation's 410 is checked below).
    assert not seen["seen"]["page_errors"], seen["seen"]
    assert not [r for r in seen["seen"]["error_responses"] if r["status"] >= 500], seen["seen"]

    # (a) The invitation: offered, accepted once; Erin's tokens for Globex carry her role.
    walk = seen["invitation"]
    assert walk["offer_heading"] == "Join Globex", walk
    assert "editor" in walk["offer_roles"], walk
    assert walk["accepted"] == "You are now a member of Globex.", walk
    assert walk["again_status"] == 410, walk
    got = id_token(down, "rp", secrets["rp"], walk["redirect"]["code"], rp.redirect_uri)
    assert (got["org_id"], got["org_name"], got["org_roles"]) == (orgs["globex"], "globex", ["editor"]), got
    members = ok(admin(down, "GET", "/admin/organizations/globex/members"))["members"]
    assert {m["username"]: m["roles"] for m in members} == {"alice": ["viewer"], "erin": ["editor"]}, members
    assert ok(admin(down, "GET", "/admin/organizations/globex/invitations"))["invitations"] == []

    # (b) The chooser: Alice's two organizations only; the one she chose is in the token.
    walk = seen["chooser"]
    assert walk["heading"] == "Choose an organization", walk
    assert sorted(walk["choices"]) == ["Acme", "Globex"], walk
    got = id_token(down, "rp-org", secrets["rp-org"], walk["redirect"]["code"], rp.redirect_uri)
    assert (got["org_id"], got["org_name"], got["org_roles"]) == (orgs["globex"], "globex", ["viewer"]), got

    # (c) Domain routing: to Acme's provider, and back a member of Acme by domain.
    walk = seen["domain"]
    assert walk["upstream_url"] == f"{up_issuer}/authorize", walk
    got = id_token(down, "rp-org", secrets["rp-org"], walk["redirect"]["code"], rp.redirect_uri)
    assert (got["org_id"], got["org_name"], got["org_roles"]) == (orgs["acme"], "acme", []), got
    (bob,) = [u for u in ok(admin(down, "GET", "/admin/users"))["users"] if u["username"] == "bob"]
    assert got["sub"] == bob["id"] and bob["claims"]["email"] == "bob@acme.example" and bob["claims"]["email_verified"] is True, bob
    members = ok(admin(down, "GET", "/admin/organizations/acme/members"))["members"]
    assert sorted(m["username"] for m in members) == ["alice", "bob"], members
    joined = ok(admin(down, "GET", "/admin/audit?event=organization_member_added"))["events"]
    assert any(e["detail"].get("by") == "domain" for e in joined), joined


HRD_PROGRAM = PROGRAM.parent / "hrd.mjs"
HRD_ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "hrd"


def test_home_realm_discovery_on_the_login_form_in_chromium(start_authrim, tmp_path):
    """``browser/hrd.mjs``: Bob types his work address on the login form (keyboard only, the
    password left empty) and is sent to Acme's identity provider with it as the login_hint;
    Back brings a login form that works; signed in there, he is back at the client, and the ID
    token names Acme. An address at a domain nobody routes, without a password, is asked for
    one. Screenshots go to ``target/e2e-artifacts/hrd/``."""
    needs_browser()
    rp = RelyingParty()
    try:
        up_issuer, down = with_acme_provider(start_authrim, tmp_path, {})
        secret = down.create_client(client_id="rp-org", client_name="Acme Portal", redirect_uris=[rp.redirect_uri],
                                    organization_required=True)["client_secret"]
        acme = ok(admin(down, "POST", "/admin/organizations",
                        {"slug": "acme", "display_name": "Acme", "domains": ["acme.example"], "upstream": "acme-idp"}), 201)
        env = dict(ISSUER=down.issuer, UPSTREAM_ISSUER=up_issuer, CLIENT_ID="rp-org", REDIRECT_URI=rp.redirect_uri,
                   PASSWORD=PASSWORD, ROUTED_EMAIL="bob@acme.example", UPSTREAM_USER="bob",
                   UNROUTED_USER="carol@initech.example", WAIT_MS=str(WAIT_MS))
        seen = run_browser_program(HRD_PROGRAM, env, tmp_path, HRD_ARTIFACTS, timeout=120 * TIME_SCALE,
                                   stale=[*HRD_ARTIFACTS.glob("*.png"), *HRD_ARTIFACTS.glob("failure.*")])
    finally:
        rp.close()
    report = json.dumps(seen, indent=1)
    browser = seen["seen"]
    assert browser["page_errors"] == [], report
    # The only error answer is the one asked for (the unrouted address without a password), and
    # the console's only error Chromium's line for it.
    assert [(urlsplit(r["url"]).path, r["status"]) for r in browser["error_responses"]] == [("/login", 400)], report
    assert [(m["text"], urlsplit(m["url"]).path) for m in browser["console"] if m["type"] == "error"] == [
        ("Failed to load resource: the server responded with a status of 400 (Bad Request)", "/login")], report
    assert browser["screenshots"] == ["routed-01-login.png", "routed-02-upstream-login.png", "routed-03-back.png",
                                      "routed-04-client.png", "unrouted-01-password-missing.png"], report
    for name in browser["screenshots"]:
        assert (HRD_ARTIFACTS / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name

    walk = seen["routed"]
    # The form says the password may stay empty, and does not require it.
    login = walk["login"]
    assert (login["status"], login["heading"], login["alert"]) == (200, "Sign in", None), walk
    assert login["password_required"] is False and "Leave the password empty" in login["password_note"], walk
    assert login["focused"]["id"] == "username", walk
    assert walk["tabbed_to"]["id"] == "password", walk
    # Enter sent the browser to Acme's provider, the address passed on as its login_hint.
    assert walk["upstream"] == {"path": "/authorize", "login_hint": "bob@acme.example", "client_id": "downstream",
                                "username": "bob@acme.example"}, walk
    # Back: Authrim's login form as it was, no error, and it routed again.
    back = walk["back"]
    assert back["url_is_issuer"] is True and back["alert"] is None and back["heading"] == "Sign in", walk
    assert back["status"] in (200, None), walk  # None: restored from the back/forward cache
    assert walk["again_upstream_path"] == "/authorize", walk
    # Back at the client with a code for Acme: Bob provisioned, a member by his domain.
    assert walk["redirect"]["state"] == walk["request"]["state"] and "code" in walk["redirect"], walk
    resp = requests.post(down.url("/token"), auth=("rp-org", secret), timeout=HTTP_TIMEOUT_S,
                         data={"grant_type": "authorization_code", "code": walk["redirect"]["code"],
                               "redirect_uri": rp.redirect_uri, "code_verifier": walk["request"]["verifier"]})
    got = claims(ok(resp)["id_token"])
    assert got["iss"] == down.issuer and got["nonce"] == walk["request"]["nonce"], got
    assert (got["org_id"], got["org_name"], got["org_roles"]) == (acme["id"], "acme", []), got
    (bob,) = [u for u in ok(admin(down, "GET", "/admin/users"))["users"] if u["username"] == "bob"]
    assert got["sub"] == bob["id"] and bob["claims"]["email"] == "bob@acme.example", (got, bob)

    # A domain that routes nowhere: the password is asked for, the name kept.
    walk = seen["unrouted"]
    assert walk["focused"]["id"] == "username", walk
    assert walk["answer"] == {"status": 400, "path": "/login", "heading": "Sign in", "alert": "Please enter your password.",
                              "username": "carol@initech.example", "password_required": False,
                              "password_note": login["password_note"], "url_is_issuer": True}, walk
