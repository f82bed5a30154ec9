"""Self-registration with e-mail verification, with a real SMTP server: Python's aiosmtpd
(pinned in ``requirements.txt``) receives what Authrim sends, and every message is decoded with
Python's ``email`` package (``mail_walks.py``, shared with ``test_reset.py``).

- ``test_signup_in_english_and_japanese``: ``browser/signup.mjs`` (see its header) in Debian's
  Chromium, an English and a Japanese browser, with ``signup_required = "email name"``,
  ``password_min_length = 10`` and a ``breached_passwords_file`` the test writes: from an
  application's authorization request, the login page's one link to sign up,
  ``/signup?challenge=<the sealed request>``; the form (labels, the optional fields marked,
  focus, the challenge in a hidden field); two passwords that differ, a password too short
  (held back by the browser's own check, then refused by the server's), one from the breached
  list, the required name as spaces: each 422, the form again as typed (but the passwords,
  and keeping the challenge) with its reason in an alert that has the focus; the form right:
  "check your mail" and a mail (To, Subject, ``text/plain; charset=utf-8``, in the form's
  language, the one link, on the issuer); before it is confirmed the account does not sign in
  (401) and the admin API lists nobody; the link (GET) shows a button and still creates
  nobody; the button (POST) creates the user with ``email_verified`` and, as ``locale``, the
  language the browser asked for (``en`` for ``en-US``, ``ja`` for ``ja-JP``). In the English
  walk the button is pressed in the browser context that signed up: it signs her in and goes
  on with the application's request (303 to consent, no sign-in), then the link again: "does
  not work" (400). In the others the link is confirmed in another context: "Your account is
  ready" (and that context is signed in to nothing), the link again 400, and back in the
  first context the account signs in with its password to consent. Either way Allow leads to
  the client's redirect URI with a code and the request's state, redeemed at the token
  endpoint (the ID token verified against the JWKS: sub, aud, iss, nonce, and, asked for with
  the ``claims`` parameter, email, ``email_verified`` true, name and locale; the same at
  userinfo with the access token). Then names someone has (issue 30, defect 4: nothing at
  ``POST /signup`` tells which are taken): someone's address (typed in capitals) gets the same
  "check your mail" page, no link, and nobody is made; its owner gets a notice (To the
  owner's address as the account has it; Subject and body word for word in the owner's
  language, the account's ``locale`` or else the default, not the form's: walks "en" and
  "axe-ja" have owners of the other language; naming the owner's username; one link, to
  ``/login/forgot`` on the issuer, none to ``/signup/verify``). Someone's username (from a new
  authorization request, in a browser of its own) gets the same page again and a link to the
  fresh address, whose page answers 409: the name was taken, another one and the sign-up's
  password asked for (the username field holding the taken name, the alert focused); a free
  name with a wrong password 409 (nothing made), the taken name in capitals with the right
  password 409 again; a free name with the right password makes the account under it (the
  sign-up's address, verified, its name and locale; the taken name's owner as they were) and,
  in the browser that signed up, signs it in and goes on with the request (303 to consent),
  its code redeemed for this user; then the link is spent (400). The mails: exactly these,
  in order (each inbox well under ``mail_max_per_recipient``). On each page the status,
  ``Content-Language``,
  ``<html lang>``, title, heading and wording in its language (no English in a Japanese page
  nor Japanese in an English one unless marked with ``lang``). The same walks in ``bypassCSP``
  contexts run axe-core (after the control page, as ``test_pages.py`` does) on the form, an
  error form, the missing-field form, the sent, confirm, done and "does not work" pages in the
  light and dark themes, and on the confirmation page of a taken username (409) and its wrong
  password (409): no violation of the WCAG 2.0/2.1/2.2 A and AA rules. A phone (390x844)
  shows the form and an error form without horizontal scroll. No CSP violation, page error,
  failed request or console error but Chromium's own line for the 401, 422, 400 and
  confirmation 409 pages.
  Screenshots go to ``target/e2e-artifacts/signup/``.
- ``test_signup_is_throttled_per_address``: with ``requests`` and ``AUTHRIM_TRUST_PROXY``
  (each request's address from ``X-Forwarded-For``): ``signup_max_per_address`` sign-ups from
  one address, then 429 (in English, and in French for a French browser) and no mail; another
  address still signs up.
- ``test_signup_is_off_by_default``: no link starting with ``/signup`` on the login page, 404 at
  ``/signup`` and ``/signup/verify``.
"""

from __future__ import annotations

import json
import time
from email.headerregistry import Address
from pathlib import Path
from urllib.parse import parse_qs

import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, TIME_SCALE
from mail_walks import (QUIET_S, Checker, Mailbox, check_axe, check_error_page, check_mail, check_page,
                        check_screenshots, check_walks, decode, describe, form_token, heading, html_text, login_page,
                        other_language, run_program, sender_host)
from test_browser import needs_browser
from test_pages import CJK, ENGLISH_PHRASE, warn_without_japanese_font
from test_passkeys import check_browser_clean

