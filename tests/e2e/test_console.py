"""The admin console (``/console``) in a real browser: Debian's Chromium, headless, driven by
Playwright, with axe-core (pinned in ``browser/package.json``) for the WCAG rules.

``browser/console.mjs`` (see its header) walks through the console as its users do. This test
starts two servers with a ``localhost`` issuer: one with the default policy
(``console_mfa = required``) and one with ``AUTHRIM_CONSOLE_MFA=if_enrolled``; creates each
walk's people through the admin API (``admin-<walk>``, role admin, with an authenticator app
whose key the program turns into codes; ``nobody-<walk>``, no role; ``bare-<walk>``, role admin
and no second factor; ``auditor-<walk>``, role auditor, on the second server); runs a checker
(an HTTP server in a thread: the program asks it to try a client's secret at the token
endpoint with ``client_credentials``, or to read the JWKS, both with ``requests``); runs the
program and checks what it printed, and what the server then holds (admin API, token endpoint):

- ``test_console_in_english_and_japanese``: walks in an English and a Japanese browser: the
  sign-in (login page, second-factor page, ``/console/callback``), a confidential client made
  through the form (the application types, the single-page type's form filled in, then the
  web type's; a path as redirect URI first: the form again, its alert in the page's words
  focused, the field marked; then the created page: issuer, discovery URL, the secret shown
  once and copied with the Copy button, working at ``/token``, the settings copied; the
  secret not on the client's page, nor after a reload), its name changed (the secret still works), a new secret (the old one
  refused with 401, the new one working), a SAML application registered from its metadata
  with the keyboard alone (the name, the metadata pasted, an attribute line, Tab through every
  control of the form in order to its button, Enter; every field labelled): its page names the
  walk's entity ID and ACS URL and the admin API holds it, a user created with the auditor role, that user's
  session (signed in in another browser) ended from their page (their account page then asks
  them to sign in), a key rotation (a key "published, not yet signing", the JWKS one key
  longer), the audit log (times in the browser's zone) filtered by event (from the list) and the users
  searched with the keyboard alone, the log by a username (each actor named);
  an auditor (no "New client", a disabled form, a POST forced from the page refused with 403
  "Read only" and nothing created), a user with no role (403) and an admin without a second
  factor (403 "Add a second factor first", a link to ``/account``). Each page's status,
  redirects, ``Content-Language``, ``<html lang>``, title, heading, notices and alerts in its
  language, no English prose in a Japanese page nor Japanese in an English one, and a
  screenshot.
- ``test_console_with_axe``: the same walks with axe-core on every console page (the refusal
  pages too) in both languages, light and dark theme (the CSP bypassed in those browser
  contexts only, to inject it), after a control page proves the harness: no violation of the
  WCAG 2.0/2.1/2.2 A and AA rules.
- ``test_console_on_a_phone``: at 390x844 in both languages, the overview, clients, a client,
  users, a user's page (a factor, a session), keys and audit log: no horizontal scroll; the
  tables scroll inside their own focusable, labelled regions; nothing sticks out of its cell,
  list item or card (``shared.outOfBox``).

No CSP violation, page error or console error is allowed, but Chromium's own line for the
pages answered with an error status on purpose (the client form's error 400, the refusals 403).
Screenshots go to ``target/e2e-artifacts/console/``: ``<walk>-<nn>-<page>.png`` (walks ``en``,
``ja``, ``phone-en``, ``phone-ja``). Needs what ``test_browser.py`` needs (``npm ci`` in
``browser/``, Chromium).
"""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo
import re
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import requests
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, TIME_SCALE, brief_pages, run_browser_program
from test_browser import needs_browser
from test_mfa import b32decode_nopad, hotp
from test_pages import CJK, ENGLISH_PHRASE, axe_findings, warn_without_japanese_font
from test_passkeys import admin_get, check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "console.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "console"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 120 * TIME_SCALE  # the whole program (it gives up by itself after 100 s; both times TIME_SCALE)
PASSWORD = "the console, page by page"
ACR_MFA = "urn:authrim:acr:mfa"

# What console.mjs types into the forms.
CLIENT_NAME = "Example App"
CLIENT_RENAMED = "Example Portal"
REDIRECT_URIS = ["https://app.example/cb", "https://app.example/other"]
# The browser's time zone in the walks that check times (console.mjs sets the same).
TIMEZONES = {"en": "America/Los_Angeles", "ja": "Asia/Tokyo"}
TYPES = ["web", "spa", "native", "m2m", "mcp", "device", "saml"]  # the OpenID types, then a SAML application
AUDIT_EVENT = "client_secret_rotated"
STAFF_NAME = "Staff Member"
# The SAML application console.mjs registers from its metadata: its name, its attribute line,
# and, per walk (entity IDs are unique in a tenant), its entity ID and HTTP-POST ACS URL.
SAML_NAME = "Example Wiki"
SAML_ATTRIBUTES = "mail=email"
SAML_ENTITY_ID = "https://wiki.example/{walk}/saml"
SAML_ACS = "https://wiki.example/{walk}/acs"
# The SAML form's controls after its metadata, in the order Tab takes them (ids, or the
# checkboxes' names), to its button.
# The SAML pages' attribute hint lists the claims an attribute may carry: identifiers (sub,
# given_name, profile, picture, website...), not English words, though shown as plain text in
# the sentence rather than as <code> (which the language check skips): left out of it there.
SAML_PAGES = {"saml-form", "saml-created"}
CLAIM_LIST = re.compile(r"(?:[a-z][a-z_]*, )+[a-z][a-z_]*")
SAML_TAB_ORDER = ["name_id_format", "attributes", "sign_response", "require_signed_requests", "encrypt_assertions",
                  "require_mfa", "require_passkey", "consent", "idp_initiated", "default_relay_state"]

