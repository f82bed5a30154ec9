"""The forgotten password, with a real SMTP server: Python's aiosmtpd (pinned in
``requirements.txt``) receives what Authrim sends (``AUTHRIM_SMTP_URL=smtp://127.0.0.1:PORT``),
and every message is decoded with Python's ``email`` package (``mail_walks.py``, shared with
``test_signup.py``).

- ``test_reset_in_english_and_japanese``: ``browser/reset.mjs`` (see its header) in Debian's
  Chromium, an English and a Japanese browser: from an application's authorization request,
  "Forgot your password?", an address nobody has (the same page, no mail), the user's address
  (the mail: envelope, From with a non-ASCII display name, To, Subject, ``text/plain;
  charset=utf-8``, the sentence with the link's lifetime, the one link, on the issuer), the link
  (the form), two passwords that differ (422, the alert focused), the new password (200; the
  user's other device signed out: its ``/account`` asks to sign in again, the admin API lists no
  session), the link again (400 "does not work"), the old password at the authorization request
  (401 with its error), the new one through consent to the client's redirect URI with a code,
  redeemed at the token endpoint (the ID token verified against the JWKS: the user, the client,
  the nonce). Each page's status, ``Content-Language``, ``<html lang>``, title, heading, labels,
  focus and wording in its language (no English in a Japanese page nor Japanese in an English
  one unless marked with ``lang``). The mail is in the account's language (its ``locale``
  claim), not the browser's: a user with ``locale`` ``ja`` asking from an English browser gets
  it in Japanese, one without a locale asking from a Japanese browser in English (the default).
  The same walks in ``bypassCSP`` contexts run axe-core (as ``test_pages.py`` does, after its
  control page) on the forgot, sent, reset, mismatch, done and "does not work" pages in the
  light and dark themes: no violation of the WCAG 2.0/2.1/2.2 A and AA rules. No CSP violation,
  page error, failed request or console error but Chromium's own line for the pages answered
  with 400, 401 and 422 on purpose. Screenshots go to ``target/e2e-artifacts/reset/``.
- ``test_reset_requests_are_throttled``: with ``requests`` and ``AUTHRIM_TRUST_PROXY`` (each
  request's address from ``X-Forwarded-For``): six requests from one address (the sixth a 429
  page, even for an existing account, and no mail for it), six for one account from six
  addresses (five mails, the sixth request 429) and the same for a name nobody has (429 too:
  the throttle tells nothing about which accounts exist); the pages in French.
- ``test_reset_is_off_without_smtp``: no link on the login page, 404 at the reset pages.
- ``test_reset_mail_is_well_formed``: the message as RFC 5322 and RFC 2045 want it (``Date``,
  ``Message-ID``, ``MIME-Version``, ASCII headers with encoded words, CRLF, short lines) and
  plain text: a product name with ``&`` and ``'`` (``AUTHRIM_PRODUCT_NAME``) appears as such in
  the default From, the Subject and the body, not as HTML entities.
- ``test_reset_when_the_mail_server_is_down``: Authrim starts pointing at a port where nothing
  listens; a reset is asked for (the first delivery fails at once), then aiosmtpd starts on that
  port and the mail still arrives, by the outbox's retry (waits doubling "from 30 s" as the
  docs/configuration.md documents: the test waits up to 45 s, and checks that it was a retry), with a link that
  works.
"""

from __future__ import annotations

import json
import re
import time
from email import message_from_bytes, policy
from email.headerregistry import Address
from pathlib import Path

import pytest
import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, _free_port, TIME_SCALE
from mail_walks import (QUIET_S, Checker, Mailbox, check_axe, check_error_page, check_mail, check_page,
                        check_screenshots, check_walks, decode, describe, form_token, heading, html_text, login_page,
                        other_language, run_program, sender_host)
from test_browser import needs_browser
from test_pages import warn_without_japanese_font
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "reset.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "reset"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 120 * TIME_SCALE  # the whole program (it gives up by itself after 100 s; both times TIME_SCALE)
OLD_PASSWORD = "the password alice forgot"
NEW_PASSWORD = "a new password, chosen by mail"
CLIENT_NAME = "Example App"
MAIL_FROM = "Authrim アカウント <accounts@example.com>"
TTL_MINUTES = 30  # AUTHRIM_PASSWORD_RESET_TTL's default, 1800 s