PROGRAM = Path(__file__).resolve().parent / "browser" / "signup.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "signup"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 120 * TIME_SCALE  # the whole program (it gives up by itself after 110 s; both times TIME_SCALE)
CLIENT_NAME = "Example App"
MIN_LENGTH = 10  # AUTHRIM_PASSWORD_MIN_LENGTH (the default is 8)
PASSWORD = "a passphrase of my own"
SHORT_PASSWORD = "9 letters"  # at least the default 8, short of MIN_LENGTH
BREACHED = ["password123", "letmein-letmein", "correct horse battery staple"]
BREACHED_PASSWORD = "LetMeIn-LetMeIn"  # the list's, in other letters' case
TTL_HOURS = 24  # AUTHRIM_EMAIL_VERIFICATION_TTL's default, 86400 s

# The walks (signup.mjs): the browser's locale.
WALKS = {"en": "en-US", "ja": "ja-JP", "axe-en": "en-US", "axe-ja": "ja-JP", "phone-en": "en-US", "phone-ja": "ja-JP"}
FULL_WALKS = ["en", "ja", "axe-en", "axe-ja"]
# The new person's full name in each walk's language.
NAMES = {"en": "Dana Scully", "ja": "山田 花子"}
# Where each full walk confirms its link (signup.mjs): "here", in the browser context that
# signed up (signed in at once, on to consent), or "elsewhere" (the done page; then a sign-in).
CONFIRM = {"en": "here", "ja": "elsewhere", "axe-en": "elsewhere", "axe-ja": "elsewhere"}
# The pages of a walk, in order: (method, path, status).
WALK = {
    "login": ("GET", "/authorize", 200),
    "signup": ("GET", "/signup", 200),
    "signup-mismatch": ("POST", "/signup", 422),
    "signup-short": ("POST", "/signup", 422),
    "signup-breached": ("POST", "/signup", 422),
    "signup-missing": ("POST", "/signup", 422),
    "signup-sent": ("POST", "/signup", 200),
    "login-unconfirmed": ("POST", "/login", 401),
    "signup-verify": ("GET", "/signup/verify", 200),
}
# Then, confirmed here: consent at once (POST /signup/verify, 303 to it), the link spent.
CONFIRMED_HERE = {"consent": ("GET", "/consent", 200), "link-spent": ("GET", "/signup/verify", 400)}
# Confirmed elsewhere: the done page and the link spent there, then consent after a sign-in.
CONFIRMED_ELSEWHERE = {"signup-done": ("POST", "/signup/verify", 200), "link-spent": ("GET", "/signup/verify", 400),
                       "consent": ("GET", "/consent", 200)}
# How consent was reached: the redirects that led to it.
TO_CONSENT = {"here": [{"method": "POST", "path": "/signup/verify", "status": 303},
                       {"method": "GET", "path": "/consent", "status": 200}],
              "elsewhere": [{"method": "POST", "path": "/login", "status": 303},
                            {"method": "GET", "path": "/consent", "status": 200}]}
# The language each walk's browser asks for (Accept-Language from its locale), negotiated
# against the catalogues: the new account's ``locale`` claim.
LOCALE = {"en": "en", "ja": "ja"}
# Then names someone has: an address (the same page; a notice to its owner), a username (the
# same page; its link's page asks for another name and the sign-up's password).
TAKEN = {"signup-sent-taken": ("POST", "/signup", 200), "signup-sent-taken-name": ("POST", "/signup", 200),
         "signup-verify-taken": ("GET", "/signup/verify", 409), "signup-verify-wrong": ("POST", "/signup/verify", 409),
         "signup-verify-still-taken": ("POST", "/signup/verify", 409), "consent-renamed": ("GET", "/consent", 200)}
RENAMED_TO_CONSENT = [{"method": "POST", "path": "/signup/verify", "status": 303},
                      {"method": "GET", "path": "/consent", "status": 200}]
PHONE = {"signup": ("GET", "/signup", 200), "signup-mismatch": ("POST", "/signup", 422)}
AXE_PAGES = ["signup", "signup-mismatch", "signup-missing", "signup-sent", "signup-verify", "signup-done", "link-spent",
             "signup-verify-taken", "signup-verify-wrong"]
# Errors the walks cause on purpose: (path, status).
DELIBERATE = {("/signup", 422), ("/login", 401), ("/signup/verify", 400), ("/signup/verify", 409)}
# The sign-up form's error pages: the message in their alert (WORDS' key).
FORM_ERRORS = {"signup-mismatch": "mismatch", "signup-short": "short", "signup-breached": "breached",
               "signup-missing": "missing"}
# The confirmation page asking for another username: the message in its alert (a function of
# the walk's people, in its language).
CHOOSE_ERRORS = {"signup-verify-taken": lambda w, me: w["name-taken"].format(me["taken_username"]),
                 "signup-verify-wrong": lambda w, me: w["password-wrong"],
                 "signup-verify-still-taken": lambda w, me: w["name-taken"].format(me["taken_username"].upper())}