# The pages of a full walk, in order: (name, method, path, status); {client}, {staff},
# {lenient_client} and {auditor} stand for the walk's client and users.
FULL_WALK = [
    ("login", "GET", "/authorize", 200),
    ("second-factor", "POST", "/login", 200),
    ("overview", "GET", "/console", 200),
    ("clients", "GET", "/console/clients", 200),
    ("client-new", "GET", "/console/clients/new", 200),
    ("client-form-spa", "GET", "/console/clients/new", 200),
    ("client-form", "GET", "/console/clients/new", 200),
    ("client-error", "POST", "/console/clients", 400),
    ("client-created", "POST", "/console/clients", 200),
    ("client", "GET", "/console/clients/{client}", 200),
    ("client-saved", "GET", "/console/clients/{client}", 200),
    ("client-secret", "POST", "/console/clients/{client}/secret", 200),
    ("saml-form", "GET", "/console/clients/new", 200),
    ("saml-created", "GET", "/console/clients/{saml_client}", 200),
    ("users", "GET", "/console/users", 200),
    ("user-new", "GET", "/console/users/new", 200),
    ("user-created", "GET", "/console/users/{staff}", 200),
    ("users-search", "GET", "/console/users", 200),
    ("user", "GET", "/console/users/{staff}", 200),
    ("user-session-ended", "GET", "/console/users/{staff}", 200),
    ("keys", "GET", "/console/keys", 200),
    ("keys-rotated", "GET", "/console/keys", 200),
    ("audit", "GET", "/console/audit", 200),
    ("audit-filtered", "GET", "/console/audit", 200),
    ("audit-by-user", "GET", "/console/audit", 200),
    ("denied", "GET", "/console", 403),
    ("needs-factor", "GET", "/console", 403),
    ("account", "GET", "/account", 200),
    ("auditor-overview", "GET", "/console", 200),
    ("auditor-clients", "GET", "/console/clients", 200),
    ("auditor-client", "GET", "/console/clients/{lenient_client}", 200),
    ("read-only", "POST", "/console/clients", 403),
    ("auditor-users", "GET", "/console/users", 200),
    ("auditor-user", "GET", "/console/users/{auditor}", 200),
]
SHORT_WALK = [
    ("login", "GET", "/authorize", 200),
    ("second-factor", "POST", "/login", 200),
    ("overview", "GET", "/console", 200),
    ("clients", "GET", "/console/clients", 200),
    ("client-new", "GET", "/console/clients/new", 200),
    ("client-form", "GET", "/console/clients/new", 200),
    ("client", "GET", "/console/clients/{strict_client}", 200),
    ("users", "GET", "/console/users", 200),
    ("user", "GET", "/console/users/{admin}", 200),
    ("keys", "GET", "/console/keys", 200),
    ("audit", "GET", "/console/audit", 200),
]
# Pages on the way that are not the console's (test_pages.py checks them with axe-core).
NOT_CONSOLE = {"login", "second-factor", "account"}
# Walk: (the browser's locale, its pages).
SCENARIOS = {
    "languages": {"en": ("en-US", FULL_WALK), "ja": ("ja-JP", FULL_WALK)},
    "axe": {"axe-en": ("en-US", FULL_WALK), "axe-ja": ("ja-JP", FULL_WALK)},
    "phone": {"phone-en": ("en-US", SHORT_WALK), "phone-ja": ("ja-JP", SHORT_WALK)},
}
# Errors the walks cause on purpose: (path, status).
DELIBERATE = {("/console/clients", 400), ("/console", 403), ("/console/clients", 403)}

# The console's section each page is in (its navigation link marked aria-current).
SECTIONS = {
    **dict.fromkeys(["overview", "auditor-overview"], "/console"),
    **dict.fromkeys(["clients", "client-new", "client-form-spa", "client-form", "client-error", "client-created", "client", "client-saved",
                     "client-secret", "saml-form", "saml-created", "auditor-clients", "auditor-client"], "/console/clients"),
    **dict.fromkeys(["users", "user-new", "user-created", "users-search", "user", "user-session-ended",
                     "auditor-users", "auditor-user"], "/console/users"),
    **dict.fromkeys(["keys", "keys-rotated"], "/console/keys"),
    **dict.fromkeys(["audit", "audit-filtered", "audit-by-user"], "/console/audit"),
}
# Each page's heading, as src/ui/locales/<lang>.ftl words it ({…} filled in per walk).
HEADINGS = {
    "en": {
        "login": "Sign in", "second-factor": "Verify it is you", "overview": "Admin console",
        "clients": "Clients", "client-new": "New client", "client-form-spa": "New client",
        "client-form": "New client", "client-error": "New client",
        "client-created": "Client created", "client": "Client {client}", "client-saved": "Client {client}",
        "client-secret": "New client secret", "saml-form": "New SAML application", "saml-created": "Client {saml_client}",
        "users": "Users", "user-new": "New user",
        "user-created": "User {staff}", "users-search": "Users", "user": "User {staff}",
        "user-session-ended": "User {staff}", "keys": "Signing keys", "keys-rotated": "Signing keys",
        "audit": "Audit log", "audit-filtered": "Audit log", "audit-by-user": "Audit log",
        "denied": "No access to the console",
        "needs-factor": "Add a second factor first", "account": "Your account",
        "auditor-overview": "Admin console", "auditor-clients": "Clients",
        "auditor-client": "Client {lenient_client}", "read-only": "Read only",
        "auditor-users": "Users", "auditor-user": "User {auditor}",
    },
    "ja": {
        "login": "サインイン", "second-factor": "本人確認", "overview": "管理コンソール",
        "clients": "クライアント", "client-new": "新しいクライアント", "client-form-spa": "新しいクライアント",
        "client-form": "新しいクライアント", "client-error": "新しいクライアント",
        "client-created": "クライアントを作成しました", "client": "クライアント {client}",
        "client-saved": "クライアント {client}", "client-secret": "新しいクライアントシークレット",
        "saml-form": "新しい SAML アプリケーション", "saml-created": "クライアント {saml_client}",
        "users": "ユーザー", "user-new": "新しいユーザー", "user-created": "ユーザー {staff}",
        "users-search": "ユーザー", "user": "ユーザー {staff}", "user-session-ended": "ユーザー {staff}",
        "keys": "署名鍵", "keys-rotated": "署名鍵", "audit": "監査ログ", "audit-filtered": "監査ログ", "audit-by-user": "監査ログ",
        "denied": "コンソールへのアクセス権がありません", "needs-factor": "先に二要素目を追加してください",
        "account": "アカウント", "auditor-overview": "管理コンソール", "auditor-clients": "クライアント",
        "auditor-client": "クライアント {lenient_client}", "read-only": "閲覧のみ",
        "auditor-users": "ユーザー", "auditor-user": "ユーザー {auditor}",
    },
}
# The notice (role=status) a page shows after a change; the other pages show none.
NOTICES = {
    "en": {"client-saved": "Saved.", "saml-created": "Saved.", "user-created": "Created.", "user-session-ended": "Sessions ended.",
           "keys-rotated": "Rotation started: the new key is published and will sign after the publication delay."},
    "ja": {"client-saved": "保存しました。", "saml-created": "保存しました。", "user-created": "作成しました。", "user-session-ended": "セッションを終了しました。",
           "keys-rotated": "ローテーションを開始しました。新しい鍵は公開済みで、公開猶予の後に署名を始めます。"},
}
# A sentence from some pages, and other words the checks look for.
SENTENCES = {
    "en": {"client-created": "Copy the secret now: it is shown only once and cannot be read again.",
           "client-secret": "Copy the secret now: it is shown only once and cannot be read again.",
           "denied": "{nobody} has no console role.",
           "needs-factor": "The console needs a second factor (a passkey or an authenticator app).",
           "read-only": "Your role lets you look, not change anything.",
           "users-search": "Showing 1 of 1.", "user-session-ended": "No live session."},
    "ja": {"client-created": "今すぐシークレットをコピーしてください。表示は一度だけで、後から読むことはできません。",
           "client-secret": "今すぐシークレットをコピーしてください。表示は一度だけで、後から読むことはできません。",
           "denied": "{nobody} にはコンソールのロールがありません。",
           "needs-factor": "コンソールには二要素目（パスキーまたは認証アプリ）が必要です。",
           "read-only": "あなたのロールでは閲覧のみ可能で、変更はできません。",
           "users-search": "1 件中 1 件を表示しています。", "user-session-ended": "有効なセッションはありません。"},
}
WORDS = {
    "en": {"refused": "This was not done:", "bad_redirect": "“/callback” is not a complete address", "copied": "Copied", "next_key": "published, not yet signing",
           "admin": "administrator", "auditor": "auditor (read only)"},
    "ja": {"refused": "次の理由で実行されませんでした:", "bad_redirect": "「/callback」は完全なアドレスではありません", "copied": "コピーしました", "next_key": "公開済み（署名前）",
           "admin": "管理者", "auditor": "監査者（閲覧のみ）"},
}