# The walks (reset.mjs): the browser's locale, and the walk's extra person (asked for by
# username after the walk: see MAIL_LANG).
WALKS = {"en": "en-US", "ja": "ja-JP", "axe-en": "en-US", "axe-ja": "ja-JP"}
# The pages of a walk, in order: (method, path, status).
WALK = {
    "login": ("GET", "/authorize", 200),
    "forgot": ("GET", "/login/forgot", 200),
    "sent-unknown": ("POST", "/login/forgot", 200),
    "sent": ("POST", "/login/forgot", 200),
    "reset": ("GET", "/login/reset", 200),
    "reset-mismatch": ("POST", "/login/reset", 422),
    "reset-done": ("POST", "/login/reset", 200),
    "link-spent": ("GET", "/login/reset", 400),
    "login-old-password": ("POST", "/login", 401),
    "consent": ("GET", "/consent", 200),
}
AXE_PAGES = ["forgot", "sent", "reset", "reset-mismatch", "reset-done", "link-spent"]
# Errors the walks cause on purpose: (path, status).
DELIBERATE = {("/login/reset", 422), ("/login/reset", 400), ("/login", 401)}

# As src/ui/locales/<lang>.ftl words them.
WORDS = {
    "en": {
        "forgot-link": "Forgot your password?",
        "forgot-title": "Reset your password",
        "forgot-intro": "Enter your username or e-mail address. If there is an account, we send a link to set a new password to its e-mail address.",
        "forgot-submit": "Send the link",
        "login-field": "Username or e-mail",
        "sent": "If there is an account with that name, a link to set a new password is on its way to its e-mail address.",
        "reset-title": "Set a new password",
        "reset-submit": "Set the password",
        "new": "New password (at least 8 characters)",
        "confirm": "New password again",
        "mismatch": "The two new passwords are not the same.",
        "done": "Your password was changed, and every session of your account was signed out. Return to the application and sign in with the new password.",
        "error-heading": "This request cannot be completed",
        "error-title": "Error",
        "link-spent": "This link does not work: it was already used, or it expired. Ask for a new one from the sign-in page.",
        "login": "Sign in",
        "incorrect": "Incorrect username or password.",
        "consent": f"Allow {CLIENT_NAME} access?",
        "consent-title": "Allow access",
        "too-many": "Too many requests from here. Wait a few minutes and try again.",
        "subject": "Reset your Authrim password",
        "mail": [f"Someone asked to reset the password of your Authrim account. To set a new password, "
                 f"open this link within {TTL_MINUTES} minutes:",
                 "If it was not you, ignore this message: your password stays as it is."],
    },
    "ja": {
        "forgot-link": "パスワードをお忘れですか?",
        "forgot-title": "パスワードの再設定",
        "forgot-intro": "ユーザー名またはメールアドレスを入力してください。アカウントがあれば、新しいパスワードを設定するためのリンクをそのメールアドレスに送ります。",
        "forgot-submit": "リンクを送信",
        "login-field": "ユーザー名またはメールアドレス",
        "sent": "その名前のアカウントがあれば、新しいパスワードを設定するためのリンクをメールアドレスに送信しました。",
        "reset-title": "新しいパスワードの設定",
        "reset-submit": "パスワードを設定",
        "new": "新しいパスワード（8 文字以上）",
        "confirm": "新しいパスワード（確認）",
        "mismatch": "2 つの新しいパスワードが一致しません。",
        "done": "パスワードを変更し、アカウントのすべてのセッションをサインアウトしました。アプリケーションに戻り、新しいパスワードでサインインしてください。",
        "error-heading": "このリクエストを完了できません",
        "error-title": "エラー",
        "link-spent": "このリンクは使えません。すでに使われたか、期限が切れています。サインインページから新しいリンクを依頼してください。",
        "login": "サインイン",
        "incorrect": "ユーザー名またはパスワードが正しくありません。",
        "consent": f"{CLIENT_NAME} にアクセスを許可しますか？",
        "consent-title": "アクセスの許可",
        "subject": "Authrim のパスワードの再設定",
        "mail": [f"Authrim アカウントのパスワードの再設定が依頼されました。新しいパスワードを設定するには、"
                 f"{TTL_MINUTES} 分以内に次のリンクを開いてください:",
                 "心当たりがない場合は、このメールを無視してください。パスワードは変わりません。"],
    },
    "fr": {
        "forgot-title": "Réinitialiser votre mot de passe",
        "forgot-submit": "Envoyer le lien",
        "sent": "Si un compte porte ce nom, un lien pour choisir un nouveau mot de passe est en route vers son adresse e-mail.",
        "reset-title": "Choisir un nouveau mot de passe",
        "link-spent": "Ce lien ne fonctionne pas : il a déjà servi, ou il a expiré. Demandez-en un nouveau depuis la page de connexion.",
    },
}



