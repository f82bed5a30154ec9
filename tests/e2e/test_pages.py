"""Every page in a real browser, for accessibility and languages: Debian's Chromium, headless,
driven by Playwright, with axe-core (pinned in ``browser/package.json``) for the WCAG rules.

``browser/pages.mjs`` (see its header) walks through every page a person meets: the landing
page, an error page, the login page, its wrong-password error, the consent page, the account
page and its three setup pages (passkey, authenticator app with its QR code, recovery codes),
the sign-out confirmation, the signed-out page, the second-factor page and, on a second server
with ``AUTHRIM_ACCOUNT_REAUTH_MAX_AGE=1``, the re-authentication page. This test starts both
servers with a ``localhost`` issuer (so the login page offers passkeys), registers the client
and, for each walk, its users (``alice-<walk>``: a password; ``bob-<walk>``: an authenticator
app, enrolled through the admin API, so a second factor is asked; ``carol-<walk>`` on the
second server), runs the program and checks what it printed:

- ``test_pages_in_english_and_japanese``: each page in an English and a Japanese browser
  (Accept-Language from the browser's locale), and ``ui_locales=ja`` from an English browser
  (on ``/authorize`` and ``/logout``: it wins over Accept-Language; the account page, without
  it, stays English), a French browser (landing, login, consent, account): status, ``Content-Language`` (and ``Vary:
  Accept-Language``), ``<html lang>``, a localised title, heading and sentence; no English
  sentence in a Japanese page unless marked ``lang="en"`` and no Japanese in an English one
  (WCAG 3.1.2); the login page with the keyboard; discovery's ``ui_locales_supported``; every
  page screenshotted, a few in the dark theme too.
- ``test_pages_on_a_phone``: the same walk at 390x844 in both languages: no horizontal scroll.
  In both tests nothing sticks out of the box that holds it (each control, form, list item
  against its cell, list item or card: ``shared.outOfBox``).
- ``test_pages_with_axe``: axe-core on every page in both languages, light and dark theme (the
  CSP bypassed in those browser contexts only, to inject it), after a control page proves that
  the harness finds what it should: no violation of the WCAG 2.0/2.1/2.2 A and AA rules.

No CSP violation, page error or console error is allowed, but Chromium's own line for the
pages answered with an error status on purpose (the error page 400, the wrong password 401, the
re-authentication page 403). Screenshots go to ``target/e2e-artifacts/pages/``:
``<walk>-<nn>-<page>.png`` (walks ``en``, ``ja``, ``ui-locales``, ``fr``, ``mobile-en``,
``mobile-ja``) and ``-dark.png`` for a few. Needs what ``test_browser.py`` needs (``npm ci`` in
``browser/``, Chromium); Japanese screenshots need a Japanese font (``fonts-noto-cjk``): without
one the test warns that they show boxes.
"""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, RP_REDIRECT_URI, TIME_SCALE, brief_pages, run_browser_program
from test_browser import needs_browser
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "pages.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "pages"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 180 * TIME_SCALE  # the whole program (it gives up by itself after 150 s; both times TIME_SCALE)
PASSWORD = "every page, every language"
CLIENT_NAME = "Example App"

