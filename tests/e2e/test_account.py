"""The account page's sessions, allowed applications and recovery codes in a real browser, and
its layout (issue 36: "Remove" buttons sticking out of their card; the account page's missing
sessions, applications and recovery-code download/print).

``browser/account.mjs`` (see its header) runs, for each walk, a person who signs in to a
client on her phone (an iPhone's User-Agent), allows it, then opens ``/account`` in the walk's
browser and adds an authenticator app there (a long name in the walk's language):

- ``test_sessions_applications_and_recovery_codes``: walks ``en``, ``ja``, ``fr`` (desktop),
  ``phone-en``, ``phone-ja`` (390x844) and ``axe-en``, ``axe-ja``. The page lists her two
  sessions (this browser first, marked, with no button; "Safari on iPhone" in the walk's
  language with a "Sign out" button named after it; when each signed in and was last seen, as
  ``<time datetime>``), the application with what it may see, and her authenticator app with
  "Remove". "Sign out" on the phone's session: the notice, one session left, and the phone's
  next ``prompt=none`` request comes back ``login_required``. "Withdraw": the notice, no
  application, and the client's next request shows the consent page again. New recovery codes:
  "Download" gives ``recovery-codes-127.0.0.1.txt`` (the heading in the walk's language, the
  codes shown, one a line), "Print" calls ``window.print()`` and the print media shows the codes
  and no control. Every page: status, ``Content-Language``, ``<html lang>``, heading, nothing
  sticking out of its box (each control, form, list item, table region against its cell, list
  item or card: ``shared.outOfBox``; before the fix the "Remove" button stuck out of the card
  by its margin), and on a phone no horizontal scroll. axe-core (WCAG 2.0/2.1/2.2 A and AA)
  finds nothing on the account page (as it is, after ending a session, after withdrawing) and
  the recovery codes in the light and dark themes. No CSP violation, page error or console
  error. Screenshots go to ``target/e2e-artifacts/account/``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

from conftest import REPO_ROOT, RP_REDIRECT_URI, TIME_SCALE, brief_pages, run_browser_program
from mail_walks import check_axe
from test_browser import needs_browser
from test_pages import CJK, ENGLISH_PHRASE, warn_without_japanese_font
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "account.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "account"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 180 * TIME_SCALE
PASSWORD = "sessions and applications"
CLIENT_NAME = "Example App"
WALKS = ["en", "ja", "fr", "phone-en", "phone-ja", "axe-en", "axe-ja"]
PAGES = ["login", "account", "session-ended", "withdrawn", "recovery-codes"]
AXE_PAGES = ["account", "session-ended", "withdrawn", "recovery-codes"]
# The authenticator app's name: long, in the walk's language (its "Remove" button must stay
# inside the card beside it).
FACTOR_NAME = {
    "en": "Authenticator app on my old work phone",
    "ja": "仕事用の古いスマートフォンの認証アプリ",
    "fr": "Application d'authentification du vieux téléphone",
}
WORDS = {
    "en": {"heading": "Your account", "sessions": "Where you are signed in", "this": "This browser",
           "phone": "Safari on iPhone", "me": "Chrome on Linux", "end": "Sign out Safari on iPhone, signed in ",
           "applications": "Applications you allowed", "scope": "see your e-mail address",
           "withdraw": f"Withdraw the access of {CLIENT_NAME}", "ended": "That session was signed out.",
           "withdrawn": "The access was withdrawn. The application will ask you again.",
           "none": "You have not allowed any application yet.", "recovery": "Your recovery codes",
           "file": "Recovery codes for alice-{walk} at 127.0.0.1", "download": "Download", "print": "Print",
           "remove": "Remove {name}", "totp": "Your authenticator app was added."},
    "ja": {"heading": "アカウント", "sessions": "サインイン中のブラウザー", "this": "このブラウザー",
           "phone": "iPhone の Safari", "me": "Linux の Chrome", "end": "にサインインした iPhone の Safari をサインアウト",
           "applications": "許可したアプリケーション", "scope": "メールアドレスを見る",
           "withdraw": f"{CLIENT_NAME} のアクセスを取り消す", "ended": "そのセッションをサインアウトしました。",
           "withdrawn": "アクセスを取り消しました。アプリケーションは次回もう一度確認します。",
           "none": "まだどのアプリケーションも許可していません。", "recovery": "リカバリーコード",
           "file": "127.0.0.1 の alice-{walk} のリカバリーコード", "download": "ダウンロード", "print": "印刷",
           "remove": None, "totp": "認証アプリを追加しました。"},
    "fr": {"heading": "Votre compte", "sessions": "Où vous êtes connecté", "this": "Ce navigateur",
           "phone": "Safari sur iPhone", "me": "Chrome sur Linux", "end": "Déconnecter Safari sur iPhone, connecté le ",
           "applications": "Applications autorisées", "scope": "voir votre adresse e-mail",
           "withdraw": f"Retirer l'accès de {CLIENT_NAME}", "ended": "Cette session a été déconnectée.",
           "withdrawn": "L'accès a été retiré. L'application vous le redemandera.",
           "none": "Vous n'avez encore autorisé aucune application.", "recovery": "Vos codes de récupération",
           "file": "Codes de récupération de alice-{walk} sur 127.0.0.1", "download": "Télécharger", "print": "Imprimer",
           "remove": None, "totp": "Votre application d'authentification a été ajoutée."},
}
ISO = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def lang_of(walk: str) -> str:
    return walk.rsplit("-", 1)[-1]


def run_program(server, client_id: str, tmp_path: Path) -> tuple[dict, str]:
    env = dict(ISSUER=server.issuer, CLIENT_ID=client_id, REDIRECT_URI=RP_REDIRECT_URI, PASSWORD=PASSWORD,
               WAIT_MS=str(WAIT_MS), FACTOR_NAMES=json.dumps({w: FACTOR_NAME[lang_of(w)] for w in WALKS}))
    seen = run_browser_program(PROGRAM, env, tmp_path, ARTIFACTS, timeout=RUN_TIMEOUT_S,
                               stale=[*ARTIFACTS.glob("*-[0-9][0-9]-*.png"), *ARTIFACTS.glob("failure.*")])
    return seen, brief_pages(seen, tmp_path)


def test_sessions_applications_and_recovery_codes(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("account", {})
    client_id = server.unique("account-rp")
    server.create_client(client_id=client_id, client_name=CLIENT_NAME, redirect_uris=[RP_REDIRECT_URI],
                         token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"],
                         scope="openid profile email")
    for walk in WALKS:
        server.create_user(f"alice-{walk}", PASSWORD, {"name": "Alice"})
    seen, report = run_program(server, client_id, tmp_path)

    assert [w["name"] for w in seen["walks"]] == WALKS, report
    problems = []
    for walk in WALKS:
        lang = lang_of(walk)
        words = WORDS[lang]
        pages = [p for p in seen["pages"] if p["walk"] == walk]
        assert [p["name"] for p in pages] == PAGES, (walk, report)
        for p in pages:
            where = f"{walk} {p['name']}"
            assert p["status"] == 200 and p["content_language"] == lang and p["html_lang"] == lang, (where, report)
            # Nothing sticks out of its box, and a phone does not scroll sideways.
            if p["out_of_box"]:
                problems.append(f"{where}: sticking out: {p['out_of_box']}")
            if "width" in p and max(p["width"]["scroll_width"], p["width"]["inner_width"]) > 390:
                problems.append(f"{where}: wider than the phone: {p['width']}")
            # The words are the page's language's (names and addresses aside).
            for part in p["parts"]:
                if (part["lang"] or "").split("-")[0] != lang:
                    continue
                text = part["text"]
                for name in (CLIENT_NAME, "Authrim", f"alice-{walk}", FACTOR_NAME["en"]):
                    text = text.replace(name, " ")
                if ENGLISH_PHRASE.search(text) if lang == "ja" else CJK.search(text):
                    problems.append(f"{where}: {part['text']!r} is not in {lang}")
        by = {p["name"]: p for p in pages}
        assert by["account"]["heading"] == words["heading"], (walk, by["account"]["heading"])
        assert words["sessions"] in by["account"]["text"] and words["applications"] in by["account"]["text"], walk
        assert by["recovery-codes"]["heading"] == words["recovery"], walk

        facts = seen["facts"][walk]
        assert facts["phone_code"] is True, (walk, facts)
        # Both sessions: this one first, marked, without a button; the phone's by its name.
        account = facts["account"]
        [this, phone] = account["sessions"]
        assert (this["this"], this["end_label"], this["device"]) == (True, None, words["me"]), (walk, account)
        assert words["this"] in this["text"], (walk, this)
        assert (phone["this"], phone["device"]) == (False, words["phone"]), (walk, account)
        assert words["end"] in phone["end_label"], (walk, phone)
        assert all(ISO.fullmatch(t) for s in (this, phone) for t in s["times"]) and len(phone["times"]) == 2, (walk, account)
        [app] = account["applications"]
        assert app["name"] == CLIENT_NAME and words["scope"] in app["scopes"] and len(app["scopes"]) == 3, (walk, app)
        assert app["withdraw_label"] == words["withdraw"], (walk, app)
        [factor] = account["factors"]
        assert factor["right"] <= factor["card_right"], (walk, factor)
        assert account["notice"] == words["totp"], (walk, account)
        if words["remove"]:
            assert factor["label"] == words["remove"].format(name=FACTOR_NAME[lang]), (walk, factor)
        # A session ended from here is a logout there.
        ended = facts["session_ended"]
        assert ended["notice"] == words["ended"] and [s["this"] for s in ended["sessions"]] == [True], (walk, ended)
        assert facts["session_ended_hash"] == "#sessions", (walk, facts)
        assert facts["phone_after"].get("error") == "login_required", (walk, facts["phone_after"])
        # A withdrawn application asks again.
        withdrawn = facts["withdrawn"]
        assert withdrawn["notice"] == words["withdrawn"] and withdrawn["applications"] == [], (walk, withdrawn)
        assert words["none"] in by["withdrawn"]["text"], walk
        assert facts["next_request"]["consent_form"] == 1, (walk, facts["next_request"])
        assert facts["user_redirects"] == 0, (walk, "no code without consent")
        # The codes: downloaded as a text file, printed without the controls.
        dl = facts["download"]
        assert dl["failure"] is None and dl["file"] == "recovery-codes-127.0.0.1.txt", (walk, dl)
        lines = dl["text"].split("\n")
        assert lines[0] == words["file"].format(walk=walk), (walk, dl["text"])
        assert len(dl["codes"]) == 10 and lines[-11:] == [*dl["codes"], ""], (walk, dl)
        assert facts["print_button"] == {"visible": True, "text": words["print"]}, (walk, facts["print_button"])
        assert facts["printed"] == 1, (walk, facts)
        assert facts["print"] == {"codes_visible": 10, "heading_visible": True, "controls_visible": []}, (walk, facts["print"])
    assert not problems, "\n".join(problems)

    axed = [p for p in seen["pages"] if "axe" in p]
    check_axe(seen, axed, [(w, p) for w in WALKS if w.startswith("axe-") for p in AXE_PAGES],
              PROGRAM.parent / "package.json", report)
    warn_without_japanese_font(seen)
    shots = [f"{w}-{n:02d}-{p}.png" for w in WALKS if not w.startswith("axe-") for n, p in enumerate(PAGES, 1)]
    assert seen["screenshots"] == shots, report
    # The download's navigation ends as Chromium ends one that becomes a download (aborted);
    # nobody serves the client's redirect URI, which the phone is sent to with its code.
    # An image or style sheet still loading when the walk moves on is aborted by Chromium
    # (net::ERR_ABORTED, seen on a busy machine for the header's logo): not a failure of ours.
    failed = [r for r in seen["failed_requests"]
              if (urlsplit(r["url"]).path, r["error"]) != ("/account/recovery-codes/download", "net::ERR_ABORTED")
              and not (r["error"] == "net::ERR_ABORTED" and urlsplit(r["url"]).path.startswith("/assets/"))
              and not (r["who"] == "phone" and r["url"].startswith(RP_REDIRECT_URI + "?code="))]
    assert failed == [], report
    check_browser_clean(seen, report, set())
