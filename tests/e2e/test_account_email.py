"""The account page's e-mail address: a changed address is verified by a link mailed to it, with a
real SMTP server (Python's aiosmtpd, pinned in ``requirements.txt``; every message decoded with
Python's ``email`` package, ``mail_walks.py``, shared with ``test_reset.py`` and
``test_signup.py``); and the mail's plain-text templates from an operator's theme.

- ``test_email_change_and_verification_in_english_and_japanese``: ``browser/account_email.mjs``
  (see its header) in Debian's Chromium, an English and a Japanese browser, each for a person
  created through the admin API with a verified address: ``/account`` through its own sign-in
  says "E-mail: … (verified)" with no button to send a link; the profile form (labels, what the
  fields hold, the e-mail field described by its hint, which speaks of the link); a new address
  saved: the overview's notice ("open the link we sent to your new e-mail address"), "(not
  verified)", a "Send a verification link" button; the admin API says ``email_verified: false``
  and a client's code flow (consent, the code redeemed at the token endpoint, the ID token
  verified against the JWKS, the same claims at userinfo) gets the new address not verified; the
  mail (envelope, default ``From``, ``To`` the new address, ``Subject`` and body in the
  account's language: its ``locale`` claim, else the default, whatever the browser's, with
  ``ja-JP`` as the catalogue ``ja``; ``text/plain; charset=utf-8``; the whole body: the message,
  one link on the issuer on a line of its own, and the ``-- `` signature with the product's
  name); the send button's form with a forged CSRF token: 400, no mail; the button: a second
  link, the first then dead (400); the second opened in another browser context without a
  session: the confirm page (the GET changes nothing, as the admin API shows), its button: "E-mail
  address verified" (the admin API: verified), the link again 400 (and posted again, or no
  token, 400); back where she is signed in: "(verified)" and no button; the client's next code
  flow (no consent asked again): the new address verified. Then the address changed twice: the
  first of the two links is dead (400) and the address stays unverified; a link whose address
  the admin API changed since (it stays in the database: the 400 comes from the address) is
  refused too, and verifies nothing. On each page the status, redirects, ``Content-Language``,
  ``<html lang>``, title, heading and wording in its language (no English in a Japanese page nor
  Japanese in an English one unless marked with ``lang``). The same walks in ``bypassCSP``
  contexts run axe-core (after the control page, as ``test_pages.py`` does) on the overview (as
  it is, with the notice and the button, and with the "link sent" notice), the profile form,
  the confirm, done and dead-link pages in the light and dark themes: no violation of the WCAG
  2.0/2.1/2.2 A and AA rules. A phone (390x844) shows the overview and the profile without
  horizontal scroll, also with a long address; there, a profile saved with its address as it
  was keeps it verified and sends nothing. No CSP violation, page error, failed request or
  console error but Chromium's own line for the 400 pages. Exactly the mails named above arrive,
  each change also a notice (no link) to the address it left. Screenshots go to ``target/e2e-artifacts/account_email/``.
- ``test_changes_need_a_recent_sign_in``: with ``account_reauth_max_age`` 1 s, a sign-in 2 s
  old gets the "sign in again" page (403) for a profile change and for the send button, which
  change nothing and send nothing; a new sign-in sends the link.
- ``test_mail_templates_from_a_theme``: ``AUTHRIM_THEME_DIR`` with ``templates/mail.txt`` (the
  frame, its words in the mail's language through ``lang``) and ``templates/mail_reset.txt``,
  and a product name with ``&`` and ``'``: the reset mails (English and Japanese accounts) are
  the theme's, word for word; the e-mail verification's is the built-in message in the theme's
  frame; nothing escaped for HTML.
- ``test_a_broken_mail_template_stops_the_server``: a theme whose ``mail.txt`` uses a filter
  that does not exist, or whose ``mail_verify_email.txt`` does not parse: the server exits
  non-zero at start, naming the template.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from email.headerregistry import Address
from pathlib import Path
from urllib.parse import urlsplit

import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, _free_port, _resolve_binary, TIME_SCALE
from mail_walks import (QUIET_S, Checker, Mailbox, account_csrf, account_session, check_axe, check_error_page,
                        check_mail, check_page, check_screenshots, check_walks, decode, describe, heading, html_text,
                        other_language, run_program, sender_host)
from test_browser import needs_browser
from test_pages import warn_without_japanese_font
from test_passkeys import check_browser_clean
from test_reset import forgot

PROGRAM = Path(__file__).resolve().parent / "browser" / "account_email.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "account_email"
WAIT_MS = 10_000  # the longest any one step in the browser may take
RUN_TIMEOUT_S = 90 * TIME_SCALE  # the whole program (it gives up by itself after 80 s; both times TIME_SCALE)
PASSWORD = "erin's own passphrase"
CLIENT_NAME = "Example App"
TTL_HOURS = 24  # AUTHRIM_EMAIL_VERIFICATION_TTL's default, 86400 s
SEND = "/account/verify-email/send"
VERIFY = "/account/verify-email"

# The walks (account_email.mjs): the browser's locale.
WALKS = {"en": "en-US", "ja": "ja-JP", "axe-en": "en-US", "axe-ja": "ja-JP", "phone-en": "en-US", "phone-ja": "ja-JP"}
FULL_WALKS = ["en", "ja"]
MAIL_WALKS = ["en", "ja", "axe-en", "axe-ja"]
# Each walk's person: her name in the walk's language, and the name the phone walks save.
NAMES = {"en": "Erin Example", "ja": "山田 恵理"}
NEW_NAMES = {"en": "Erin Q. Example", "ja": "山田 恵理子"}
# Her `locale` claim, and so the language of her mail: the axe walks' is the other language than
# their browser's (the account's language, not the page's); "ja-JP" is the catalogue "ja".
LOCALES = {"en": None, "ja": "ja", "axe-en": "ja-JP", "axe-ja": None, "phone-en": None, "phone-ja": "ja"}
MAIL_LANG = {"en": "en", "ja": "ja", "axe-en": "ja", "axe-ja": "en"}

# The pages of a walk, in order: (method, path, status).
PAGES = {
    "login": ("GET", "/authorize", 200),
    "account": ("GET", "/account", 200),
    "profile": ("GET", "/account/profile", 200),
    "account-saved": ("GET", "/account", 200),
    "account-changed": ("GET", "/account", 200),
    "consent": ("GET", "/authorize", 200),
    "send-forged": ("POST", SEND, 400),
    "account-sent": ("GET", "/account", 200),
    "link-replaced": ("GET", VERIFY, 400),
    "verify": ("GET", VERIFY, 200),
    "verified": ("POST", VERIFY, 200),
    "link-spent": ("GET", VERIFY, 400),
    "account-verified": ("GET", "/account", 200),
    "account-changed-again": ("GET", "/account", 200),
    "link-changed": ("GET", VERIFY, 400),
}
FULL = ["login", "account", "profile", "account-changed", "consent", "send-forged", "account-sent", "link-replaced",
        "verify", "verified", "link-spent", "account-verified", "account-changed-again", "link-changed"]
AXE = ["login", "account", "profile", "account-changed", "account-sent", "link-replaced", "verify", "verified",
       "link-spent", "account-verified"]
PHONE = ["login", "account", "profile", "account-saved", "account-changed"]
AXE_PAGES = ["account", "profile", "account-changed", "account-sent", "verify", "verified", "link-spent", "account-verified"]
# How each page was reached: the redirects before it (the page itself last), and the query of
# the overview's notice (None: not checked); by default, directly.
SIGN_IN = [("GET", "/account", 303), ("GET", "/account/login", 303), ("GET", "/authorize", 200)]
HOPS = {
    "login": (SIGN_IN, None),
    "account": ([("POST", "/login", 303), ("GET", "/account/callback", 303), ("GET", "/account", 200)], ""),
    "account-saved": ([("POST", "/account/profile", 303), ("GET", "/account", 200)], "?done=profile"),
    "account-changed": ([("POST", "/account/profile", 303), ("GET", "/account", 200)], "?done=profile-verify"),
    "account-changed-again": ([("POST", "/account/profile", 303), ("GET", "/account", 200)], "?done=profile-verify"),
    "account-sent": ([("POST", SEND, 303), ("GET", "/account", 200)], "?done=verify-sent"),
    "account-verified": ([("GET", "/account", 200)], ""),
}
# Errors the walks cause on purpose: (path, status).
DELIBERATE = {(VERIFY, 400), (SEND, 400)}

# As src/ui/locales/<lang>.ftl words them.
WORDS = {
    "en": {
        "login": "Sign in",
        "username": "Username or e-mail",
        "account": "Your account",
        "edit-profile": "Change your name, e-mail and language",
        "email": "E-mail",
        "verified": "(verified)",
        "unverified": "(not verified)",
        "send": "Send a verification link",
        "profile": "Your profile",
        "labels": ["Full name", "Given name", "Family name", "E-mail", "Language and region"],
        "save": "Save",
        "hint": "A new address is shown to applications as not verified until you open the link we send to it.",
        "saved": "Your profile was saved.",
        "changed": "Your profile was saved. Open the link we sent to your new e-mail address to verify it.",
        "sent": "A verification link was sent to your e-mail address.",
        "verify-title": "Verify your e-mail address",
        "verify-heading": "Confirm your e-mail address",
        "verify-submit": "Confirm my e-mail address",
        "done-heading": "E-mail address verified",
        "done": "Your e-mail address is verified.",
        "back": "Back to your account",
        "error-title": "Error",
        "error-heading": "This request cannot be completed",
        "dead": "This link does not work: it was already used, it expired, or the address has changed since. "
                "Send a new one from your account page.",
        "forged": "This form has expired. Reload your account page and try again.",
        "consent-title": "Allow access",
        "consent": f"Allow {CLIENT_NAME} access?",
        "reauth": "Confirm it is you",
        "subject": "Verify your e-mail address for {product}",
        "mail": ["To verify this e-mail address for your {product} account, open this link within 24 hours:",
                 "If it was not you, ignore this message: nothing changes."],
    },
    "ja": {
        "login": "サインイン",
        "username": "ユーザー名またはメールアドレス",
        "account": "アカウント",
        "edit-profile": "名前、メールアドレス、言語を変更",
        "email": "メールアドレス",
        "verified": "(確認済み)",
        "unverified": "(未確認)",
        "send": "確認用リンクを送信",
        "profile": "プロフィール",
        "labels": ["氏名", "名", "姓", "メールアドレス", "言語と地域"],
        "save": "保存",
        "hint": "新しいアドレスは、お送りするリンクを開くまで、アプリケーションには未確認として示されます。",
        "saved": "プロフィールを保存しました。",
        "changed": "プロフィールを保存しました。新しいメールアドレスに送ったリンクを開いて確認してください。",
        "sent": "確認用リンクをメールアドレスに送信しました。",
        "verify-title": "メールアドレスの確認",
        "verify-heading": "メールアドレスの確認",
        "verify-submit": "メールアドレスを確認する",
        "done-heading": "メールアドレスを確認しました",
        "done": "メールアドレスが確認されました。",
        "back": "アカウントに戻る",
        "error-title": "エラー",
        "error-heading": "このリクエストを完了できません",
        "dead": "このリンクは使えません。使用済みか期限切れ、またはその後アドレスが変更されています。"
                "アカウントページから新しいリンクを送信してください。",
        "forged": "このフォームは有効期限が切れています。アカウントページを再読み込みして、もう一度お試しください。",
        "consent-title": "アクセスの許可",
        "consent": f"{CLIENT_NAME} にアクセスを許可しますか？",
        "subject": "{product} のメールアドレスの確認",
        "mail": ["{product} アカウントのこのメールアドレスを確認するには、24 時間以内に次のリンクを開いてください:",
                 "お心当たりがない場合は、このメールを無視してください。何も変更されません。"],
    },
}


def lang_of(walk: str) -> str:
    return walk.rsplit("-", 1)[-1]


def expected_pages(walk: str) -> dict:
    names = FULL if walk in FULL_WALKS else PHONE if walk.startswith("phone-") else AXE
    return {name: PAGES[name] for name in names}


def people(server) -> dict:
    """Each walk's person, created through the admin API with a verified address (and her
    ``locale``), and the addresses her walk gives her."""
    out = {}
    for walk in WALKS:
        lang = lang_of(walk)
        username, email = f"erin-{walk}", f"erin-{walk}@example.com"
        claims = {"email": email, "email_verified": True, "name": NAMES[lang]}
        if LOCALES[walk]:
            claims["locale"] = LOCALES[walk]
        user = server.create_user(username, PASSWORD, claims)
        squashed = walk.replace("-", "")
        new = (f"erin.alexandra.montgomery.{squashed}@mail.engineering.example.com" if walk.startswith("phone-")
               else f"erin-{walk}@new.example")
        out[walk] = {"username": username, "id": user["id"], "name": NAMES[lang], "new_name": NEW_NAMES[lang],
                     "email": email, "new": new, "second": f"erin-{walk}@second.example",
                     "third": f"erin-{walk}@third.example"}
    return out


def admin_user(server, user_id: str) -> dict:
    resp = requests.get(server.url(f"/admin/users/{user_id}"), headers={"Authorization": f"Bearer {server.admin_token}"},
                        timeout=HTTP_TIMEOUT_S)
    claims = resp.json().get("claims", {})
    return {"status": resp.status_code, "email": claims.get("email"), "email_verified": claims.get("email_verified"),
            "name": claims.get("name"), "locale": claims.get("locale")}


def email_line(lang: str, address: str, verified: bool) -> str:
    w = WORDS[lang]
    return f"{w['email']}: {address} {w['verified'] if verified else w['unverified']}"


def mail_words(lang: str, product: str) -> dict:
    w = WORDS[lang]
    return {"subject": w["subject"].format(product=product), "mail": [s.format(product=product) for s in w["mail"]]}


def page_words(lang: str, name: str) -> tuple[str, str, str]:
    """A page's title (before `` · Authrim``), heading and a sentence it must say."""
    w = WORDS[lang]
    if name.startswith("account"):
        sentence = {"account-saved": w["saved"], "account-sent": w["sent"]}.get(
            name, w["changed"] if name.startswith("account-changed") else w["edit-profile"])
        return w["account"], w["account"], sentence
    if name.startswith("link-"):
        return w["error-title"], w["error-heading"], w["dead"]
    return {
        "login": (w["login"], w["login"], w["username"]),
        "profile": (w["profile"], w["profile"], w["hint"]),
        "consent": (w["consent-title"], w["consent"], CLIENT_NAME),
        "send-forged": (w["error-title"], w["error-heading"], w["forged"]),
        "verify": (w["verify-title"], w["verify-heading"], w["verify-submit"]),
        "verified": (w["verify-title"], w["done-heading"], w["done"]),
    }[name]