# The pages of a full walk, in order (see pages.mjs): (method, path, status).
FULL_WALK = {
    "landing": ("GET", "/", 200),
    "error": ("GET", "/authorize", 400),
    "login": ("GET", "/authorize", 200),
    "login-error": ("POST", "/login", 401),
    "consent": ("GET", "/consent", 200),
    "account": ("GET", "/account", 200),
    "add-passkey": ("POST", "/account/passkeys/new", 200),
    "add-authenticator-app": ("POST", "/account/totp/new", 200),
    "recovery-codes": ("POST", "/account/recovery-codes", 200),
    "logout": ("GET", "/logout", 200),
    "signed-out": ("POST", "/logout/confirm", 200),
    "second-factor": ("POST", "/login", 200),
    "reauth": ("POST", "/account/totp/new", 403),
}
UI_LOCALES_WALK = ["login", "login-error", "consent", "account", "logout", "signed-out", "second-factor"]
FRENCH_WALK = ["landing", "login", "consent", "account"]
DARK_SHOTS = {"error", "login-error", "consent", "account", "add-authenticator-app"}
# Walk: (the browser's locale, the pages in order).
SCENARIOS = {
    "languages": {"en": ("en-US", list(FULL_WALK)), "ja": ("ja-JP", list(FULL_WALK)),
                  "ui-locales": ("en-US", UI_LOCALES_WALK), "fr": ("fr-FR", FRENCH_WALK)},
    "mobile": {"mobile-en": ("en-US", list(FULL_WALK)), "mobile-ja": ("ja-JP", list(FULL_WALK))},
    "axe": {"axe-en": ("en-US", list(FULL_WALK)), "axe-ja": ("ja-JP", list(FULL_WALK))},
}
# Errors the walks cause on purpose: (path, status).
DELIBERATE = {("/authorize", 400), ("/login", 401), ("/account/totp/new", 403)}

# Each page's heading and a sentence from it, as src/ui/locales/<lang>.ftl words them.
TEXT = {
    "en": {
        "landing": ("Welcome", "This is an OpenID Connect sign-in service."),
        "error": ("This request cannot be completed", "Return to the application you came from and try again."),
        "login": ("Sign in", f"to continue to {CLIENT_NAME}"),
        "login-error": ("Sign in", "Incorrect username or password."),
        "consent": (f"Allow {CLIENT_NAME} access?", "see your e-mail address"),
        "account": ("Your account", "Sign-in methods"),
        "add-passkey": ("Add a passkey", "Create the passkey"),
        "add-authenticator-app": ("Add an authenticator app", "Scan this code with your authenticator app:"),
        "recovery-codes": ("Your recovery codes", "Keep these somewhere safe"),
        "logout": ("Sign out of Authrim?", "If you did not ask to sign out, close this page"),
        "signed-out": ("You are signed out", "You can close this page."),
        "second-factor": ("Verify it is you", "Code from your authenticator app, or a recovery code"),
        "reauth": ("Confirm it is you", "To change how you sign in, sign in again first"),
    },
    "ja": {
        "landing": ("ようこそ", "これは OpenID Connect のサインインサービスです。"),
        "error": ("このリクエストを完了できません", "元のアプリケーションに戻って、もう一度お試しください。"),
        "login": ("サインイン", f"{CLIENT_NAME} を続行するには"),
        "login-error": ("サインイン", "ユーザー名またはパスワードが正しくありません。"),
        "consent": (f"{CLIENT_NAME} にアクセスを許可しますか？", "メールアドレスを見る"),
        "account": ("アカウント", "サインイン方法"),
        "add-passkey": ("パスキーを追加", "パスキーを作成"),
        "add-authenticator-app": ("認証アプリを追加", "認証アプリでこのコードを読み取ってください:"),
        "recovery-codes": ("リカバリーコード", "安全な場所に保管してください。"),
        "logout": ("Authrim からサインアウトしますか？", "サインアウトを求めていない場合は"),
        "signed-out": ("サインアウトしました", "このページを閉じてかまいません。"),
        "second-factor": ("本人確認", "認証アプリのコード、またはリカバリーコード"),
        "reauth": ("ご本人であることを確認します", "サインイン方法を変更するには"),
    },
    "fr": {
        "landing": ("Bienvenue", "Ceci est un service de connexion OpenID Connect."),
        "login": ("Connexion", f"pour continuer vers {CLIENT_NAME}"),
        "consent": (f"Autoriser {CLIENT_NAME} ?", "voir votre adresse e-mail"),
        "account": ("Votre compte", "Moyens de connexion"),
    },
}
# The account page's words for a user with no recovery codes (a message of its own, not a
# plural: "0 unused codes" reads oddly, and French puts 0 in the category "one").
NO_RECOVERY_CODES = {
    "en": "You have no recovery codes.",
    "ja": "リカバリーコードはありません。",
    "fr": "Vous n'avez aucun code de récupération.",
}
CJK = re.compile(r"[\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]")
# Three or more words of English in a row (codes and keys are capitals and digits: not words).
ENGLISH_PHRASE = re.compile(r"[A-Za-z][a-z]+(?:[\s,.'’:;-]+[A-Za-z][a-z]+){2,}")