class Checker:
    """What the program asks Python to check as it goes, recorded: ``POST /check`` with JSON
    ``{walk, label, op}``; op ``token``: the client credentials grant at the token endpoint with
    ``client_id`` and ``secret`` (``client_secret_basic``), the access token verified against
    the JWKS; op ``jwks``: the key ids the JWKS publishes now."""

    def __init__(self, discovery: dict):
        self.results: dict[tuple[str, str], dict] = {}
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    result = outer.run(discovery, body)
                except Exception as exc:  # reported to the program, which fails with it
                    result, status = {"exception": repr(exc)}, 500
                else:
                    status = 200
                with lock:
                    outer.results[(body["walk"], body["label"])] = result
                data = json.dumps(result).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    @staticmethod
    def run(discovery: dict, body: dict) -> dict:
        jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S)
        if body["op"] == "jwks":
            return {"status": jwks.status_code, "kids": sorted(k["kid"] for k in jwks.json()["keys"])}
        return token(discovery, body["client_id"], body["secret"])

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


def token(discovery: dict, client_id: str, secret: str) -> dict:
    """``client_credentials`` at the token endpoint: the status, the error, and the access
    token's ``client_id`` once verified against the JWKS (RS256)."""
    resp = requests.post(discovery["token_endpoint"], auth=(client_id, secret),
                         data={"grant_type": "client_credentials"}, timeout=HTTP_TIMEOUT_S)
    out = {"status": resp.status_code, "error": None, "client_id": None}
    body = resp.json()
    if resp.status_code != 200:
        out["error"] = body.get("error")
        return out
    keys = KeySet.import_key_set(requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S).json())
    claims = jwt.decode(body["access_token"], keys, algorithms=["RS256"]).claims
    out.update(client_id=claims.get("client_id"), token_type=body.get("token_type"))
    return out


def add_user(server, username: str, roles: list[str], claims: dict | None = None) -> dict:
    resp = server.admin_post("/admin/users", {"username": username, "password": PASSWORD,
                                              "roles": roles, "claims": claims or {}})
    assert resp.status_code == 201, (username, resp.status_code, resp.text)
    return resp.json()


def start_servers(start_authrim, scenario: str) -> dict:
    """Both servers (localhost issuers), a client on each and every walk's people."""
    strict = start_authrim("console", {}, host="localhost")
    lenient = start_authrim("console-if-enrolled", {"AUTHRIM_CONSOLE_MFA": "if_enrolled"}, host="localhost")
    setup = {"strict": strict, "lenient": lenient, "users": {}}
    for server, key in ((strict, "strict_client"), (lenient, "lenient_client")):
        client_id = server.unique("console-rp")
        server.create_client(client_id=client_id, client_name="Registered App", redirect_uris=REDIRECT_URIS[:1],
                             token_endpoint_auth_method="client_secret_basic",
                             grant_types=["authorization_code"], scope="openid")
        setup[key] = client_id
    for walk in SCENARIOS[scenario]:
        admin = add_user(strict, f"admin-{walk}", ["admin"], {"name": "Admin"})
        resp = strict.admin_post(f"/admin/users/{admin['id']}/factors/totp", {"name": "Phone"})
        assert resp.status_code == 201, (resp.status_code, resp.text)
        people = {"admin": {"username": admin["username"], "id": admin["id"], "totp": resp.json()["secret"]}}
        if scenario != "phone":
            people["nobody"] = {"username": add_user(strict, f"nobody-{walk}", [])["username"]}
            people["bare"] = {"username": add_user(strict, f"bare-{walk}", ["admin"])["username"]}
            auditor = add_user(lenient, f"auditor-{walk}", ["auditor"])
            people["auditor"] = {"username": auditor["username"], "id": auditor["id"],
                                 "forced_client_id": f"forced-{walk}"}
            people["staff"] = {"username": f"staff-{walk}", "email": f"staff-{walk}@example.com", "name": STAFF_NAME}
        setup["users"][walk] = people
    return setup


def run_program(scenario: str, setup: dict, tmp_path: Path) -> tuple[dict, dict, str]:
    """Run ``console.mjs`` for ``scenario`` with the checker; its screenshots (and, on a
    failure, the page, as ``<scenario>-failure.*``) are copied to ARTIFACTS whatever the
    outcome, over this scenario's files of an earlier run. Returns what it printed, what the
    checker found, and both as a report."""
    strict = setup["strict"]
    discovery = requests.get(strict.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    assert discovery["issuer"] == strict.issuer, discovery
    checker = Checker(discovery)
    env = dict(SCENARIO=scenario, ISSUER=strict.issuer, LENIENT_ISSUER=setup["lenient"].issuer,
               CHECKER=checker.origin, USERS=json.dumps(setup["users"]), PASSWORD=PASSWORD,
               STRICT_CLIENT_ID=setup["strict_client"], LENIENT_CLIENT_ID=setup["lenient_client"],
               WAIT_MS=str(WAIT_MS))
    stale = [*(old for walk in SCENARIOS[scenario] for old in ARTIFACTS.glob(f"{walk}-[0-9][0-9]-*.png")),
             *ARTIFACTS.glob(f"{scenario}-failure.*")]
    try:
        seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S, stale=stale,
                                   failure_prefix=f"{scenario}-")
    finally:
        checker.close()
    checked = {f"{w} {label}": r for (w, label), r in checker.results.items()}
    report = f"{brief_pages(seen, tmp_path)}\nthe checker: {json.dumps(checked, indent=1)}"
    return seen, checker.results, report