# The language of the account whose address a walk's sign-up names (its ``locale`` claim; None:
# none, so the default, en): the notice is in it, whatever the form's.
OWNER_LOCALE = {"en": "ja", "ja": None, "axe-en": None, "axe-ja": "en"}

# As src/ui/locales/<lang>.ftl words them.
WORDS = {
    "en": {
        "login": "Sign in",
        "no-account": "No account yet?",
        "signup-link": "Create one",
        "title": "Create an account",
        "username": "Username",
        "email": "E-mail",
        "name": "Full name",
        "given_name": "Given name (optional)",
        "family_name": "Family name (optional)",
        "password": "Password",
        "confirm": "New password again",
        "hint": f"At least {MIN_LENGTH} characters; not your username, nor a password known from a breach.",
        "submit": "Create the account",
        "mismatch": "The two new passwords are not the same.",
        "short": f"The password must have {MIN_LENGTH} to 1024 characters.",
        "breached": "This password is known from a data breach. Choose another.",
        "missing": "A required field is empty: Full name.",
        "name-taken": "The username {} was taken before you confirmed. Choose another, and enter the password you "
                      "chose, to create your account.",
        "password-wrong": "That is not the password chosen for this sign-up.",
        "sent": "Almost done: open the link we sent to your e-mail address to finish. It works for a limited time.",
        "verify-heading": "Confirm your e-mail address",
        "verify-submit": "Confirm and create my account",
        "done": "Your account is ready. Return to the application and sign in.",
        "to-account": "Go to your account",
        "error-title": "Error",
        "error-heading": "This request cannot be completed",
        "link-spent": "This link does not work: it was already used, or it expired. Sign up again.",
        "incorrect": "Incorrect username or password.",
        "consent": f"Allow {CLIENT_NAME} access?",
        "consent-title": "Allow access",
        "too-many": "Too many requests from here. Wait a few minutes and try again.",
        "off": "Creating an account is not available here.",
        "subject": "Confirm your e-mail address for Authrim",
        "mail": [f"To finish creating your Authrim account, open this link within {TTL_HOURS} hours:",
                 "If it was not you, ignore this message: no account is created."],
        # The notice to a taken address's owner (mail_signup_exists.txt), whole: {0} the
        # username, {1} the link.
        "notice-subject": "Someone tried to sign up for Authrim with your address",
        "notice": ("Someone tried to create a new Authrim account with this e-mail address, which already has one "
                   "(username: {0}). No account was created and nothing changed.\n\n"
                   "If it was you, sign in with that account. If you forgot its password, you can set a new one here:\n\n"
                   "{1}\n\n"
                   "If it was not you, ignore this message.\n\n"
                   "-- \nAuthrim"),
    },
    "ja": {
        "login": "サインイン",
        "no-account": "アカウントをお持ちでない場合は",
        "signup-link": "作成",
        "title": "アカウントの作成",
        "username": "ユーザー名",
        "email": "メールアドレス",
        "name": "氏名",
        "given_name": "名 (任意)",
        "family_name": "姓 (任意)",
        "password": "パスワード",
        "confirm": "新しいパスワード（確認）",
        "hint": f"{MIN_LENGTH} 文字以上。ユーザー名や、漏洩で知られたパスワードは使えません。",
        "submit": "アカウントを作成",
        "mismatch": "2 つの新しいパスワードが一致しません。",
        "short": f"パスワードは {MIN_LENGTH} 文字以上 1024 文字以下にしてください。",
        "breached": "このパスワードはデータ漏洩で知られています。別のものを選んでください。",
        "missing": "必須の項目「氏名」が空です。",
        "name-taken": "ユーザー名 {} は確認の前に使われてしまいました。別のユーザー名を選び、登録時に決めたパスワードを入力して、"
                      "アカウントを作成してください。",
        "password-wrong": "この登録で設定したパスワードではありません。",
        "sent": "あと少しです。メールアドレスに送ったリンクを開いて完了してください。リンクの有効期間は限られています。",
        "verify-heading": "メールアドレスの確認",
        "verify-submit": "確認してアカウントを作成",
        "done": "アカウントの準備ができました。アプリケーションに戻ってサインインしてください。",
        "to-account": "アカウントページへ",
        "error-title": "エラー",
        "error-heading": "このリクエストを完了できません",
        "link-spent": "このリンクは使えません。すでに使われたか、期限が切れています。もう一度登録してください。",
        "incorrect": "ユーザー名またはパスワードが正しくありません。",
        "consent": f"{CLIENT_NAME} にアクセスを許可しますか？",
        "consent-title": "アクセスの許可",
        "subject": "Authrim のメールアドレスの確認",
        "mail": [f"Authrim アカウントの作成を完了するには、{TTL_HOURS} 時間以内に次のリンクを開いてください:",
                 "心当たりがない場合は、このメールを無視してください。アカウントは作成されません。"],
        "notice-subject": "あなたのアドレスで Authrim アカウントの作成が試みられました",
        "notice": ("このメールアドレスで Authrim の新しいアカウントの作成が試みられましたが、このアドレスにはすでにアカウントがあります"
                   "(ユーザー名: {0})。アカウントは作成されず、何も変更されていません。\n\n"
                   "ご本人の場合は、そのアカウントでサインインしてください。パスワードを忘れた場合は、こちらで新しいパスワードを設定できます:\n\n"
                   "{1}\n\n"
                   "心当たりがない場合は、このメールを無視してください。\n\n"
                   "-- \nAuthrim"),
    },
    "fr": {
        "title": "Créer un compte",
        "submit": "Créer le compte",
        "too-many": "Trop de demandes depuis cet endroit. Patientez quelques minutes et réessayez.",
    },
}