def page_words(lang: str, name: str) -> tuple[str, str, str]:
    """A page's title (before `` · Authrim``), heading and a sentence it must say."""
    w = WORDS[lang]
    return {
        "login": (w["login"], w["login"], w["forgot-link"]),
        "forgot": (w["forgot-title"], w["forgot-title"], w["forgot-intro"]),
        "sent-unknown": (w["forgot-title"], w["forgot-title"], w["sent"]),
        "sent": (w["forgot-title"], w["forgot-title"], w["sent"]),
        "reset": (w["reset-title"], w["reset-title"], w["new"]),
        "reset-mismatch": (w["reset-title"], w["reset-title"], w["mismatch"]),
        "reset-done": (w["reset-title"], w["reset-title"], w["done"]),
        "link-spent": (w["error-title"], w["error-heading"], w["link-spent"]),
        "login-old-password": (w["login"], w["login"], w["incorrect"]),
        "consent": (w["consent-title"], w["consent"], CLIENT_NAME),
    }[name]


# ---------------------------------------------------------------------------------------------
# The mail.


def check_reset_mail(d: dict, *, to: str, lang: str, issuer: str, sender: Address, report: str) -> str:
    """One reset mail (mail_walks.check_mail): in ``lang``, its link to ``/login/reset``."""
    return check_mail(d, to=to, sender=sender, subject=WORDS[lang]["subject"], sentences=WORDS[lang]["mail"], lang=lang,
                      issuer=issuer, path="/login/reset", where=report)


def sessions_op(server):
    """The checker's op ``sessions``: a user's sessions, counted through the admin API."""
    def count(body: dict) -> dict:
        resp = requests.get(server.url(f"/admin/users/{body['user']}/sessions"),
                            headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=HTTP_TIMEOUT_S)
        return {"status": resp.status_code, "count": len(resp.json().get("sessions", []))}
    return count


# ---------------------------------------------------------------------------------------------
# Helpers.


def add_user(server, username: str, email: str, locale: str | None = None) -> dict:
    claims = {"email": email, "email_verified": True, "name": username}
    if locale:
        claims["locale"] = locale
    return server.create_user(username, OLD_PASSWORD, claims)


def forgot(server, login: str, *, session: requests.Session | None = None, headers: dict | None = None) -> requests.Response:
    """``GET /login/forgot`` (its form token, sealed to the browser cookie), then ``POST`` it
    with ``login``, as a browser would."""
    s = session or requests.Session()
    form = form_token(s.get(server.url("/login/forgot"), headers=headers, timeout=HTTP_TIMEOUT_S))
    return s.post(server.url("/login/forgot"), data={"form": form, "login": login},
                  headers=headers, timeout=HTTP_TIMEOUT_S, allow_redirects=False)


# ---------------------------------------------------------------------------------------------
# 1-4. The walk in Chromium.


def run_reset(server, checker: Checker, client: dict, users: dict, tmp_path: Path) -> tuple[dict, str]:
    """Run ``reset.mjs`` (mail_walks.run_program): what it printed, and a report."""
    return run_program(PROGRAM, ARTIFACTS, {
        "ISSUER": server.issuer, "CLIENT_ID": client["client_id"], "REDIRECT_URI": client["redirect_uri"],
        "USERS": json.dumps(users), "OLD_PASSWORD": OLD_PASSWORD, "NEW_PASSWORD": NEW_PASSWORD, "WAIT_MS": str(WAIT_MS),
    }, checker, tmp_path, RUN_TIMEOUT_S)