def names_in(setup: dict, seen: dict, walk: str) -> dict:
    """What the walk's placeholders stand for: ids as they appear in the pages' paths."""
    people = setup["users"][walk]
    facts = seen["facts"][walk]
    out = {"strict_client": quote(setup["strict_client"], safe=""),
           "lenient_client": quote(setup["lenient_client"], safe=""), "admin": quote(people["admin"]["id"], safe="")}
    if "client" in facts:
        out["client"] = facts["client"]["path"].rsplit("/", 1)[-1]
    if "staff" in facts:
        out["staff"] = facts["staff"]["path"].rsplit("/", 1)[-1]
    if "saml" in facts:
        out["saml_client"] = facts["saml"]["path"].rsplit("/", 1)[-1]
    if "auditor" in people:
        out["auditor"] = quote(people["auditor"]["id"], safe="")
    return out


def heading_names(setup: dict, seen: dict, walk: str) -> dict:
    """What the walk's headings name: clients by id, users by username (the short walk's client
    and user pages are the registered client's and the admin's own)."""
    people = setup["users"][walk]
    facts = seen["facts"][walk]
    if "staff" not in people:
        return {"client": setup["strict_client"], "staff": people["admin"]["username"]}
    return {"client": facts["client"]["id"], "saml_client": facts["saml"]["id"], "lenient_client": setup["lenient_client"],
            "staff": people["staff"]["username"], "auditor": people["auditor"]["username"]}


def check_walks(seen: dict, setup: dict, scenario: str, report: str) -> dict[str, dict[str, dict]]:
    """Every walk ran in its browser locale and took its pages in order, each reached the way
    it should be (method, path, status). Returns each walk's pages by name."""
    walks = SCENARIOS[scenario]
    assert [(w["name"], w["locale"], w["accept_language"]) for w in seen["walks"]] == [
        (name, locale, locale) for name, (locale, _) in walks.items()], report
    by_walk = {}
    for name, (_, pages) in walks.items():
        visited = [p for p in seen["pages"] if p["walk"] == name]
        assert [p["name"] for p in visited] == [p[0] for p in pages], (name, report)
        ids = names_in(setup, seen, name)
        for p, (_, method, path, status) in zip(visited, pages):
            assert (p["method"], p["path"], p["status"]) == (method, path.format(**ids), status), (name, p["name"], report)
        by_walk[name] = {p["name"]: p for p in visited}
    return by_walk


def check_language(p: dict, lang: str, names: dict, report: str):
    """``Content-Language`` (and ``Vary``), ``<html lang>``, the title and the heading are the
    expected language's; the notice is the change's, in that language."""
    where = (p["walk"], p["name"], lang)
    assert p["content_language"] == lang, (where, p["content_language"])
    assert "accept-language" in (p["vary"] or "").lower(), (where, p["vary"])
    assert p["html_lang"] == lang, (where, p["html_lang"])
    assert p["heading"] == HEADINGS[lang][p["name"]].format(**names), (where, p["heading"])
    assert p["title"].endswith(" · Authrim"), (where, p["title"])
    if lang == "ja":
        assert CJK.search(p["title"]), (where, p["title"])
    notice = NOTICES[lang].get(p["name"])
    assert p["notices"] == ([notice] if notice else []), (where, p["notices"])
    # The console's navigation marks the page's section as the current one; the refusal
    # pages (and the sign-in and account pages) have none.
    section = SECTIONS.get(p["name"])
    assert p["nav_current"] == ([section] if section else []), (where, p["nav_current"], section)


def other_language(p: dict, lang: str, names: list[str]) -> list[str]:
    """Text in another language than the page's and not marked as such (WCAG 3.1.2):
    English phrases in a Japanese page, Japanese in an English one; names may stand in any."""
    found = []
    for part in p["parts"]:
        if (part["lang"] or "").split("-")[0] != lang:
            continue
        text = re.sub(r"https?://\S+", " ", part["text"])
        for name in names:
            text = text.replace(name, " ")
        if p["name"] in SAML_PAGES:
            text = CLAIM_LIST.sub(" ", text)
        if ENGLISH_PHRASE.search(text) if lang == "ja" else CJK.search(text):
            found.append(f"{p['walk']} {p['name']} ({p['method']} {p['path']}, lang={lang}): "
                         f"{part.get('attribute', 'text')} {part['text']!r} is marked lang={part['lang']}")
    return found


def expected_screenshots(scenario: str) -> list[str]:
    return [f"{walk}-{n:02d}-{page[0]}.png" for walk, (_, pages) in SCENARIOS[scenario].items()
            for n, page in enumerate(pages, 1)]


def check_artifacts(seen: dict, expected: list[str], report: str):
    assert seen["screenshots"] == expected, report
    for name in expected:
        f = ARTIFACTS / name
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", (f, report)