def check_pages(seen: dict, everyone: dict, report: str):
    """What each page shows: its words, the address and whether it is verified, the button, the
    notice, the forms' fields, how it was reached; on a phone, no horizontal scroll."""
    for p in seen["pages"]:
        walk, name = p["walk"], p["name"]
        lang, me, w, where = lang_of(walk), everyone[p["walk"]], WORDS[lang_of(walk)], (p["walk"], p["name"])
        check_page(p, lang, *page_words(lang, name))
        hops, query = HOPS.get(name, ([PAGES[name]], None))
        assert [(h["method"], h["path"], h["status"]) for h in p["hops"]] == hops, (where, p["hops"])
        assert query is None or p["query"] == query, (where, p["query"])
        f = p["fields"]
        send = [b for b in f["buttons"] if b["form_action"] == SEND]
        if name.startswith("account"):
            notice = {"account-saved": [w["saved"]], "account-sent": [w["sent"]], "account-changed": [w["changed"]],
                      "account-changed-again": [w["changed"]]}.get(name, [])
            assert p["statuses"] == notice and p["alerts"] == [], (where, p["statuses"], p["alerts"])
            verified = name in ("account", "account-saved", "account-verified")
            assert send == ([] if verified else [{"text": w["send"], "type": "submit", "form_action": SEND}]), (where, f)
        elif name == "profile":
            locale = LOCALES[walk] or ""
            assert [(i["id"], i["name"], i["type"], i["required"], i["labels"], i["value"]) for i in f["inputs"]] == [
                ("name", "name", "text", False, [w["labels"][0]], me["name"]),
                ("given_name", "given_name", "text", False, [w["labels"][1]], ""),
                ("family_name", "family_name", "text", False, [w["labels"][2]], ""),
                ("email", "email", "email", False, [w["labels"][3]], me["email"]),
                ("locale", "locale", "text", False, [w["labels"][4]], locale),
            ], (where, f)
            assert [i["autocomplete"] for i in f["inputs"][:4]] == ["name", "given-name", "family-name", "email"], (where, f)
            assert f["hidden"] == [{"name": "csrf", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["save"], "type": "submit", "form_action": "/account/profile"}], (where, f)
        elif name == "verify":
            # A button, and nothing to fill in: a GET (a mail scanner's) confirms nothing.
            assert f["inputs"] == [] and f["hidden"] == [{"name": "token", "has_value": True}], (where, f)
            assert f["buttons"] == [{"text": w["verify-submit"], "type": "submit", "form_action": VERIFY}], (where, f)
        elif name == "verified":
            assert f["inputs"] == [] and f["buttons"] == [] and p["alerts"] == [], (where, f, p["alerts"])
            assert f["links"] == [{"href": "/account", "text": w["back"]}], (where, f)
        elif name.startswith("link-") or name == "send-forged":
            assert p["alerts"] == [w["forged" if name == "send-forged" else "dead"]], (where, p["alerts"])
            assert f["inputs"] == [] and f["buttons"] == [], (where, f)
        if walk.startswith("phone-"):
            size = p["width"]
            assert size["scroll_width"] <= size["client_width"] and size["inner_width"] <= 390, (where, size, me["new"])
            assert size["sticking_out"] == [] and size["overflowing"] == [], (where, size)