def expected_lang(walk: str, page: str) -> str:
    """The page's language: the walk's browser's, but ui_locales=ja on that walk's
    authorization and logout requests (the account page is reached without it)."""
    if walk == "ui-locales":
        return "en" if page == "account" else "ja"
    return walk.rsplit("-", 1)[-1]


def start_servers(start_authrim, walks) -> tuple:
    """The two servers (localhost issuers; the second asks for a sign-in within 1 s before a
    change on the account page), the client and every walk's users."""
    server = start_authrim("pages", {}, host="localhost")
    reauth = start_authrim("pages-reauth", {"AUTHRIM_ACCOUNT_REAUTH_MAX_AGE": "1"}, host="localhost")
    client_id = server.unique("pages-rp")
    server.create_client(client_id=client_id, client_name=CLIENT_NAME, redirect_uris=[RP_REDIRECT_URI],
                         token_endpoint_auth_method="client_secret_basic",
                         grant_types=["authorization_code"], scope="openid profile email")
    for walk in walks:
        server.create_user(f"alice-{walk}", PASSWORD, {"name": "Alice"})
        bob = server.create_user(f"bob-{walk}", PASSWORD, {"name": "Bob"})
        resp = server.admin_post(f"/admin/users/{bob['id']}/factors/totp", {"name": "Phone"})
        assert resp.status_code == 201, (resp.status_code, resp.text)
        reauth.create_user(f"carol-{walk}", PASSWORD, {"name": "Carol"})
    return server, reauth, client_id


def run_program(scenario: str, servers: tuple, tmp_path: Path) -> tuple[dict, str]:
    """Run ``pages.mjs`` for ``scenario``; its screenshots (and, on a failure, the page, as
    ``<scenario>-failure.*``) are copied to ARTIFACTS whatever the outcome, over this
    scenario's files of an earlier run. Returns what it printed, and that as a report."""
    server, reauth, client_id = servers
    env = dict(SCENARIO=scenario, ISSUER=server.issuer, REAUTH_ISSUER=reauth.issuer, CLIENT_ID=client_id,
               REDIRECT_URI=RP_REDIRECT_URI, PASSWORD=PASSWORD, WAIT_MS=str(WAIT_MS))
    stale = [*(old for walk in SCENARIOS[scenario] for old in ARTIFACTS.glob(f"{walk}-[0-9][0-9]-*.png")),
             *ARTIFACTS.glob(f"{scenario}-failure.*")]
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S, stale=stale,
                               failure_prefix=f"{scenario}-")
    return seen, brief_pages(seen, tmp_path)


def check_walks(seen: dict, scenario: str, report: str):
    """Every walk ran in its browser locale and took its pages in order, each reached the way
    it should be (method, path, status)."""
    walks = SCENARIOS[scenario]
    assert [(w["name"], w["locale"], w["accept_language"]) for w in seen["walks"]] == [
        (name, locale, locale) for name, (locale, _) in walks.items()], report
    for name, (_, pages) in walks.items():
        visited = [p for p in seen["pages"] if p["walk"] == name]
        assert [p["name"] for p in visited] == pages, (name, report)
        for p in visited:
            method, path, status = FULL_WALK[p["name"]]
            assert (p["method"], p["path"], p["status"]) == (method, path, status), (name, p["name"], report)