# Whose mail is in which language: the account's locale claim, else the default (en), whatever
# the browser asking for it speaks.
MAIL_LANG = {"alice-en": "en", "alice-ja": "ja", "alice-axe-en": "en", "alice-axe-ja": "en",
             "yuki-en": "ja", "bob-ja": "en"}


def test_reset_in_english_and_japanese(start_authrim, tmp_path):
    needs_browser()
    mailbox = Mailbox().start()
    checker = None
    try:
        server = start_authrim("reset", {"AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_MAIL_FROM": MAIL_FROM,
                                         # four walks from 127.0.0.1, each asking up to three times
                                         "AUTHRIM_PASSWORD_RESET_MAX_REQUESTS": "20"})
        users = {}
        for walk in WALKS:
            name = f"alice-{walk}"
            alice = add_user(server, name, f"{name}@example.com", MAIL_LANG[name] if MAIL_LANG[name] == "ja" else None)
            users[walk] = {"alice": {"username": name, "email": f"{name}@example.com", "id": alice["id"]}}
        for walk, who in (("en", "yuki"), ("ja", "bob")):
            name = f"{who}-{walk}"
            user = add_user(server, name, f"{name}@example.com", "ja" if MAIL_LANG[name] == "ja" else None)
            users[walk][who] = {"username": name, "email": f"{name}@example.com", "id": user["id"]}
        client = {"client_id": server.unique("reset-rp")}
        checker = Checker(server, mailbox, client, {"sessions": sessions_op(server)})  # `client`: filled in below
        client["redirect_uri"] = checker.origin + "/cb"
        reg = server.create_client(client_id=client["client_id"], client_name=CLIENT_NAME,
                                   redirect_uris=[client["redirect_uri"]], token_endpoint_auth_method="client_secret_basic",
                                   grant_types=["authorization_code"], scope="openid email")
        client["client_secret"] = reg["client_secret"]
        seen, report = run_reset(server, checker, client, users, tmp_path)
        time.sleep(QUIET_S)  # a mail that should not come (to nobody-*) has had its time
        received = mailbox.recipients()
    finally:
        if checker:
            checker.close()
        mailbox.stop()

    # The walks, their pages in order, each reached the way it should be.
    check_walks(seen, WALKS, lambda walk: WALK, report)

    pages = {(p["walk"], p["name"]): p for p in seen["pages"]}
    for (walk, name), p in pages.items():
        lang = walk.rsplit("-", 1)[-1]
        w = WORDS[lang]
        where = (walk, name)
        check_page(p, lang, *page_words(lang, name))
        f = p["fields"]
        # What each page asks for, labelled; what it says, and where the focus is.
        if name == "login":
            forgot = [ln for ln in f["links"] if ln["href"].startswith("/login/forgot")]
            assert [ln["text"] for ln in forgot] == [w["forgot-link"]], (where, f)
            # It carries the application's request, so that a reset resumes it.
            assert forgot[0]["href"].startswith("/login/forgot?challenge="), (where, f)
        elif name == "forgot":
            assert f["inputs"] == [{"id": "login", "name": "login", "type": "text", "autocomplete": "username",
                                    "required": True, "value_length": 0, "labels": [w["login-field"]]}], (where, f)
            assert f["hidden"] == [{"name": "form", "has_value": True}, {"name": "challenge", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["forgot-submit"], "type": "submit", "form_action": "/login/forgot"}], (where, f)
            assert (p["focused"] or {}).get("id") == "login", (where, p["focused"])
            assert p["alerts"] == [], (where, p["alerts"])
        elif name in ("sent", "sent-unknown"):
            assert p["statuses"] == [w["sent"]] and p["alerts"] == [], (where, p["statuses"], p["alerts"])
            assert f["inputs"] == [] and f["buttons"] == [], (where, f)
        elif name in ("reset", "reset-mismatch"):
            assert [(i["id"], i["name"], i["type"], i["autocomplete"], i["required"], i["value_length"], i["labels"])
                    for i in f["inputs"]] == [
                ("new_password", "new_password", "password", "new-password", True, 0, [w["new"]]),
                ("confirm_password", "confirm_password", "password", "new-password", True, 0, [w["confirm"]])], (where, f)
            assert f["hidden"] == [{"name": "form", "has_value": True}, {"name": "token", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["reset-submit"], "type": "submit", "form_action": "/login/reset"}], (where, f)
            if name == "reset":
                assert (p["focused"] or {}).get("id") == "new_password", (where, p["focused"])
                assert p["alerts"] == [], (where, p["alerts"])
            else:
                # The alert says why, has the focus (role=alert, tabindex=-1), Tab goes on to the
                # first field; the passwords typed are not sent back.
                assert p["alerts"] == [w["mismatch"]], (where, p["alerts"])
                fo = p["focused"] or {}
                assert (fo.get("tag"), fo.get("role"), fo.get("tabindex"), fo.get("text")) == (
                    "p", "alert", "-1", w["mismatch"]), (where, fo)
                assert seen["facts"][walk]["tab_after_alert"]["id"] == "new_password", (where, seen["facts"][walk])
        elif name == "reset-done":
            assert p["statuses"] == [w["done"]] and p["alerts"] == [], (where, p["statuses"])
            assert f["inputs"] == [], (where, f)
        elif name == "link-spent":
            assert p["alerts"] == [w["link-spent"]], (where, p["alerts"])
            assert f["inputs"] == [] and f["hidden"] == [], (where, f)
        elif name == "login-old-password":
            assert p["alerts"] == [w["incorrect"]], (where, p["alerts"])
            assert seen["facts"][walk]["old_password_username_kept"] == f"alice-{walk}", (where, seen["facts"][walk])
    # An address nobody has: the very same page as for the user's.
    for walk in WALKS:
        known, unknown = pages[(walk, "sent")], pages[(walk, "sent-unknown")]
        assert (known["status"], known["title"], known["text"]) == (unknown["status"], unknown["title"], unknown["text"]), walk

    # Signed in again with the new password, all the way to the client's redirect URI with a
    # code, which the token endpoint redeems for an ID token of this user, for this client.
    for walk in WALKS:
        facts = seen["facts"][walk]
        assert facts["callback"] == {"status": 200, "path": "/cb", "state_ok": True, "has_code": True,
                                     "error": None, "iss": server.issuer}, (walk, facts, report)
        assert facts["redeemed"] == {"status": 200, "error": None, "sub": users[walk]["alice"]["id"],
                                     "aud": client["client_id"], "iss": server.issuer, "nonce_ok": True}, (walk, facts)
    # The user's other device, signed in with the old password: signed out by the reset.
    for walk in ("en", "ja"):
        facts = seen["facts"][walk]
        assert facts["device_before"] == {"path": "/account", "status": 200}, (walk, facts)
        assert facts["sessions_before"]["status"] == 200 and facts["sessions_before"]["count"] >= 1, (walk, facts)
        assert facts["sessions_after"] == {"status": 200, "count": 0}, (walk, facts)
        assert facts["device_after"] == {"path": "/authorize", "status": 200, "heading": WORDS[walk]["login"],
                                         "has_password_field": 1}, (walk, facts)
        # Forgotten again from the application's sign-in page: the new password set there
        # went on with that request, to a code for this user.
        assert facts["resume_form_challenge"] == 1, (walk, facts)
        assert facts["resumed"] == {"status": 200, "path": "/cb", "state_ok": True, "has_code": True}, (walk, facts)
        assert facts["resume_redeemed"] == {"status": 200, "error": None, "sub": users[walk]["alice"]["id"],
                                            "aud": client["client_id"], "iss": server.issuer, "nonce_ok": True}, (walk, facts)

    # The mails: one per request for an account, none for the address nobody has, each in its
    # account's language, From, To, Subject, charset and link as they should be, and the link
    # the browser opened the one in the mail.
    expected = [["alice-en@example.com"], ["yuki-en@example.com"], ["alice-en@example.com"],
                ["alice-ja@example.com"], ["bob-ja@example.com"], ["alice-ja@example.com"],
                ["alice-axe-en@example.com"], ["alice-axe-ja@example.com"]]
    assert received == expected, (received, report)
    sender = Address("Authrim アカウント", addr_spec="accounts@example.com")  # MAIL_FROM
    mails = checker.mails
    links = []
    for (walk, label), d in sorted(mails.items()):
        who = users[walk]["alice"] if label in ("mail", "mail-resume") else users[walk][{"en": "yuki", "ja": "bob"}[walk]]
        link = check_reset_mail(d, to=who["email"], lang=MAIL_LANG[who["username"]], issuer=server.issuer,
                                sender=sender, report=describe([d]))
        facts = seen["facts"][walk]
        given = {"mail": facts.get("link"), "mail-resume": facts.get("resume_link")}.get(label) or facts["extra"]["link"]
        assert link == given, (walk, label, link, given)
        links.append(link)
    assert len(mails) == 8 and len(set(links)) == 8, describe(list(mails.values()))

    # axe-core: the harness first, then every reset page in both languages and themes.
    check_axe(seen, [p for p in seen["pages"] if p.get("axe")], [(w, n) for w in ("axe-en", "axe-ja") for n in AXE_PAGES],
              PROGRAM.parent / "package.json", report)

    # Wording: nothing in another language unless marked so.
    names = [CLIENT_NAME, "Authrim", "OpenID Connect"] + [u["username"] for people in users.values() for u in people.values()]
    wording = [line for p in seen["pages"] for line in other_language(p, p["walk"].rsplit("-", 1)[-1], names)]
    assert not wording, "pages' wording:\n" + "\n".join(wording)

    # Screenshots of every page of the en and ja walks.
    warn_without_japanese_font(seen)
    shots = [f"{walk}-{n:02d}-{name}.png" for walk in ("en", "ja") for n, name in enumerate(WALK, 1)]
    check_screenshots(seen, ARTIFACTS, shots, report)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