def check_facts(seen: dict, everyone: dict, server, client: dict, report: str):
    """What the walks found out along the way: the overview's e-mail section, the admin API's
    view of the user at each step, the client's view through the code flow."""
    for walk in WALKS:
        facts, me, lang = seen["facts"][walk], everyone[walk], lang_of(walk)
        w = WORDS[lang]
        where = (walk, facts)
        no_button = {"lines": [email_line(lang, me["email"], True)], "send_forms": []}
        button = [{"method": "post", "csrf": True, "buttons": [w["send"]]}]
        assert facts["account_changed"] == {"lines": [email_line(lang, me["new"], False)], "send_forms": button}, where
        if walk.startswith("phone-"):
            assert facts["account_saved"] == no_button, where
            # Saved with the address as it was: still verified (and no mail: see the recipients).
            assert facts["user_after_save"] == {"status": 200, "email": me["email"], "email_verified": True,
                                                "name": me["new_name"], "locale": LOCALES[walk]}, where
            continue
        assert facts["account"] == no_button, where
        assert facts["email_description"] == [w["hint"]], where
        user = {"status": 200, "name": me["name"], "locale": LOCALES[walk]}
        assert facts["user_after_change"] == {**user, "email": me["new"], "email_verified": False}, where
        assert facts["account_sent"] == facts["account_changed"], where
        # The links opened where nobody is signed in: the GET changes nothing, the button does.
        assert facts["link_context_cookies"] == 0, where
        assert facts["user_after_get"] == {**user, "email": me["new"], "email_verified": False}, where
        assert facts["user_after_confirm"] == {**user, "email": me["new"], "email_verified": True}, where
        assert facts["link_context_account"]["path"] == "/authorize", where
        assert facts["account_verified"] == {"lines": [email_line(lang, me["new"], True)], "send_forms": []}, where
        assert len(set(facts["links"])) == 2, where
        if walk not in FULL_WALKS:
            continue
        # The client sees the new address, unverified and then verified (its consent kept).
        for key, verified in (("flow_before", False), ("flow_after", True)):
            flow = facts[key]
            assert flow["callback"] == {"path": "/cb", "state_ok": True, "has_code": True, "error": None}, (where, key)
            claims = {"email": me["new"], "email_verified": verified}
            assert flow["redeemed"] == {"status": 200, "error": None, "sub": me["id"], "aud": client["client_id"],
                                        "iss": server.issuer, "nonce_ok": True, "claims": claims,
                                        "userinfo": {"status": 200, "sub": me["id"], **claims}}, (where, key)
        assert [(h["method"], h["path"], h["status"]) for h in facts["flow_after"]["hops"]] == [
            ("GET", "/authorize", 302), ("GET", "/cb", 200)], where
        # Changed twice: the first of the two links verified nothing.
        assert facts["account_changed_again"] == {"lines": [email_line(lang, me["third"], False)], "send_forms": button}, where
        assert facts["user_after_stale"] == {**user, "email": me["third"], "email_verified": False}, where
        assert len(set(facts["stale_links"])) == 2, where