def check_language(p: dict, lang: str, report: str):
    """``Content-Language``, ``<html lang>``, the heading, a sentence and the title are the
    expected language's."""
    where = (p["walk"], p["name"], lang)
    assert p["content_language"] == lang, (where, p["content_language"], report)
    assert "accept-language" in (p["vary"] or "").lower(), (where, p["vary"], report)
    assert p["html_lang"] == lang, (where, p["html_lang"], report)
    heading, sentence = TEXT[lang][p["name"]]
    assert p["heading"] == heading, (where, p["heading"], report)
    assert sentence in p["text"], (where, sentence, p["text"])
    assert p["title"].endswith(" · Authrim"), (where, p["title"])
    if lang == "ja":
        assert CJK.search(p["title"]), (where, p["title"])


def other_language(p: dict, lang: str) -> list[str]:
    """Text in another language than the page's and not marked as such (WCAG 3.1.2, language of
    parts): English phrases in a Japanese page, Japanese in the others; names and addresses
    may stand in any."""
    names = [CLIENT_NAME, "OpenID Connect", "Authrim", f"alice-{p['walk']}", f"bob-{p['walk']}",
             f"carol-{p['walk']}"]
    found = []
    for part in p["parts"]:
        if (part["lang"] or "").split("-")[0] != lang:
            continue  # marked as another language: read as that one
        text = re.sub(r"https?://\S+", " ", part["text"])
        for name in names:
            text = text.replace(name, " ")
        if ENGLISH_PHRASE.search(text) if lang == "ja" else CJK.search(text):
            found.append(f"{p['walk']} {p['name']} ({p['method']} {p['path']}, lang={lang}): "
                         f"{part.get('attribute', 'text')} {part['text']!r} is marked lang={part['lang']}")
    return found


def check_artifacts(seen: dict, expected: list[str], report: str):
    assert seen["screenshots"] == expected, report
    for name in expected:
        f = ARTIFACTS / name
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", (f, report)


def expected_screenshots(scenario: str, dark: bool) -> list[str]:
    names = []
    for walk, (_, pages) in SCENARIOS[scenario].items():
        for n, page in enumerate(pages, 1):
            names.append(f"{walk}-{n:02d}-{page}.png")
            if dark and walk in ("en", "ja") and page in DARK_SHOTS:
                names.append(f"{walk}-{n:02d}-{page}-dark.png")
    return names


def warn_without_japanese_font(seen: dict):
    if seen["japanese_font"] is False:
        warnings.warn("this Chromium has no Japanese font: the Japanese screenshots show boxes "
                      "(apt-get install fonts-noto-cjk)")