def page_words(lang: str, name: str) -> tuple[str, str, str]:
    """A page's title (before `` · Authrim``), heading and a sentence it must say."""
    w = WORDS[lang]
    if name in FORM_ERRORS:
        return w["title"], w["title"], w[FORM_ERRORS[name]]
    if name in CHOOSE_ERRORS:
        return w["title"], w["verify-heading"], w["verify-submit"]
    return {
        "login": (w["login"], w["login"], w["no-account"]),
        "login-unconfirmed": (w["login"], w["login"], w["incorrect"]),
        "signup": (w["title"], w["title"], w["hint"]),
        "signup-sent": (w["title"], w["title"], w["sent"]),
        "signup-sent-taken": (w["title"], w["title"], w["sent"]),
        "signup-sent-taken-name": (w["title"], w["title"], w["sent"]),
        "signup-verify": (w["title"], w["verify-heading"], w["verify-submit"]),
        "signup-done": (w["title"], w["title"], w["done"]),
        "link-spent": (w["error-title"], w["error-heading"], w["link-spent"]),
        "consent": (w["consent-title"], w["consent"], CLIENT_NAME),
        "consent-renamed": (w["consent-title"], w["consent"], CLIENT_NAME),
    }[name]


def expected_pages(walk: str) -> dict:
    if walk.startswith("phone-"):
        return PHONE
    confirmed = CONFIRMED_HERE if CONFIRM[walk] == "here" else CONFIRMED_ELSEWHERE
    return {**WALK, **confirmed, **TAKEN}


def people(walk: str) -> dict:
    """The walk's new person (dana), the one who already has an account (taken), and the
    sign-up with taken's username (its fresh address, and the name chosen instead)."""
    lang = walk.rsplit("-", 1)[-1]
    return {"username": f"dana-{walk}", "email": f"dana-{walk}@example.com", "name": NAMES[lang],
            "taken_username": f"taken-{walk}", "taken_email": f"taken-{walk}@example.com",
            "fresh_email": f"fresh-{walk}@example.com", "renamed": f"renamed-{walk}"}


def users_op(server):
    """The checker's op ``users``: the users called ``username``, from the admin API."""
    def find(body: dict) -> dict:
        resp = requests.get(server.url("/admin/users"), headers={"Authorization": f"Bearer {server.admin_token}"},
                            timeout=HTTP_TIMEOUT_S)
        found = [{"id": u["id"], "username": u["username"], "claims": u["claims"], "disabled": u["disabled"]}
                 for u in resp.json()["users"] if u["username"] == body["username"]]
        return {"status": resp.status_code, "users": found}
    return find


def check_form(p: dict, lang: str, typed: dict | None, challenge: bool):
    """The sign-up form: its fields, labelled, required or marked optional, holding what was
    typed (``typed``; none on a fresh form) but never a password; its button; its form token
    and, with ``challenge`` (reached from an application's login page), the request it
    resumes."""
    w = WORDS[lang]
    where = (p["walk"], p["name"])
    f = p["fields"]
    typed = typed or {}
    assert [(i["id"], i["name"], i["type"], i["autocomplete"], i["required"], i["labels"], i["value"]) for i in f["inputs"]] == [
        ("username", "username", "text", "username", True, [w["username"]], typed.get("username", "")),
        ("email", "email", "email", "email", True, [w["email"]], typed.get("email", "")),
        ("name", "name", "text", "name", True, [w["name"]], typed.get("name", "")),
        ("given_name", "given_name", "text", "given-name", False, [w["given_name"]], ""),
        ("family_name", "family_name", "text", "family-name", False, [w["family_name"]], ""),
        ("password", "password", "password", "new-password", True, [w["password"]], ""),
        ("confirm_password", "confirm_password", "password", "new-password", True, [w["confirm"]], ""),
    ], (where, f)
    assert f["hidden"] == [{"name": "form", "has_value": True}] + (
        [{"name": "challenge", "has_value": True}] if challenge else []), (where, f)
    assert f["buttons"] == [{"text": w["submit"], "type": "submit", "form_action": "/signup"}], (where, f)