def expected_recipients(everyone: dict) -> list[str]:
    """Every mail the walks cause: the new address's link, once on saving and once by the
    button, then (full walks) one for each of two more addresses; each change also tells the
    address it left (a notice without a link); nothing for the forged form, nothing for a
    profile saved with its address as it was, nothing for the admin API's change."""
    out = []
    for walk in MAIL_WALKS:
        me = everyone[walk]
        out += [me["email"], me["new"], me["new"]]
        if walk in FULL_WALKS:
            out += [me["new"], me["second"], me["second"], me["third"]]
    for w in ("phone-en", "phone-ja"):
        out += [everyone[w]["email"], everyone[w]["new"]]
    return sorted(out)


def test_email_change_and_verification_in_english_and_japanese(start_authrim, tmp_path):
    needs_browser()
    mailbox = Mailbox().start()
    checker = None
    try:
        server = start_authrim("account-email", {"AUTHRIM_SMTP_URL": mailbox.url})
        everyone = people(server)
        client = {"client_id": server.unique("account-email-rp")}
        checker = Checker(server, mailbox, client, {"user": lambda body: admin_user(server, body["id"])},
                          id_token_claims=("email", "email_verified"))
        client["redirect_uri"] = checker.origin + "/cb"
        reg = server.create_client(client_id=client["client_id"], client_name=CLIENT_NAME,
                                   redirect_uris=[client["redirect_uri"]], token_endpoint_auth_method="client_secret_basic",
                                   grant_types=["authorization_code"], scope="openid email")
        client["client_secret"] = reg["client_secret"]
        seen, report = run_program(PROGRAM, ARTIFACTS, {
            "ISSUER": server.issuer, "CLIENT_ID": client["client_id"], "REDIRECT_URI": client["redirect_uri"],
            "PEOPLE": json.dumps(everyone), "PASSWORD": PASSWORD, "WAIT_MS": str(WAIT_MS),
        }, checker, tmp_path, RUN_TIMEOUT_S)

        # The link confirms once, whoever posts it; no token is no link.
        spent = seen["facts"]["en"]["links"][1].split("token=", 1)[1]
        again = requests.post(server.url(VERIFY), data={"token": spent}, timeout=HTTP_TIMEOUT_S)
        no_token = requests.post(server.url(VERIFY), data={}, timeout=HTTP_TIMEOUT_S)
        # A link whose address the admin changed since: still stored (the only one sent), and
        # refused for the address; the new address stays unverified.
        erin = everyone["en"]
        live = seen["facts"]["en"]["stale_links"][1].split("token=", 1)[1]
        moved = requests.patch(server.url(f"/admin/users/{erin['id']}"), json={"claims": {"email": "erin@fourth.example"}},
                               headers={"Authorization": f"Bearer {server.admin_token}"}, timeout=HTTP_TIMEOUT_S)
        assert moved.status_code == 200, moved.text
        still_open = requests.get(server.url(VERIFY), params={"token": live}, timeout=HTTP_TIMEOUT_S)
        changed_since = requests.post(server.url(VERIFY), data={"token": live}, timeout=HTTP_TIMEOUT_S)
        after_changed_since = admin_user(server, erin["id"])
        time.sleep(QUIET_S)  # a mail that should not come (the forged form's) has had its time
        received = mailbox.recipients()
    finally:
        if checker:
            checker.close()
        mailbox.stop()

    # The walks, their pages in order, each reached the way it should be, saying what it should.
    check_walks(seen, WALKS, expected_pages, report)
    check_pages(seen, everyone, report)
    check_facts(seen, everyone, server, client, report)
    check_error_page(again, 400, "en", WORDS["en"]["dead"])
    check_error_page(no_token, 400, "en", WORDS["en"]["dead"])
    # The link is still stored, but its address is no longer hers: refused when opened and
    # when confirmed.
    check_error_page(still_open, 400, "en", WORDS["en"]["dead"])
    check_error_page(changed_since, 400, "en", WORDS["en"]["dead"])
    assert after_changed_since == {"status": 200, "email": "erin@fourth.example", "email_verified": False,
                                   "name": erin["name"], "locale": None}, after_changed_since

    # The mails: exactly those the walks caused; each to the new address, in the account's
    # language, the whole body as the templates make it, its link the one the browser opened.
    assert sorted(r for rs in received for r in rs) == expected_recipients(everyone) and all(
        len(rs) == 1 for rs in received), (received, report)
    sender = Address("Authrim", addr_spec=f"noreply@{sender_host(server)}")
    labels = {"mail-changed": "new", "mail-sent": "new", "mail-second": "second", "mail-third": "third"}
    for (walk, label), d in sorted(checker.mails.items()):
        lang = MAIL_LANG[walk]
        words = mail_words(lang, "Authrim")
        link = check_mail(d, to=everyone[walk][labels[label]], sender=sender, subject=words["subject"],
                          sentences=words["mail"], lang=lang, issuer=server.issuer, path=VERIFY,
                          where=(walk, label, describe([d])))
        assert d["body"].rstrip("\n") == f"{words['mail'][0]}\n\n{link}\n\n{words['mail'][1]}\n\n-- \nAuthrim", (
            walk, label, d["body"])
        facts = seen["facts"][walk]
        opened = {"mail-changed": facts["links"][0], "mail-sent": facts["links"][1]}
        if walk in FULL_WALKS:
            opened.update({"mail-second": facts["stale_links"][0], "mail-third": facts["stale_links"][1]})
        assert link == opened[label], (walk, label, link, facts)
    assert sorted(checker.mails) == sorted((w, label) for w in MAIL_WALKS for label in labels
                                           if w in FULL_WALKS or label in ("mail-changed", "mail-sent")), sorted(checker.mails)

    # axe-core: the harness first, then the pages of the e-mail's verification, both languages and themes.
    check_axe(seen, [p for p in seen["pages"] if p.get("axe")],
              [(w, n) for w in ("axe-en", "axe-ja") for n in AXE if n in AXE_PAGES], PROGRAM.parent / "package.json", report)

    # Wording: nothing in another language unless marked so.
    names = [CLIENT_NAME, "Authrim", "Your account", *NAMES.values(), *NEW_NAMES.values()] + [
        v for p in everyone.values() for k, v in p.items() if k not in ("name", "new_name")]
    wording = [line for p in seen["pages"] for line in other_language(p, lang_of(p["walk"]), names)]
    assert not wording, "pages' wording:\n" + "\n".join(wording)

    # Screenshots of every page of the en, ja and phone walks.
    warn_without_japanese_font(seen)
    shots = [f"{walk}-{n:02d}-{name}.png" for walk in ("en", "ja", "phone-en", "phone-ja")
             for n, name in enumerate(expected_pages(walk), 1)]
    check_screenshots(seen, ARTIFACTS, shots, report)
    # A request may fail only as the favicon's (the logo, which Chromium fetches after the load
    # event) cut short by the walk's next navigation.
    assert [r for r in seen["failed_requests"] if (r["error"], urlsplit(r["url"]).path) != (
        "net::ERR_ABORTED", "/assets/logo.svg")] == [], report
    check_browser_clean(seen, report, DELIBERATE)