def check_admin_walk(walk: str, lang: str, pages: dict, seen: dict, setup: dict, checked: dict, report: str):
    """What the admin did, as the pages showed it and as the server then holds it."""
    strict, people, facts = setup["strict"], setup["users"][walk], seen["facts"][walk]
    words = WORDS[lang]
    hops = lambda p: [(h["method"], h["path"], h["status"]) for h in p["hops"]]  # noqa: E731
    where = walk

    # Sign-in: /console → /console/login → /authorize as the console, asking for a second
    # factor; the password, the code (this test's RFC 6238 agrees), back through the callback.
    login = pages["login"]
    assert hops(login) == [("GET", "/console", 303), ("GET", "/console/login", 303), ("GET", "/authorize", 200)], (where, login)
    assert (login["query"].get("client_id"), login["query"].get("acr_values")) == ("authrim-console", ACR_MFA), (where, login)
    assert pages["second-factor"]["focused"]["id"] == "code", (where, pages["second-factor"])
    code = facts["totp"]
    assert code["key"] == people["admin"]["totp"], where
    assert hotp(b32decode_nopad(code["key"]), code["step"]) == code["code"], (where, code)
    home = pages["overview"]
    assert hops(home) == [("POST", "/login/second-factor", 303), ("GET", "/console/callback", 303),
                          ("GET", "/console", 200)], (where, home)
    assert home["signed_in_as"] and people["admin"]["username"] in home["signed_in_as"][0], (where, home)
    assert words["admin"] in home["signed_in_as"][0], (where, home["signed_in_as"])
    assert [t["href"] for t in home["tiles"]] == ["/console/clients", "/console/users", "/console/keys"], (where, home)
    assert home["tiles"][0]["count"] == len(pages["clients"]["rows"]), (where, home["tiles"], pages["clients"]["rows"])
    assert home["tiles"][1]["count"] == len(pages["users"]["rows"]), (where, home["tiles"], pages["users"]["rows"])
    # The tile counts signing algorithms; the keys page also offers the encryption keys'.
    signing_algs = [a for a in pages["keys"]["algs"] if a not in ("RSA-OAEP-256", "ECDH-ES")]
    assert len(signing_algs) == len(pages["keys"]["algs"]) - 2, (where, pages["keys"]["algs"])
    assert home["tiles"][2]["count"] == len(signing_algs), (where, home["tiles"], pages["keys"]["algs"])
    assert any(r["cells"][1] == "second_factor_success" for r in home["events"]), (where, home["events"])

    # The clients: the list (a "New client" link), the form's defaults.
    clients = pages["clients"]
    assert "/console/clients/new" in clients["main_links"], (where, clients["main_links"])
    assert f"/console/clients/{quote(setup['strict_client'], safe='')}" in [l for r in clients["rows"] for l in r["links"]], (where, clients)
    # "New client": the application types first;
    # each fills in the form with its metadata; the rest behind "Advanced settings".
    types = pages["client-new"]
    assert (types["types"], types["checked"]) == (TYPES, ["web"]), (where, types)
    spa = pages["client-form-spa"]
    assert spa["query"] == {"type": "spa"}, (where, spa["query"])
    form = spa["form"]
    assert (form["type"], form["client_id"], form["method"], form["scope"], form["grants"], form["disabled"], form["csrf"]) == (
        "spa", "", "none", "openid profile email offline_access", ["authorization_code", "refresh_token"], False, True), (where, form)
    assert form["advanced_open"] is False and form["invalid"] == [], (where, form)
    web = pages["client-form"]
    assert web["query"] == {"type": "web"} and web["advanced_visible"] is False, (where, web)
    assert (web["form"]["type"], web["form"]["method"], web["form"]["grants"]) == (
        "web", "client_secret_basic", ["authorization_code", "refresh_token"]), (where, web["form"])

    # A redirect URI that is a path: 400, the form again as typed, the reason in the page's
    # words (never a URL parser's) in an alert that has the focus; the field marked.
    bad = pages["client-error"]
    assert len(bad["alerts"]) == 1 and bad["alerts"][0].startswith(words["refused"]), (where, bad["alerts"])
    assert words["bad_redirect"] in bad["alerts"][0] and "relative URL" not in bad["text"], (where, bad["alerts"])
    assert (bad["focused"] or {}).get("role") == "alert", (where, bad["focused"])
    assert (bad["form"]["client_name"], bad["form"]["redirect_uris"], bad["form"]["type"]) == (CLIENT_NAME, "/callback", "web"), (where, bad["form"])
    assert bad["form"]["invalid"] == ["redirect_uris"] and bad["described"] == "form-error", (where, bad["form"])
    assert "client_credentials" in bad["form"]["grants"], (where, bad["form"])

    # The secret, once: never stored by the browser; copied by the Copy button; it works.
    client_id = facts["client"]["id"]
    created = pages["client-created"]
    sp = created["secret_page"]
    assert "no-store" in (created["cache_control"] or ""), (where, created["cache_control"])
    assert sp["client_id"] == client_id and len(sp["secret"]) >= 20, (where, sp)
    # What the application needs: the issuer, discovery, and the settings, copied.
    assert sp["issuer"] == strict.issuer, (where, sp)
    assert sp["discovery"] == f"{strict.issuer}/.well-known/openid-configuration", (where, sp)
    assert sp["snippet"].splitlines() == [
        f"OIDC_ISSUER={strict.issuer}", f"OIDC_DISCOVERY_URL={strict.issuer}/.well-known/openid-configuration",
        f"OIDC_CLIENT_ID={client_id}", f"OIDC_CLIENT_SECRET={sp['secret']}", f"OIDC_REDIRECT_URI={REDIRECT_URIS[0]}",
        'OIDC_SCOPE="openid profile email offline_access"'], (where, sp["snippet"])
    assert sp["settings_copy_visible"] is True and sp["settings_clipboard"] == sp["snippet"], (where, sp)
    assert SENTENCES[lang]["client-created"] in created["text"], (where, created["text"])
    assert sp["copy_visible"] is True and sp["clipboard"] == sp["secret"], (where, sp)
    assert sp["copy_label_after"] == words["copied"], (where, sp)
    assert checked[(walk, "created")] == {"status": 200, "error": None, "client_id": client_id,
                                          "token_type": "Bearer"}, (where, checked)
    # The client's page shows the form, never the secret (nor after a reload).
    show = pages["client"]
    assert show["holds_secret"] is False, where
    assert show["reloaded"] == {"status": 200, "holds_secret": False, "secret_elements": 0}, (where, show["reloaded"])
    assert (show["form"]["client_name"], show["form"]["redirect_uris"], show["form"]["method"]) == (
        CLIENT_NAME, "\n".join(REDIRECT_URIS), "client_secret_basic"), (where, show["form"])
    assert show["form"]["grants"] == ["authorization_code", "refresh_token", "client_credentials"], (where, show["form"])
    # Its name changed: back on its page with the notice; the secret unchanged.
    saved = pages["client-saved"]
    path = facts["client"]["path"]
    assert hops(saved) == [("POST", path, 303), ("GET", path, 200)] and saved["query"] == {"done": "saved"}, (where, saved)
    assert saved["form"]["client_name"] == CLIENT_RENAMED and saved["holds_secret"] is False, (where, saved["form"])
    assert checked[(walk, "after-save")]["status"] == 200, (where, checked)
    # A new secret: shown once; the old one refused from then on.
    rotated = pages["client-secret"]
    new_secret = rotated["secret_page"]["secret"]
    assert "no-store" in (rotated["cache_control"] or ""), (where, rotated["cache_control"])
    assert new_secret and new_secret != sp["secret"], (where, rotated["secret_page"])
    assert SENTENCES[lang]["client-secret"] in rotated["text"], (where, rotated["text"])
    assert checked[(walk, "rotated-old")] == {"status": 401, "error": "invalid_client", "client_id": None}, (where, checked)
    assert checked[(walk, "rotated-new")]["status"] == 200, (where, checked)
    assert checked[(walk, "rotated-new")]["client_id"] == client_id, (where, checked)
    # What the server holds now, and which secret it takes.
    held = admin_get(strict, f"/admin/clients/{quote(client_id, safe='')}")
    assert held["client_name"] == CLIENT_RENAMED and held["redirect_uris"] == REDIRECT_URIS, held
    assert sorted(held["grant_types"]) == ["authorization_code", "client_credentials", "refresh_token"], held
    assert held["token_endpoint_auth_method"] == "client_secret_basic" and "client_secret" not in held, held
    assert held["application_type"] == "web", held
    discovery = requests.get(strict.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    assert token(discovery, client_id, sp["secret"])["status"] == 401, where
    assert token(discovery, client_id, new_secret)["status"] == 200, where

    check_saml_application(walk, pages, facts, strict)

    # Users: the list ("New user"), the form; the user created with the auditor role.
    assert "/console/users/new" in pages["users"]["main_links"], (where, pages["users"]["main_links"])
    new = pages["user-new"]["form"]
    assert (new["username"], new["roles"], new["disabled"]) == ("", [], False), (where, new)
    made = pages["user-created"]
    staff = people["staff"]
    staff_path = facts["staff"]["path"]
    assert hops(made) == [("POST", "/console/users", 303), ("GET", staff_path, 200)] and made["query"] == {"done": "created"}, (where, made)
    assert (made["form"]["username"], made["form"]["email"], made["form"]["name"], made["form"]["roles"]) == (
        staff["username"], staff["email"], STAFF_NAME, ["auditor"]), (where, made["form"])
    assert made["sessions"] == [], (where, made["sessions"])
    held = admin_get(strict, f"/admin/users/{quote(facts['staff']['id'], safe='')}")
    assert (held["username"], held["roles"], held["disabled"]) == (staff["username"], ["auditor"], False), held
    assert (held["claims"].get("email"), held["claims"].get("name")) == (staff["email"], STAFF_NAME), held
    # Found with the keyboard alone: Tab from the top passes only the navigation's links
    # (and the search's label-less nothing) before the field; Enter searches.
    found = pages["users-search"]
    stops = found["keyboard"]["stops"]
    assert stops[-1]["id"] == "q" and all(s and s["tag"] == "a" for s in stops[:-1]), (where, stops)
    assert found["query"] == {"q": staff["username"]} and found["search_value"] == staff["username"], (where, found)
    assert [r["links"] for r in found["rows"]] == [[staff_path]], (where, found["rows"])
    assert SENTENCES[lang]["users-search"] in found["text"], (where, found["text"])
    # The user's page: the session they started in another browser, with its End button;
    # ended, gone, and their browser is asked to sign in again.
    assert facts["staff_signed_in"]["path"] == "/account" and facts["staff_signed_in"]["status"] == 200, (where, facts)
    user = pages["user"]
    assert user["form"]["roles"] == ["auditor"] and user["factors"] == 0, (where, user["form"])
    [session] = user["sessions"]
    assert [(b["form_action"], b["sid"]) for b in session["buttons"]] == [(f"{staff_path}/sessions/end", True)], (where, session)
    assert session["buttons"][0]["label"], (where, session)  # named for the session, not just "End"
    ended = pages["user-session-ended"]
    assert hops(ended) == [("POST", f"{staff_path}/sessions/end", 303), ("GET", staff_path, 200)], (where, ended)
    assert ended["query"] == {"done": "ended"} and ended["sessions"] == [], (where, ended)
    assert SENTENCES[lang]["user-session-ended"] in ended["text"], (where, ended["text"])
    after = facts["staff_after_end"]
    assert [(h["method"], h["path"], h["status"]) for h in after["hops"]] == [
        ("GET", "/account", 303), ("GET", "/account/login", 303), ("GET", "/authorize", 200)], (where, after)
    assert after["login_form"] == 1, (where, after)
    assert admin_get(strict, f"/admin/users/{quote(facts['staff']['id'], safe='')}/sessions")["sessions"] == [], where

    # A key rotation: one more key published, not yet signing; the JWKS one key longer.
    before, after_keys = pages["keys"]["keys"], pages["keys-rotated"]["keys"]
    assert pages["keys-rotated"]["query"] == {"done": "rotated"}, (where, pages["keys-rotated"])
    new_keys = [k for k in after_keys if k["kid"] not in {b["kid"] for b in before}]
    assert len(after_keys) == len(before) + 1 and len(new_keys) == 1, (where, before, after_keys)
    assert (new_keys[0]["state"], new_keys[0]["label"]) == ("next", words["next_key"]), (where, new_keys)
    assert [k["state"] for k in after_keys].count("next") == [k["state"] for k in before].count("next") + 1, (where, after_keys)
    assert sum(k["state"] == "active" for k in after_keys) == sum(k["state"] == "active" for k in before) >= 1, (where, after_keys)
    jwks_before, jwks_after = checked[(walk, "jwks-before")]["kids"], checked[(walk, "jwks-after")]["kids"]
    assert sorted(jwks_after) == sorted(jwks_before + [new_keys[0]["kid"]]), (where, jwks_before, jwks_after, new_keys)

    # The audit log filtered by event with the keyboard alone: only that event, this walk's
    # rotation among them.
    assert pages["audit"]["events"], (where, "no events")
    filtered = pages["audit-filtered"]
    stops = filtered["keyboard"]["stops"]
    assert stops[-1]["id"] == "event" and all(s and s["tag"] == "a" for s in stops[:-1]), (where, stops)
    assert filtered["query"].get("event") == AUDIT_EVENT and filtered["event_value"] == AUDIT_EVENT, (where, filtered["query"])
    events = filtered["events"]
    assert events and {e["cells"][1] for e in events} == {AUDIT_EVENT}, (where, events)
    # This walk's rotation, recorded as the console's, by this admin: named, linked.
    [mine] = [e for e in events if e["cells"][3] == client_id]
    assert json.loads(mine["cells"][6]) == {"admin": people["admin"]["id"], "by": "console"}, (where, mine)
    admin_path = f"/console/users/{quote(people['admin']['id'], safe='')}"
    assert mine["cells"][4] == people["admin"]["username"] and admin_path in mine["links"], (where, mine)
    assert len(events) < len(pages["audit"]["events"]), (where, "the filter took nothing away")
    assert pages["audit"]["event_options"][0] == "" and "client_secret_rotated" in pages["audit"]["event_options"], (where, pages["audit"])
    # By the staff member's username: only their events; who did each, by name.
    by_user = pages["audit-by-user"]
    assert by_user["query"].get("user") == staff["username"] and by_user["query"].get("event") == "", (where, by_user["query"])
    assert by_user["events"] and {e["cells"][2] for e in by_user["events"]} == {staff["username"]}, (where, by_user["events"])
    actors = {(e["cells"][1], e["cells"][4]) for e in by_user["events"]}
    assert ("user_created", people["admin"]["username"]) in actors and ("login_success", staff["username"]) in actors, (where, actors)
    # Times: ISO 8601 in UTC from the server, shown in the browser's zone (the same moment).
    zone = ZoneInfo(TIMEZONES[lang])
    for t in pages["audit"]["times"] + by_user["times"]:
        utc = datetime.fromisoformat(t["datetime"].replace("Z", "+00:00"))
        shown = datetime.fromisoformat(t["text"])
        assert t["datetime"].endswith("Z") and t["title"] == t["datetime"], (where, t)
        assert shown == utc and shown.utcoffset() == utc.astimezone(zone).utcoffset(), (where, t)
    assert pages["audit"]["times"], (where, "no times")


def check_saml_application(walk: str, pages: dict, facts: dict, strict):
    """The SAML application: its form (every field labelled) filled and sent with the keyboard
    alone, each control reached by Tab in the form's order; the client's page it lands on names
    the metadata's entity ID and ACS URL; the server holds that service provider."""
    hops = lambda p: [(h["method"], h["path"], h["status"]) for h in p["hops"]]  # noqa: E731
    where = (walk, "saml")
    entity_id, acs = SAML_ENTITY_ID.format(walk=walk), SAML_ACS.format(walk=walk)
    assert (facts["saml"]["entity_id"], facts["saml"]["acs"]) == (entity_id, acs), (where, facts["saml"])
    form = pages["saml-form"]
    assert form["query"] == {"type": "saml"}, (where, form["query"])
    assert form["form"]["action"] == "/console/saml" and form["form"]["disabled"] is False and form["form"]["csrf"], (where, form["form"])
    assert (form["form"]["metadata"], form["form"]["grant_fields"]) == ("", 0), (where, form["form"])
    # Every field a keyboard (or screen reader) user meets has a label that says something.
    unlabelled = [f for f in form["fields"]["inputs"] if not any(f["labels"])]
    assert not unlabelled, (where, unlabelled)
    assert [b["form_action"] for b in form["fields"]["buttons"]] == ["/console/saml"], (where, form["fields"]["buttons"])
    # Tab from the top passes only the navigation's links before the name; from there on, the
    # metadata, then each control in the form's order, then its button (Enter sent it).
    to_name = form["keyboard"]["to_name"]["stops"]
    assert to_name[-1]["id"] == "client_name" and all(s and s["tag"] == "a" for s in to_name[:-1]), (where, to_name)
    stops = form["keyboard"]["stops"]
    assert [s["id"] or s["name"] for s in stops[:-1]] == ["metadata", *SAML_TAB_ORDER], (where, stops)
    assert (stops[-1]["tag"], stops[-1]["type"], stops[-1]["form_action"]) == ("button", "submit", "/console/saml"), (where, stops)
    typed = form["typed"]
    assert (typed["client_name"], typed["attributes"]) == (SAML_NAME, SAML_ATTRIBUTES), (where, typed)
    assert entity_id in typed["metadata"] and acs in typed["metadata"], (where, typed)
    # Created: POST /console/saml, then the client's page (its SAML form, not the OpenID one)
    # with the notice; it names the entity ID and where responses go, and holds what was sent.
    created = pages["saml-created"]
    path = facts["saml"]["path"]
    assert hops(created) == [("POST", "/console/saml", 303), ("GET", path, 200)], (where, created)
    assert created["query"] == {"done": "saved"}, (where, created["query"])
    assert entity_id in created["text"] and acs in created["text"], (where, created["text"])
    shown = created["form"]
    assert shown["acs"] == [acs] and shown["grant_fields"] == 0, (where, shown)
    assert shown["action"] == path and shown["metadata"] is None, (where, shown)  # the metadata's settings are kept, not edited
    assert (shown["client_name"], shown["attributes"], shown["checked"], shown["invalid"]) == (
        SAML_NAME, SAML_ATTRIBUTES, ["sign_response"], []), (where, shown)
    # The admin API: one client with that entity ID, the one the page is for.
    held = [c for c in admin_get(strict, "/admin/clients")["clients"] if (c.get("saml") or {}).get("entity_id") == entity_id]
    assert [c["client_id"] for c in held] == [facts["saml"]["id"]], (where, held)
    [client] = held
    assert client["client_name"] == SAML_NAME and client["grant_types"] == [], (where, client)
    assert client["saml"]["acs"] == [{"index": 0, "url": acs}], (where, client["saml"])
    assert [(a["name"], a["claim"]) for a in client["saml"]["attributes"]] == [("mail", "email")], (where, client["saml"])
    assert client["saml"]["name_id_format"] == shown["name_id_format"], (where, client["saml"], shown)


def check_refusals(walk: str, lang: str, pages: dict, setup: dict):
    """No role: 403. An admin without a second factor: 403 and the way to add one. Both signed
    in through the same login page (acr_values only asks: no factor, a password session)."""
    people = setup["users"][walk]
    hops = lambda p: [(h["method"], h["path"], h["status"]) for h in p["hops"]]  # noqa: E731
    denied = pages["denied"]
    assert hops(denied) == [("POST", "/login", 303), ("GET", "/console/callback", 303), ("GET", "/console", 403)], (walk, denied)
    assert SENTENCES[lang]["denied"].format(nobody=people["nobody"]["username"]) in denied["text"], (walk, denied["text"])
    assert denied["main_links"] == ["/"], (walk, denied["main_links"])
    needs = pages["needs-factor"]
    assert hops(needs) == [("POST", "/login", 303), ("GET", "/console/callback", 303), ("GET", "/console", 403)], (walk, needs)
    assert SENTENCES[lang]["needs-factor"] in needs["text"], (walk, needs["text"])
    assert needs["main_links"] == ["/account"], (walk, needs["main_links"])
    assert pages["account"]["hops"] == [{"method": "GET", "path": "/account", "status": 200}], (walk, pages["account"])


def check_auditor(walk: str, lang: str, pages: dict, setup: dict):
    """An auditor looks and cannot change: no "New client", the forms disabled with no button,
    a change forced from the page refused (403) and nothing made."""
    lenient, people = setup["lenient"], setup["users"][walk]
    home = pages["auditor-overview"]
    # Signed in with the password alone: if_enrolled asks nothing more of a user without one.
    assert [(h["method"], h["path"], h["status"]) for h in home["hops"]] == [
        ("POST", "/login", 303), ("GET", "/console/callback", 303), ("GET", "/console", 200)], (walk, home)
    assert WORDS[lang]["auditor"] in home["signed_in_as"][0], (walk, home["signed_in_as"])
    clients = pages["auditor-clients"]
    assert "/console/clients/new" not in clients["main_links"], (walk, clients["main_links"])
    client_path = f"/console/clients/{quote(setup['lenient_client'], safe='')}"
    form = pages["auditor-client"]["form"]
    assert form["disabled"] is True and form["buttons"] == 0, (walk, form)
    assert form["post_forms"] == [client_path] and form["csrf"] is True, (walk, form)
    refused = pages["read-only"]
    assert refused["posted"] == {"csrf": True, "fields": ["client_id", "client_name", "redirect_uris",
                                                          "grant:client_credentials", "method", "scope"]}, (walk, refused)
    assert SENTENCES[lang]["read-only"] in refused["text"], (walk, refused["text"])
    forced = people["auditor"]["forced_client_id"]
    resp = requests.get(lenient.url(f"/admin/clients/{forced}"), timeout=HTTP_TIMEOUT_S,
                        headers={"Authorization": f"Bearer {lenient.admin_token}"})
    assert resp.status_code == 404, (walk, resp.status_code, resp.text)
    assert "/console/users/new" not in pages["auditor-users"]["main_links"], (walk, pages["auditor-users"]["main_links"])
    me = pages["auditor-user"]
    assert me["form"]["disabled"] is True and me["form"]["buttons"] == 0, (walk, me["form"])
    assert me["form"]["post_forms"] == [me["path"]], (walk, me["form"])
    assert me["sessions"] and all(r["buttons"] == [] for r in me["sessions"]), (walk, me["sessions"])


def test_console_in_english_and_japanese(start_authrim, tmp_path):
    needs_browser()
    setup = start_servers(start_authrim, "languages")
    seen, checked, report = run_program("languages", setup, tmp_path)
    pages = check_walks(seen, setup, "languages", report)
    for walk in ("en", "ja"):
        names = heading_names(setup, seen, walk)
        for p in pages[walk].values():
            check_language(p, walk, names, report)
            if p["name"] != "client-error":
                assert p["alerts"] == [], (walk, p["name"], p["alerts"])
        check_admin_walk(walk, walk, pages[walk], seen, setup, checked, report)
        check_refusals(walk, walk, pages[walk], setup)
        check_auditor(walk, walk, pages[walk], setup)
    # Nothing else made on either server: the lenient one still has its one client.
    lenient_clients = admin_get(setup["lenient"], "/admin/clients")["clients"]
    assert [c["client_id"] for c in lenient_clients] == [setup["lenient_client"]], lenient_clients

    warn_without_japanese_font(seen)
    check_artifacts(seen, expected_screenshots("languages"), report)
    # Nothing in another language unless marked so; every such problem at once.
    wording = []
    for walk in ("en", "ja"):
        people = setup["users"][walk]
        names = [CLIENT_NAME, CLIENT_RENAMED, STAFF_NAME, SAML_NAME, "Registered App", "Authrim", "OpenID Connect",
                 *(p["username"] for p in people.values())]
        for p in pages[walk].values():
            wording += other_language(p, walk, names)
    assert not wording, "pages' wording:\n" + "\n".join(wording)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


def test_console_with_axe(start_authrim, tmp_path):
    needs_browser()
    setup = start_servers(start_authrim, "axe")
    seen, _, report = run_program("axe", setup, tmp_path)
    assert seen["axe_version"] == json.loads((PROGRAM.parent / "package.json").read_text())["dependencies"]["axe-core"]
    assert seen["axe_tags"] == ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"], report

    # The harness finds what a page made to fail has (as in test_pages.py).
    light, dark = seen["axe_control"]
    assert (light["scheme"], light["dark"], dark["scheme"], dark["dark"]) == ("light", False, "dark", True), report
    found = {r["scheme"]: {v["id"]: sorted(v["targets"]) for v in r["violations"]} for r in (light, dark)}
    assert found["light"].get("color-contrast") == [".faint"], found
    assert found["dark"].get("color-contrast") == [".dark-only", ".faint"], found
    assert found["light"].get("label") == ["input"] and found["dark"].get("label") == ["input"], found

    pages = check_walks(seen, setup, "axe", report)
    checked = []
    for walk, by_name in pages.items():
        lang = walk.removeprefix("axe-")
        names = heading_names(setup, seen, walk)
        for p in by_name.values():
            check_language(p, lang, names, report)
            if p["name"] in NOT_CONSOLE:
                assert "axe" not in p, (walk, p["name"])
                continue
            checked.append(p)
            light, dark = p["axe"]
            where = (walk, p["name"])
            assert (light["scheme"], light["dark"], dark["scheme"], dark["dark"]) == ("light", False, "dark", True), where
            assert light["body_background"] != dark["body_background"], (where, "the dark theme did not apply")
            assert light["engine"] == seen["axe_version"], where
            for run in p["axe"]:
                assert "color-contrast" in run["passes"] + [v["id"] for v in run["violations"]], (where, run["scheme"])
    assert len(checked) == 2 * (len(FULL_WALK) - len(NOT_CONSOLE)), [p["name"] for p in checked]
    incomplete = axe_findings(checked, "incomplete")
    if incomplete:
        warnings.warn("axe-core could not decide (check by hand):\n" + "\n".join(incomplete))
    violations = axe_findings(checked, "violations")
    assert not violations, (f"axe-core {seen['axe_version']} ({', '.join(seen['axe_tags'])}) found:\n"
                            + "\n".join(violations))
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


def test_console_on_a_phone(start_authrim, tmp_path):
    needs_browser()
    setup = start_servers(start_authrim, "phone")
    seen, _, report = run_program("phone", setup, tmp_path)
    pages = check_walks(seen, setup, "phone", report)
    wide = []
    for walk, by_name in pages.items():
        lang = walk.removeprefix("phone-")
        names = heading_names(setup, seen, walk)
        for p in by_name.values():
            check_language(p, lang, names, report)
            w = p["widths"]
            where = f"{walk} {p['name']}"
            # A phone widens its layout viewport (innerWidth) to what the page needs: so the
            # page's width is held to the phone's, 390, not to innerWidth.
            assert w["client_width"] == 390, (where, w)
            if max(w["scroll_width"], w["inner_width"]) > 390:
                wide.append(f"{where}: scrollWidth {w['scroll_width']}, innerWidth {w['inner_width']} > 390; "
                            f"sticking out: {w['overflowing']}")
            # Every table in a region that scrolls by itself, within the page, reachable with
            # the keyboard and named.
            assert w["tables_outside_wraps"] == 0, (where, w)
            # Nothing sticks out of its cell, list item or card (the sessions' "End" buttons
            # were as wide as their cell plus their margin: the last column cut off).
            if w["out_of_box"]:
                wide.append(f"{where}: sticking out of their boxes: {w['out_of_box']}")
            for t in w["table_wraps"]:
                if t["right"] > w["inner_width"] or t["overflow_x"] not in ("auto", "scroll"):
                    wide.append(f"{where}: a table's region is not a scrolling region within the page: {t}")
                assert (t["tabindex"], t["role"]) == ("0", "region") and t["label"], (where, t)
        # The pages with tables that do not fit: they do scroll inside their region.
        for name in ("overview", "user"):
            assert any(t["scroll_width"] > t["client_width"] for t in by_name[name]["widths"]["table_wraps"]), (
                walk, name, "expected a table wider than the phone", by_name[name]["widths"])
        assert len(by_name["user"]["sessions"]) >= 1, (walk, by_name["user"])
    assert not wide, "pages that scroll sideways at 390x844:\n" + "\n".join(wide)
    warn_without_japanese_font(seen)
    check_artifacts(seen, expected_screenshots("phone"), report)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, set())