def test_signup_in_english_and_japanese(start_authrim, tmp_path):
    needs_browser()
    breached = tmp_path / "breached.txt"
    breached.write_text("\n".join(BREACHED) + "\n")
    mailbox = Mailbox().start()
    checker = None
    try:
        server = start_authrim("signup", {
            "AUTHRIM_SIGNUP": "true", "AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_SIGNUP_REQUIRED": "email name",
            "AUTHRIM_PASSWORD_MIN_LENGTH": str(MIN_LENGTH), "AUTHRIM_BREACHED_PASSWORDS_FILE": str(breached),
            # every walk signs up from 127.0.0.1 (up to three times); the throttle has its own test
            "AUTHRIM_SIGNUP_MAX_PER_ADDRESS": "50"})
        everyone = {walk: people(walk) for walk in WALKS}
        taken = {}
        for walk in FULL_WALKS:
            p = everyone[walk]
            locale = {"locale": OWNER_LOCALE[walk]} if OWNER_LOCALE[walk] else {}
            taken[walk] = server.create_user(p["taken_username"], "someone else's password",
                                             {"email": p["taken_email"], "email_verified": True, **locale})
        client = {"client_id": server.unique("signup-rp")}
        checker = Checker(server, mailbox, client, {"users": users_op(server)},  # `client`: filled in below
                          id_token_claims=("email", "email_verified", "name", "locale"))
        client["redirect_uri"] = checker.origin + "/cb"
        reg = server.create_client(client_id=client["client_id"], client_name=CLIENT_NAME,
                                   redirect_uris=[client["redirect_uri"]], token_endpoint_auth_method="client_secret_basic",
                                   grant_types=["authorization_code"], scope="openid email profile")
        client["client_secret"] = reg["client_secret"]
        seen, report = run_program(PROGRAM, ARTIFACTS, {
            "ISSUER": server.issuer, "CLIENT_ID": client["client_id"], "REDIRECT_URI": client["redirect_uri"],
            "PEOPLE": json.dumps(everyone), "PASSWORD": PASSWORD, "SHORT_PASSWORD": SHORT_PASSWORD,
            "BREACHED_PASSWORD": BREACHED_PASSWORD, "WAIT_MS": str(WAIT_MS),
        }, checker, tmp_path, RUN_TIMEOUT_S)
        # The link confirms once, whoever posts it.
        spent_token = seen["facts"]["en"]["link"].split("token=", 1)[1]
        again = requests.post(server.url("/signup/verify"), data={"token": spent_token}, timeout=HTTP_TIMEOUT_S)
        no_token = requests.get(server.url("/signup/verify"), timeout=HTTP_TIMEOUT_S)
        time.sleep(QUIET_S)  # a mail that should not come (a second one to anybody) has had its time
        received = mailbox.recipients()
        all_users = requests.get(server.url("/admin/users"), headers={"Authorization": f"Bearer {server.admin_token}"},
                                 timeout=HTTP_TIMEOUT_S).json()["users"]
    finally:
        if checker:
            checker.close()
        mailbox.stop()

    # The walks, their pages in order, each reached the way it should be.
    check_walks(seen, WALKS, expected_pages, report)

    pages = {(p["walk"], p["name"]): p for p in seen["pages"]}
    for (walk, name), p in pages.items():
        lang = walk.rsplit("-", 1)[-1]
        w = WORDS[lang]
        me = everyone[walk]
        where = (walk, name)
        check_page(p, lang, *page_words(lang, name))
        f = p["fields"]
        # What each page asks for, labelled; what it says, and where the focus is.
        # The form came from the login page's link, with the request (but on a phone, which
        # opens /signup itself).
        from_login = not walk.startswith("phone-")
        if name == "login":
            # One link to sign up, carrying the pending request (sealed), which the form keeps.
            link = seen["facts"][walk]["signup_link"]
            assert [ln for ln in f["links"] if ln["href"].startswith("/signup")] == [
                {"href": link, "text": w["signup-link"]}], (where, f)
            path, _, query = link.partition("?")
            assert path == "/signup" and list(parse_qs(query, keep_blank_values=True)) == ["challenge"], (where, link)
            [sealed] = parse_qs(query)["challenge"]
            assert seen["facts"][walk]["challenges"] == {n: [sealed] for n in (
                "signup", "signup-mismatch", "signup-short", "signup-breached", "signup-missing")}, (where, seen["facts"][walk])
        elif name == "signup":
            check_form(p, lang, None, from_login)
            assert (p["focused"] or {}).get("id") == "username", (where, p["focused"])
            assert p["alerts"] == [], (where, p["alerts"])
        elif name in FORM_ERRORS:
            # The reason in an alert that has the focus (role=alert, tabindex=-1); the form as typed.
            typed = {"username": me["username"], "email": me["email"], "name": "" if name == "signup-missing" else me["name"]}
            if walk.startswith("phone-"):
                typed = {"username": f"phone-{walk}", "email": f"phone-{walk}@example.com", "name": "Phone Person"}
            check_form(p, lang, typed, from_login)
            message = w[FORM_ERRORS[name]]
            assert p["alerts"] == [message], (where, p["alerts"])
            fo = p["focused"] or {}
            assert (fo.get("tag"), fo.get("role"), fo.get("tabindex"), fo.get("text")) == (
                "div", "alert", "-1", message), (where, fo)
        elif name in ("signup-sent", "signup-sent-taken", "signup-sent-taken-name"):
            assert p["statuses"] == [w["sent"]] and p["alerts"] == [], (where, p["statuses"], p["alerts"])
            assert f["inputs"] == [] and f["buttons"] == [], (where, f)
        elif name == "login-unconfirmed":
            assert p["alerts"] == [w["incorrect"]], (where, p["alerts"])
            assert seen["facts"][walk]["unconfirmed_username_kept"] == me["username"], (where, seen["facts"][walk])
        elif name == "signup-verify":
            # A button, and nothing else to fill in: a GET (a mail scanner's) confirms nothing.
            assert f["inputs"] == [] and f["hidden"] == [{"name": "token", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["verify-submit"], "type": "submit", "form_action": "/signup/verify"}], (where, f)
            assert p["alerts"] == [], (where, p["alerts"])
        elif name in CHOOSE_ERRORS:
            # The link's holder proved the address: told the name is taken, asked for another
            # (the field holding the one tried) and the sign-up's password; the reason in an
            # alert that has the focus.
            tried = {"signup-verify-taken": me["taken_username"], "signup-verify-wrong": me["renamed"],
                     "signup-verify-still-taken": me["taken_username"].upper()}[name]
            assert [(i["id"], i["name"], i["type"], i["autocomplete"], i["required"], i["labels"], i["value"])
                    for i in f["inputs"]] == [
                ("username", "username", "text", "username", True, [w["username"]], tried),
                ("password", "password", "password", "current-password", True, [w["password"]], ""),
            ], (where, f)
            assert f["hidden"] == [{"name": "token", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["verify-submit"], "type": "submit", "form_action": "/signup/verify"}], (where, f)
            message = CHOOSE_ERRORS[name](w, me)
            assert p["alerts"] == [message], (where, p["alerts"])
            fo = p["focused"] or {}
            assert (fo.get("tag"), fo.get("role"), fo.get("tabindex"), fo.get("text")) == (
                "div", "alert", "-1", message[:120]), (where, fo)  # focusedElement keeps 120 characters
        elif name == "signup-done":
            # Confirmed in another browser context: only the account is made.
            assert p["statuses"] == [w["done"]] and p["alerts"] == [], (where, p["statuses"])
            assert f["links"] == [{"href": "/account", "text": w["to-account"]}], (where, f)
            assert seen["facts"][walk]["elsewhere_after_done"] == {"path": "/authorize", "status": 200, "login_forms": 1}, (
                where, seen["facts"][walk])
        elif name == "link-spent":
            assert p["alerts"] == [w["link-spent"]], (where, p["alerts"])
            assert f["inputs"] == [] and f["buttons"] == [], (where, f)
        # A phone: the page no wider than the phone, nothing sticking out.
        if walk.startswith("phone-"):
            size = p["width"]
            assert size["scroll_width"] <= size["client_width"] and size["inner_width"] <= 390, (where, size)
            assert size["sticking_out"] == [], (where, size)

    for walk in FULL_WALKS:
        facts = seen["facts"][walk]
        me = everyone[walk]
        # From the mismatch's focused alert, Tab goes on to the first field.
        assert facts["tab_after_alert"]["id"] == "username", (walk, facts)
        # Too short: the browser's own check held the form back (no request), as minlength asks.
        assert facts["short_in_browser"] == {"posts": 0, "path": "/signup", "valid": False, "too_short": True,
                                             "minlength": MIN_LENGTH}, (walk, facts)
        # Nobody until the link's button is pressed; then dana, verified, as she typed herself.
        assert facts["users_after_sent"] == {"status": 200, "users": []}, (walk, facts)
        assert facts["users_after_get"] == {"status": 200, "users": []}, (walk, facts)
        # The account keeps the language the browser asked for as its locale.
        [user] = facts["users_after_confirm"]["users"]
        claims = {"email": me["email"], "email_verified": True, "name": me["name"], "locale": LOCALE[walk.rsplit("-", 1)[-1]]}
        assert (user["username"], user["claims"], user["disabled"]) == (me["username"], claims, False), (walk, user)
        # Consent reached by confirming the link in the browser that signed up (the request
        # the sign-up came from, resumed), or by signing in after confirming it elsewhere.
        assert facts["to_consent"] == TO_CONSENT[CONFIRM[walk]], (walk, facts)
        # Then the client's redirect URI with a code and the request's state, which the token
        # endpoint redeems for an ID token of this user, for this client.
        assert facts["callback"] == {"status": 200, "path": "/cb", "state_ok": True, "has_code": True,
                                     "error": None, "iss": server.issuer}, (walk, facts, report)
        assert facts["redeemed"] == {"status": 200, "error": None, "sub": user["id"], "aud": client["client_id"],
                                     "iss": server.issuer, "nonce_ok": True, "claims": claims,
                                     "userinfo": {"status": 200, "sub": user["id"], **claims}}, (walk, facts)

        # Someone's address, and someone's username: the very same page as for a new one
        # (status, title, text); for the address nobody is made.
        new = pages[(walk, "signup-sent")]
        for known in (pages[(walk, "signup-sent-taken")], pages[(walk, "signup-sent-taken-name")]):
            assert (known["status"], known["content_language"], known["title"], known["heading"], known["text"],
                    known["fields"]) == (new["status"], new["content_language"], new["title"], new["heading"],
                                         new["text"], new["fields"]), (walk, known["name"])
        assert facts["users_taken"] == {"status": 200, "users": []}, (walk, facts)
        # Someone's username: nothing made with a wrong password; with the right one and a
        # free name, the account under that name (the sign-up's address, verified, its name
        # and locale), signed in at once in the browser that signed up, on with the request;
        # the owner of the taken name as they were; the link then spent.
        assert facts["users_renamed_wrong"] == {"status": 200, "users": []}, (walk, facts)
        [renamed] = facts["users_renamed"]["users"]
        renamed_claims = {**claims, "email": me["fresh_email"]}
        assert (renamed["username"], renamed["claims"], renamed["disabled"]) == (me["renamed"], renamed_claims, False), (
            walk, renamed)
        assert [(u["id"], u["claims"]) for u in facts["users_taken_name"]["users"]] == [
            (taken[walk]["id"], taken[walk]["claims"])], (walk, facts)
        assert facts["renamed_to_consent"] == RENAMED_TO_CONSENT, (walk, facts)
        assert facts["renamed"]["callback"] == {"status": 200, "path": "/cb", "state_ok": True, "has_code": True,
                                                "error": None, "iss": server.issuer}, (walk, facts, report)
        assert facts["renamed"]["redeemed"] == {
            "status": 200, "error": None, "sub": renamed["id"], "aud": client["client_id"], "iss": server.issuer,
            "nonce_ok": True, "claims": renamed_claims, "userinfo": {"status": 200, "sub": renamed["id"], **renamed_claims}}, (
            walk, facts)
        assert facts["fresh_link_again"] == 400, (walk, facts)
    # Who exists at the end: the taken people as they were, one dana and one renamed per full walk.
    assert sorted(u["username"] for u in all_users) == sorted(
        [f"{who}-{w}" for w in FULL_WALKS for who in ("taken", "dana", "renamed")]), all_users
    for walk, t in taken.items():
        [now] = [u for u in all_users if u["id"] == t["id"]]
        assert now["claims"] == t["claims"], (walk, now, t)
    # The link posted again, or no link: "does not work".
    check_error_page(again, 400, "en", WORDS["en"]["link-spent"])
    check_error_page(no_token, 400, "en", WORDS["en"]["link-spent"])

    # The mails, per walk, in order: the link to dana; the notice to the taken address's owner
    # (instead of a link); the link to the fresh address of the taken username's sign-up. No
    # other. Each link in the form's language, From, To, Subject, charset and link as they
    # should be, and the link the browser opened the one in the mail.
    assert received == [[everyone[w][k]] for w in FULL_WALKS for k in ("email", "taken_email", "fresh_email")], (
        received, report)
    sender = Address("Authrim", addr_spec=f"noreply@{sender_host(server)}")
    links = []
    for walk in FULL_WALKS:
        lang = walk.rsplit("-", 1)[-1]
        me, facts = everyone[walk], seen["facts"][walk]
        for label, to, fact in (("mail", me["email"], "link"), ("fresh-mail", me["fresh_email"], "fresh_link")):
            d = checker.mails[(walk, label)]
            link = check_mail(d, to=to, sender=sender, subject=WORDS[lang]["subject"], sentences=WORDS[lang]["mail"],
                              lang=lang, issuer=server.issuer, path="/signup/verify", where=(walk, label, describe([d])))
            assert link == facts[fact], (walk, label, link, facts)
            links.append(link)
        check_notice(checker.mails[(walk, "notice")], walk, me, sender, server.issuer)
        assert facts["notice_link"] == server.issuer + "/login/forgot", (walk, facts)
    assert len(checker.mails) == 3 * len(FULL_WALKS) and len(set(links)) == 2 * len(FULL_WALKS), describe(
        list(checker.mails.values()))

    # axe-core: the harness first, then every sign-up page in both languages and themes.
    check_axe(seen, [p for p in seen["pages"] if p.get("axe")], [(w, n) for w in ("axe-en", "axe-ja") for n in AXE_PAGES],
              PROGRAM.parent / "package.json", report)

    # Wording: nothing in another language unless marked so.
    names = [CLIENT_NAME, "Authrim", "Phone Person", *NAMES.values()] + [
        v for p in everyone.values() for k, v in p.items() if k != "name"]
    wording = [line for p in seen["pages"] for line in other_language(p, p["walk"].rsplit("-", 1)[-1], names)]
    assert not wording, "pages' wording:\n" + "\n".join(wording)

    # Screenshots of every page of the en, ja and phone walks.
    warn_without_japanese_font(seen)
    shots = [f"{walk}-{n:02d}-{name}.png" for walk in ("en", "ja", "phone-en", "phone-ja")
             for n, name in enumerate(expected_pages(walk), 1)]
    check_screenshots(seen, ARTIFACTS, shots, report)
    assert seen["failed_requests"] == [], report
    check_browser_clean(seen, report, DELIBERATE)