# ---------------------------------------------------------------------------------------------
# Without a browser: the recent sign-in, the theme's templates, a broken theme.


def test_changes_need_a_recent_sign_in(start_authrim):
    """``account_reauth_max_age``: an older sign-in neither changes the address nor sends a link."""
    mailbox = Mailbox().start()
    try:
        server = start_authrim("account-email-reauth", {"AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_ACCOUNT_REAUTH_MAX_AGE": "1"})
        user = server.create_user("ruth", PASSWORD, {"email": "ruth@example.com", "email_verified": False})
        browser, overview = account_session(server, "ruth", PASSWORD)
        assert SEND in overview.text, overview.text  # unverified: the button is there
        csrf = account_csrf(overview)
        time.sleep(2.2)
        late = [browser.post(server.url(SEND), data={"csrf": csrf}, timeout=HTTP_TIMEOUT_S, allow_redirects=False),
                browser.post(server.url("/account/profile"), data={"csrf": csrf, "email": "ruth@new.example"},
                             timeout=HTTP_TIMEOUT_S, allow_redirects=False)]
        unchanged = admin_user(server, user["id"])
        time.sleep(QUIET_S)
        nothing = mailbox.recipients()
        # Signed in again: the button sends the link.
        browser, overview = account_session(server, "ruth", PASSWORD)
        sent = browser.post(server.url(SEND), data={"csrf": account_csrf(overview)}, timeout=HTTP_TIMEOUT_S)
        mail = decode(mailbox.next_to("ruth@example.com"))
    finally:
        mailbox.stop()
    for resp in late:
        assert resp.status_code == 403 and heading(resp.text) == WORDS["en"]["reauth"], (resp.status_code, resp.text)
    assert unchanged == {"status": 200, "email": "ruth@example.com", "email_verified": False, "name": None,
                         "locale": None}, unchanged
    assert nothing == [], nothing
    assert sent.status_code == 200 and WORDS["en"]["sent"] in html_text(sent.text), sent.text
    assert mail["to"] == ["ruth@example.com"] and mail["links"][0].startswith(server.issuer + VERIFY), describe([mail])