# ---------------------------------------------------------------------------------------------
# 5. The throttle, and the pages in French, with requests.


def test_reset_requests_are_throttled(start_authrim):
    mailbox = Mailbox().start()
    try:
        server = start_authrim("reset-throttle", {"AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_TRUST_PROXY": "true"})
        carol = "carol@example.com"
        add_user(server, "carol", carol)
        en = WORDS["en"]
        sent = {}

        # One address: five requests (for names nobody has), then a 429 page, even for carol.
        for n in range(1, 6):
            resp = forgot(server, f"ghost-{n}", headers={"X-Forwarded-For": "203.0.113.7"})
            assert resp.status_code == 200 and en["sent"] in html_text(resp.text), (n, resp.status_code, resp.text)
            sent["unknown"] = html_text(resp.text)
        check_error_page(forgot(server, "carol", headers={"X-Forwarded-For": "203.0.113.7"}), 429, "en", en["too-many"])
        assert heading(forgot(server, "ghost-6", headers={"X-Forwarded-For": "203.0.113.7"}).text) == en["error-heading"]

        # One account, from five addresses (by username or e-mail address): five mails; the
        # sixth request is refused and sends nothing.
        for n in range(1, 6):
            resp = forgot(server, "carol" if n % 2 else carol, headers={"X-Forwarded-For": f"198.51.100.{n}"})
            assert resp.status_code == 200, (n, resp.status_code, resp.text)
            sent["carol"] = html_text(resp.text)
        check_error_page(forgot(server, carol, headers={"X-Forwarded-For": "198.51.100.6"}), 429, "en", en["too-many"])
        # The same for a name nobody has: the throttle says nothing about who has an account.
        for n in range(1, 6):
            resp = forgot(server, "ghost@example.com", headers={"X-Forwarded-For": f"192.0.2.{n}"})
            assert resp.status_code == 200, (n, resp.status_code, resp.text)
        check_error_page(forgot(server, "ghost@example.com", headers={"X-Forwarded-For": "192.0.2.6"}), 429, "en",
                         en["too-many"])
        assert sent["carol"] == sent["unknown"], sent

        # The pages in French (another address: the throttle is per address).
        fr = {"Accept-Language": "fr-FR,fr;q=0.9", "X-Forwarded-For": "192.0.2.50"}
        page = requests.get(server.url("/login/forgot"), headers=fr, timeout=HTTP_TIMEOUT_S)
        assert page.status_code == 200 and page.headers.get("Content-Language") == "fr", page.text
        assert heading(page.text) == WORDS["fr"]["forgot-title"] and WORDS["fr"]["forgot-submit"] in page.text, page.text
        assert f"<title>{WORDS['fr']['forgot-title']} · Authrim</title>" in page.text, page.text
        resp = forgot(server, "ghost-fr", headers=fr)
        assert resp.status_code == 200 and WORDS["fr"]["sent"] in html_text(resp.text), resp.text
        check_error_page(requests.get(server.url("/login/reset?token=nothing-like-a-token"), headers=fr,
                                      timeout=HTTP_TIMEOUT_S), 400, "fr", WORDS["fr"]["link-spent"])
        check_error_page(requests.get(server.url("/login/reset"), timeout=HTTP_TIMEOUT_S), 400, "en", en["link-spent"])

        # Exactly five mails, all to carol, from the default sender (PRODUCT <noreply@ISSUER-HOST>).
        mails = [decode(mailbox.next_to(carol)) for _ in range(5)]
        time.sleep(QUIET_S)
        assert mailbox.recipients() == [[carol]] * 5, (mailbox.recipients(), describe(mails))
        default = Address("Authrim", addr_spec=f"noreply@{sender_host(server)}")
        links = {check_reset_mail(d, to=carol, lang="en", issuer=server.issuer, sender=default, report=describe([d])) for d in mails}
        assert len(links) == 5, describe(mails)
    finally:
        mailbox.stop()