def check_notice(d: dict, walk: str, me: dict, sender: Address, issuer: str):
    """The notice to the owner of the address a walk's sign-up named (mail_signup_exists.txt):
    envelope and headers to the owner's address, ``text/plain; charset=utf-8``, Subject and body
    word for word in the owner's language (OWNER_LOCALE), naming the owner's username, its one
    link ``/login/forgot`` on the issuer (no token, nothing to make an account with)."""
    lang = OWNER_LOCALE[walk] or "en"
    w = WORDS[lang]
    link = f"{issuer}/login/forgot"
    where = (walk, lang, describe([d]))
    assert (d["mail_from"], d["rcpt_tos"]) == (sender.addr_spec, [me["taken_email"]]), where
    assert (d["from_name"], d["from_addr"]) == (sender.display_name, sender.addr_spec), where
    assert d["to"] == [me["taken_email"]] and d["subject"] == w["notice-subject"], where
    assert (d["content_type"], d["charset"]) == ("text/plain", "utf-8"), where
    assert d["body"].rstrip("\n") == w["notice"].format(me["taken_username"], link), where
    assert d["links"] == [link] and "/signup/verify" not in d["body"], where
    if lang == "ja":
        assert CJK.search(d["subject"]) and not ENGLISH_PHRASE.search(d["body"].replace(link, " ")), where
    else:
        assert not CJK.search(d["body"]) and not CJK.search(d["subject"]), where