# A theme's mail templates: the frame in the mail's language (`lang`), the reset's own body.
THEME_FRAME = """{% if lang == "ja" %}こんにちは。{% else %}Hello,{% endif %}

{% block body %}{% endblock %}

{% if lang == "ja" %}{{ product }} チーム{% else %}The {{ product }} team{% endif %}
"""
THEME_RESET = """{% extends "mail.txt" %}{% block body %}{% if lang == "ja" -%}
{{ product }} の新しいパスワードは、{{ minutes }} 分以内にこちらで設定できます:
{%- else -%}
Choose a new {{ product }} password within {{ minutes }} minutes here:
{%- endif %}
{{ link }}{% endblock %}
"""
PRODUCT = "Tom & Jerry's"


def write_theme(root: Path, templates: dict[str, str]) -> Path:
    (root / "templates").mkdir(parents=True)
    for name, text in templates.items():
        (root / "templates" / name).write_text(text)
    return root


def test_mail_templates_from_a_theme(start_authrim, tmp_path):
    theme = write_theme(tmp_path / "theme", {"mail.txt": THEME_FRAME, "mail_reset.txt": THEME_RESET})
    mailbox = Mailbox().start()
    try:
        server = start_authrim("account-email-theme", {"AUTHRIM_SMTP_URL": mailbox.url, "AUTHRIM_THEME_DIR": str(theme),
                                                       "AUTHRIM_PRODUCT_NAME": PRODUCT})
        server.create_user("tom", PASSWORD, {"email": "tom@example.com", "email_verified": True})
        server.create_user("kenji", PASSWORD, {"email": "kenji@example.com", "email_verified": True, "locale": "ja"})
        for login in ("tom", "kenji@example.com"):
            assert forgot(server, login).status_code == 200
        resets = {to: decode(mailbox.next_to(to)) for to in ("tom@example.com", "kenji@example.com")}
        # An address changed on the account page: the built-in message in the theme's frame.
        verifies = {}
        for username, new in (("tom", "tom@new.example"), ("kenji", "kenji@new.example")):
            browser, _ = account_session(server, username, PASSWORD)
            form = browser.get(server.url("/account/profile"), timeout=HTTP_TIMEOUT_S)
            saved = browser.post(server.url("/account/profile"), data={
                "csrf": account_csrf(form), "email": new, "locale": "ja" if username == "kenji" else ""}, timeout=HTTP_TIMEOUT_S)
            assert saved.status_code == 200 and saved.url.endswith("/account?done=profile-verify"), (saved.url, saved.text)
            verifies[new] = decode(mailbox.next_to(new))
    finally:
        mailbox.stop()

    sender = Address(PRODUCT, addr_spec=f"noreply@{sender_host(server)}")
    frames = {"en": ("Hello,\n\n", f"\n\nThe {PRODUCT} team"), "ja": ("こんにちは。\n\n", f"\n\n{PRODUCT} チーム")}
    reset_words = {"en": (f"Reset your {PRODUCT} password", f"Choose a new {PRODUCT} password within 30 minutes here:"),
                   "ja": (f"{PRODUCT} のパスワードの再設定", f"{PRODUCT} の新しいパスワードは、30 分以内にこちらで設定できます:")}
    for to, d in resets.items():
        lang = "ja" if to.startswith("kenji") else "en"
        subject, sentence = reset_words[lang]
        link = check_mail(d, to=to, sender=sender, subject=subject, sentences=[sentence], lang=lang, issuer=server.issuer,
                          path="/login/reset", where=describe([d]), frame=frames[lang])
        # Word for word the theme's: its frame around its body, nothing escaped for HTML.
        assert d["body"].rstrip("\n") == f"{frames[lang][0]}{sentence}\n{link}{frames[lang][1]}", (to, d["body"])
    for to, d in verifies.items():
        lang = "ja" if to.startswith("kenji") else "en"
        words = mail_words(lang, PRODUCT)
        link = check_mail(d, to=to, sender=sender, subject=words["subject"], sentences=words["mail"], lang=lang,
                          issuer=server.issuer, path=VERIFY, where=describe([d]), frame=frames[lang])
        assert d["body"].rstrip("\n") == (f"{frames[lang][0]}{words['mail'][0]}\n\n{link}\n\n{words['mail'][1]}"
                                                f"{frames[lang][1]}"), (to, d["body"])
        assert "\n-- \n" not in d["body"], d["body"]  # the built-in frame's signature: replaced