def test_reset_is_off_without_smtp(authrim_server):
    """No ``smtp_url``: no link on the login page, and the reset pages answer 404."""
    login = login_page(authrim_server, "no-mail-rp")
    assert "/login/forgot" not in login.text and WORDS["en"]["forgot-link"] not in login.text, login.text
    for path in ("/login/forgot", "/login/reset?token=x"):
        resp = requests.get(authrim_server.url(path), timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 404 and "Password reset is not available here." in html_text(resp.text), (path, resp.text)
    resp = requests.post(authrim_server.url("/login/forgot"), data={"login": "alice"}, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 404, resp.text


# ---------------------------------------------------------------------------------------------
# The message itself, as the RFCs want it.


def test_reset_mail_is_well_formed(start_authrim):
    """RFC 5322 (``Date``, ``Message-ID``, ASCII headers, CRLF, lines of at most 998
    characters), RFC 2045 (``MIME-Version`` with its ``Content-Type`` and transfer encoding)
    and RFC 2047 (encoded words for Japanese), and plain text: a product name with ``&`` and
    ``'`` as such in From, Subject and body, not as HTML entities. Every problem at once."""
    product = "Tom & Jerry's"
    mailbox = Mailbox().start()
    try:
        server = start_authrim("reset-mail", {"AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_PRODUCT_NAME": product})
        add_user(server, "dora", "dora@example.com")
        add_user(server, "kenji", "kenji@example.com", "ja")
        for login in ("dora", "kenji@example.com"):
            assert forgot(server, login).status_code == 200
        received = {to: mailbox.next_to(to) for to in ("dora@example.com", "kenji@example.com")}
    finally:
        mailbox.stop()

    problems = []
    for to, m in received.items():
        raw: bytes = m["raw"]
        head, _, body = raw.partition(b"\r\n\r\n")
        msg = message_from_bytes(raw, policy=policy.default)
        d = decode(m)
        lang = "ja" if to.startswith("kenji") else "en"
        where = f"mail to {to}"
        if not head or b"\n" in head.replace(b"\r\n", b""):
            problems.append(f"{where}: lines not ended by CRLF")
        if any(b > 127 for b in head):
            problems.append(f"{where}: 8-bit header bytes (RFC 5322 wants ASCII; non-ASCII as RFC 2047 encoded words)")
        if any(len(line) > 998 for line in raw.split(b"\r\n")):
            problems.append(f"{where}: a line longer than 998 characters")
        for name in ("Date", "From", "To", "Subject"):
            if msg[name] is None:
                problems.append(f"{where}: no {name} header")
        if msg["Message-ID"] is None or not re.fullmatch(r"<[^<>@\s]+@[^<>@\s]+>", str(msg["Message-ID"]).strip()):
            problems.append(f"{where}: no Message-ID header (RFC 5322 3.6.4: every message SHOULD have one; large "
                            f"receivers such as Gmail refuse or junk mail without it): {msg['Message-ID']!r}")
        if (msg["MIME-Version"] or "").strip() != "1.0":
            problems.append(f"{where}: no 'MIME-Version: 1.0' header, yet Content-Type "
                            f"{msg['Content-Type']!r} and Content-Transfer-Encoding "
                            f"{msg['Content-Transfer-Encoding']!r} (RFC 2045 section 4: MUST)")
        if (d["content_type"], d["charset"]) != ("text/plain", "utf-8"):
            problems.append(f"{where}: Content-Type {msg['Content-Type']!r}")
        if (d["from_name"], d["from_addr"]) != (product, f"noreply@{sender_host(server)}"):
            problems.append(f"{where}: From {msg['From']!r}, not {product!r} <noreply@…> (the documented default)")
        subject = {"en": f"Reset your {product} password", "ja": f"{product} のパスワードの再設定"}[lang]
        if d["subject"] != subject:
            problems.append(f"{where}: Subject {d['subject']!r}, not {subject!r}")
        mentions = {"en": f"your {product} account", "ja": f"{product} アカウント"}[lang]
        if mentions not in (d["body"] or ""):
            problems.append(f"{where}: the body does not say {mentions!r}: {d['body']!r}")
        if re.search(r"&(amp|lt|gt|quot|#\d+);", (d["body"] or "") + d["subject"]):
            problems.append(f"{where}: HTML entities in a text/plain message: subject {d['subject']!r}, body {d['body']!r}")
        if len(d["links"]) != 1:
            problems.append(f"{where}: {len(d['links'])} links: {d['body']!r}")
    assert not problems, "the reset mail:\n" + "\n".join(problems) + "\n" + describe(
        [{**decode(m), "raw": None, "raw_head": m["raw"].partition(b"\r\n\r\n")[0].decode("ascii", "replace")}
         for m in received.values()])


# ---------------------------------------------------------------------------------------------
# 6. A mail server that is down when the reset is asked for.

RETRY_WAIT_S = 45  # the first retry is documented "from 30 s" (docs/configuration.md: AUTHRIM_MAIL_MAX_ATTEMPTS)
LATE_WAIT_S = 30  # past that, how much longer to wait only to say when it came, on a failure


def test_reset_when_the_mail_server_is_down(start_authrim):
    mailbox = Mailbox(_free_port())  # not started: nothing listens on its port yet
    try:
        server = start_authrim("reset-down", {"AUTHRIM_SMTP_URL": mailbox.url})
        add_user(server, "erin", "erin@example.com")
        asked = time.monotonic()
        resp = forgot(server, "erin")
        # The page does not wait for the mail server.
        assert resp.status_code == 200 and WORDS["en"]["sent"] in html_text(resp.text), resp.text
        assert time.monotonic() - asked < 5, "the request waited for the mail server"
        time.sleep(3)  # the outbox, woken by the request, has tried once (connection refused)
        mailbox.start()
        m = came = None
        try:
            m = mailbox.next_to("erin@example.com", timeout=RETRY_WAIT_S - (time.monotonic() - asked))
        except AssertionError:
            # Only to say when it came, if it did.
            try:
                came = f"it came {mailbox.next_to('erin@example.com', timeout=LATE_WAIT_S)['at'] - asked:.0f} s after the request"
            except AssertionError:
                came = f"nor within {RETRY_WAIT_S + LATE_WAIT_S} s"
        if m is None:
            pytest.fail(f"the mail did not come within {RETRY_WAIT_S} s of the request, with the mail server up "
                        f"from the 3rd second (docs/configuration.md: retries wait 'doubling from 30 s'); {came}", pytrace=False)
        # It came by a retry, not by a first attempt made late.
        assert m["at"] - asked >= 20, f"the mail came {m['at'] - asked:.1f} s after the request: no first attempt?"
        d = decode(m)
        link = check_reset_mail(d, to="erin@example.com", lang="en", issuer=server.issuer,
                                sender=Address("Authrim", addr_spec=f"noreply@{sender_host(server)}"),
                                report=describe([d]))
        form = requests.get(link, timeout=HTTP_TIMEOUT_S)
        assert form.status_code == 200 and 'name="new_password"' in form.text, form.text
    finally:
        mailbox.stop()