# ---------------------------------------------------------------------------------------------
# The throttle, with requests.


def signup(server, fields: dict, headers: dict | None = None) -> requests.Response:
    """``GET /signup`` (its form token, sealed to the browser cookie), then ``POST`` it with
    ``fields``, as a browser would."""
    s = requests.Session()
    form = form_token(s.get(server.url("/signup"), headers=headers, timeout=HTTP_TIMEOUT_S))
    return s.post(server.url("/signup"), data={"form": form, **fields}, headers=headers,
                  timeout=HTTP_TIMEOUT_S, allow_redirects=False)


def test_signup_is_throttled_per_address(start_authrim):
    mailbox = Mailbox().start()
    try:
        limit = 3
        server = start_authrim("signup-throttle", {"AUTHRIM_SIGNUP": "true", "AUTHRIM_SMTP_URL": mailbox.url,
                                                   "AUTHRIM_TRUST_PROXY": "true", "AUTHRIM_SIGNUP_MAX_PER_ADDRESS": str(limit)})
        en = WORDS["en"]

        def person(n: int) -> dict:
            return {"username": f"ann-{n}", "email": f"ann-{n}@example.com", "password": PASSWORD, "confirm_password": PASSWORD}

        here = {"X-Forwarded-For": "203.0.113.7"}
        for n in range(1, limit + 1):
            resp = signup(server, person(n), here)
            assert resp.status_code == 200 and en["sent"] in html_text(resp.text), (n, resp.status_code, resp.text)
        check_error_page(signup(server, person(limit + 1), here), 429, "en", en["too-many"])
        assert heading(signup(server, person(limit + 1), here).text) == en["error-heading"]
        fr = {**here, "Accept-Language": "fr-FR,fr;q=0.9"}
        page = requests.get(server.url("/signup"), headers=fr, timeout=HTTP_TIMEOUT_S)
        assert page.headers.get("Content-Language") == "fr" and heading(page.text) == WORDS["fr"]["title"], page.text
        assert WORDS["fr"]["submit"] in page.text, page.text
        check_error_page(signup(server, person(limit + 1), fr), 429, "fr", WORDS["fr"]["too-many"])
        # Another address is another count.
        resp = signup(server, person(limit + 2), {"X-Forwarded-For": "198.51.100.1"})
        assert resp.status_code == 200 and en["sent"] in html_text(resp.text), resp.text

        # A mail for each sign-up let through, none for the refused one.
        mails = [decode(mailbox.next_to(f"ann-{n}@example.com")) for n in (*range(1, limit + 1), limit + 2)]
        time.sleep(QUIET_S)
        assert mailbox.recipients() == [[f"ann-{n}@example.com"] for n in (*range(1, limit + 1), limit + 2)], (
            mailbox.recipients(), describe(mails))
    finally:
        mailbox.stop()


def test_signup_is_off_by_default(authrim_server):
    """No ``signup``: no link to ``/signup`` (with a challenge or without) on the login page,
    and the sign-up pages answer 404."""
    login = login_page(authrim_server, "no-signup-rp")
    assert 'href="/signup' not in login.text and WORDS["en"]["no-account"] not in login.text, login.text
    for method, path in (("GET", "/signup"), ("POST", "/signup"), ("GET", "/signup/verify?token=x"),
                         ("POST", "/signup/verify")):
        resp = requests.request(method, authrim_server.url(path), data={"token": "x"} if method == "POST" else None,
                                timeout=HTTP_TIMEOUT_S)
        check_error_page(resp, 404, "en", WORDS["en"]["off"])