def test_a_broken_mail_template_stops_the_server(tmp_path):
    """A theme's mail template that cannot render (an unknown filter, found only when rendered)
    or parse: ``authrim serve`` exits non-zero at start, naming the template."""
    broken = {
        "filter": ({"mail.txt": "{% block body %}{% endblock %}\n\n-- \n{{ product | shout }}\n"},
                   ["mail.txt", "unknown filter", "shout"]),
        "syntax": ({"mail_verify_email.txt": '{% extends "mail.txt" %}{% block body %}{{ link }\n'},
                   ["mail_verify_email.txt", "syntax error"]),
    }
    outcomes = {}
    for name, (templates, words) in broken.items():
        theme = write_theme(tmp_path / name / "theme", templates)
        data = tmp_path / name / "data"
        data.mkdir()
        port = _free_port()
        env = dict(os.environ, AUTHRIM_LISTEN=f"127.0.0.1:{port}", AUTHRIM_ISSUER=f"http://127.0.0.1:{port}",
                   AUTHRIM_DATA_DIR=str(data), AUTHRIM_THEME_DIR=str(theme), AUTHRIM_ADMIN_TOKEN="x" * 32)
        try:
            done = subprocess.run([str(_resolve_binary()), "serve"], cwd=str(REPO_ROOT), env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, text=True, timeout=30)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f"{name}: the server did not stop: {exc.stdout}{exc.stderr}") from exc
        outcomes[name] = (done.returncode, done.stdout + done.stderr, words)
    for name, (code, output, words) in outcomes.items():
        last = output.strip().splitlines()[-1] if output.strip() else ""
        assert code != 0 and all(word in last for word in words), (name, code, words, output)