def test_pages_in_english_and_japanese(start_authrim, tmp_path):
    needs_browser()
    servers = start_servers(start_authrim, SCENARIOS["languages"])
    discovery = requests.get(servers[0].url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    assert {"en", "ja", "fr"} <= set(discovery.get("ui_locales_supported", [])), discovery
    seen, report = run_program("languages", servers, tmp_path)
    check_walks(seen, "languages", report)
    check_boxes(seen)
    for p in seen["pages"]:
        check_language(p, expected_lang(p["walk"], p["name"]), report)
        alerts = {"error": 1, "login-error": 1}.get(p["name"], 0)
        assert len(p["alerts"]) == alerts, (p["walk"], p["name"], p["alerts"])
    for walk, lang in (("en", "en"), ("ja", "ja"), ("ui-locales", "ja")):
        [error] = [p for p in seen["pages"] if p["walk"] == walk and p["name"] == "login-error"]
        assert error["alerts"] == [TEXT[lang]["login-error"][1]], (walk, error["alerts"])

    # The keyboard on the login page: the username field first (focused on load, and nothing
    # before it: Shift+Tab leaves the page, Tab comes back to it), then the password, the
    # Sign in button and the passkey button; after a wrong password the error (role=alert)
    # has the focus, the username is kept and Tab goes on to it.
    for walk in ("en", "ja"):
        kb = seen["keyboard"][walk]
        login = kb["login"]
        assert login["on_load"]["id"] == "username", (walk, kb)
        assert login["before_first"] is None, (walk, kb)
        assert login["first_tab"]["id"] == "username", (walk, kb)
        order = [(f["tag"], f["id"] or f["type"], f["form_action"]) for f in login["order"][:4]]
        assert order == [("input", "username", "/login"), ("input", "password", "/login"),
                         ("button", "submit", "/login"), ("button", "button", "/login/passkey")], (walk, kb)
        assert login["order"][2]["text"] == TEXT[walk]["login"][0], (walk, kb)  # "Sign in" / サインイン
        after = kb["after_wrong_password"]
        assert (after["error_role"], after["error_tabindex"]) == ("alert", "-1"), (walk, kb)
        assert after["error_text"] == TEXT[walk]["login-error"][1], (walk, kb)
        assert after["error_focused"] is True, (walk, kb)
        assert (after["focused"]["tag"], after["focused"]["role"], after["focused"]["class"]) == ("p", "alert", "error"), (walk, kb)
        assert after["username_value"] == f"alice-{walk}" and after["username_autofocus"] is False, (walk, kb)
        assert after["tab_after"]["id"] == "username", (walk, kb)
    # The pages with a field to fill focus it (the second-factor and authenticator-app pages).
    for p in seen["pages"]:
        if p["name"] in ("second-factor", "add-authenticator-app"):
            assert (p["focused"] or {}).get("id") == "code", (p["walk"], p["name"], p["focused"])

    warn_without_japanese_font(seen)
    check_artifacts(seen, expected_screenshots("languages", dark=True), report)
    # What the words say: nothing in another language unless marked so, and no recovery codes
    # yet said as such in each language (a plural). Every such problem at once.
    wording = [line for p in seen["pages"] for line in other_language(p, expected_lang(p["walk"], p["name"]))]
    for p in seen["pages"]:
        count = NO_RECOVERY_CODES[expected_lang(p["walk"], p["name"])]
        if p["name"] == "account" and count not in p["text"]:
            wording.append(f"{p['walk']} account: not {count!r} for a user without recovery codes: {p['text']!r}")
    assert not wording, "pages' wording:\n" + "\n".join(wording)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


def test_pages_on_a_phone(start_authrim, tmp_path):
    needs_browser()
    servers = start_servers(start_authrim, SCENARIOS["mobile"])
    seen, report = run_program("mobile", servers, tmp_path)
    check_walks(seen, "mobile", report)
    check_boxes(seen)
    wide = []
    for p in seen["pages"]:
        check_language(p, expected_lang(p["walk"], p["name"]), report)
        w = p["widths"]
        assert w["client_width"] == 390, (p["walk"], p["name"], w)
        if w["scroll_width"] > w["client_width"]:
            wide.append(f"{p['walk']} {p['name']}: scrollWidth {w['scroll_width']} > clientWidth "
                        f"{w['client_width']}; sticking out: {w['overflowing']}")
    assert not wide, "pages that scroll sideways at 390x844:\n" + "\n".join(wide)
    warn_without_japanese_font(seen)
    check_artifacts(seen, expected_screenshots("mobile", dark=False), report)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


def check_boxes(seen: dict):
    """Nothing on any page sticks out of the box that holds it (a button wider than its card,
    as the account page's "Remove" buttons were: ``shared.outOfBox``)."""
    out = [f"{p['walk']} {p['name']}: {p['out_of_box']}" for p in seen["pages"] if p["out_of_box"]]
    assert not out, "sticking out of their boxes:\n" + "\n".join(out)


def check_axe_pages(seen: dict, report: str, expected: list[tuple[str, int]]):
    """A console walk's axe-core runs (``seen["axe"]``: each page's name, status, and its runs in
    the light and the dark theme): the WCAG 2.x A and AA rules, the pages expected, both themes
    applied, colour contrast checked; no violation (what axe-core could not decide: a warning)."""
    assert seen["axe_tags"] == ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"], report
    assert [(p["name"], p["status"]) for p in seen["axe"]] == expected, report
    for p in seen["axe"]:
        light, dark = p["axe"]
        assert (light["dark"], dark["dark"]) == (False, True) and light["body_background"] != dark["body_background"], p["name"]
        assert all("color-contrast" in run["passes"] + [v["id"] for v in run["violations"]] for run in p["axe"]), p["name"]
    incomplete = axe_findings(seen["axe"], "incomplete")
    if incomplete:
        warnings.warn("axe-core could not decide (check by hand):\n" + "\n".join(incomplete))
    violations = axe_findings(seen["axe"], "violations")
    assert not violations, f"axe-core {seen['axe_version']} found:\n" + "\n".join(violations)


def axe_findings(pages: list[dict], kind: str) -> list[str]:
    """axe-core's violations (or incomplete results) as lines: page, theme, rule, impact, help,
    and each node's target, HTML and what the check measured (colours, ratio)."""
    lines = []
    for p in pages:
        for run in p["axe"]:
            for v in run[kind]:
                lines.append(f"{p['walk']} {p['name']} ({p['method']} {p['path']}, {run['scheme']} theme): "
                             f"{v['id']} [{v['impact']}] {v['help']} ({v['help_url']})")
                for n in v["nodes"]:
                    lines.append(f"    {' '.join(map(str, n['target']))}: {n['html']}")
                    if n["summary"]:
                        lines.append("      " + n["summary"].replace("\n", "\n      "))
                    for c in n["checks"]:
                        if c["data"] is not None:
                            lines.append(f"      {c['id']}: {json.dumps(c['data'], ensure_ascii=False)}")
    return lines


def test_pages_with_axe(start_authrim, tmp_path):
    needs_browser()
    servers = start_servers(start_authrim, SCENARIOS["axe"])
    seen, report = run_program("axe", servers, tmp_path)
    assert seen["axe_version"] == json.loads((PROGRAM.parent / "package.json").read_text())["dependencies"]["axe-core"]
    assert seen["axe_tags"] == ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"], report

    # The harness finds what a page made to fail has: the faint text in both themes, the text
    # faint only in the dark theme only there, the field without a label.
    light, dark = seen["axe_control"]
    assert (light["scheme"], light["dark"], dark["scheme"], dark["dark"]) == ("light", False, "dark", True), report
    found = {r["scheme"]: {v["id"]: sorted(v["targets"]) for v in r["violations"]} for r in (light, dark)}
    assert found["light"].get("color-contrast") == [".faint"], found
    assert found["dark"].get("color-contrast") == [".dark-only", ".faint"], found
    assert found["light"].get("label") == ["input"] and found["dark"].get("label") == ["input"], found

    check_walks(seen, "axe", report)
    for p in seen["pages"]:
        check_language(p, expected_lang(p["walk"], p["name"]), report)
        light, dark = p["axe"]
        where = (p["walk"], p["name"])
        assert (light["scheme"], light["dark"], dark["scheme"], dark["dark"]) == ("light", False, "dark", True), where
        assert light["body_background"] != dark["body_background"], (where, "the dark theme did not apply")
        assert light["engine"] == seen["axe_version"], where
        for run in p["axe"]:
            # Contrast was measured (or is itself among the violations below).
            assert "color-contrast" in run["passes"] + [v["id"] for v in run["violations"]], (where, run["scheme"])
    incomplete = axe_findings(seen["pages"], "incomplete")
    if incomplete:
        warnings.warn("axe-core could not decide (check by hand):\n" + "\n".join(incomplete))
    violations = axe_findings(seen["pages"], "violations")
    assert not violations, (f"axe-core {seen['axe_version']} ({', '.join(seen['axe_tags'])}) found:\n"
                            + "\n".join(violations))
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)
