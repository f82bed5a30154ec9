"""What the browser tests of mailed links share (``test_reset.py``, ``test_signup.py``,
``test_account_email.py``): a real SMTP server (aiosmtpd) and the messages it received, decoded
with Python's ``email`` package; the checker, an HTTP server the browser program asks for what
only Python does (the next mail to an address, a code redeemed at the token endpoint, and the
test's own ``ops``) and that serves the client's redirect URI; running the program with its
screenshots kept; and the checks of its pages (language, wording, axe-core, screenshots) and of
plain HTTP answers (and the account page signed in to without a browser).
"""

from __future__ import annotations

import ipaddress
import json
import re
import threading
import time
import warnings
from email import message_from_bytes, policy
from email.headerregistry import Address
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import requests
from aiosmtpd.controller import Controller
from joserfc import jwt
from joserfc.jwk import KeySet

from conftest import HTTP_TIMEOUT_S, _free_port, brief_pages, run_browser_program
from test_pages import CJK, ENGLISH_PHRASE, axe_findings

MAIL_WAIT_S = 10.0  # delivery is asynchronous: the outbox is woken on enqueue, polled every 2 s
QUIET_S = 3.0  # after the last request: long enough for a mail that should not come to come
AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]


def sender_host(server) -> str:
    """The default sender's domain: the issuer's host, or ``localhost`` for an IP issuer (an
    address literal is no domain for a mailbox)."""
    host = urlsplit(server.issuer).hostname
    try:
        ipaddress.ip_address(host)
        return "localhost"
    except ValueError:
        return host


# ---------------------------------------------------------------------------------------------
# The SMTP server and the mail it received.


class Mailbox:
    """aiosmtpd on 127.0.0.1 (``port``: a given one, or a free one): every message it accepts,
    in order, as ``(envelope sender, envelope recipients, raw bytes, arrival time)``."""

    def __init__(self, port: int | None = None):
        self.port = port or _free_port()
        self.messages: list[dict] = []
        self._cond = threading.Condition()
        outer = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                with outer._cond:
                    outer.messages.append({"mail_from": envelope.mail_from, "rcpt_tos": list(envelope.rcpt_tos),
                                           "raw": envelope.original_content, "at": time.monotonic(),
                                           "taken": False})
                    outer._cond.notify_all()
                return "250 OK"

        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)

    def start(self) -> "Mailbox":
        self.controller.start()
        return self

    def stop(self):
        self.controller.stop()

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def next_to(self, address: str, timeout: float = MAIL_WAIT_S) -> dict:
        """The first message to ``address`` not taken yet (waiting for it up to ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for m in self.messages:
                    if not m["taken"] and address in m["rcpt_tos"]:
                        m["taken"] = True
                        return m
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no mail to {address} within {timeout:.0f} s; received: "
                                         f"{[(m['rcpt_tos'], m['taken']) for m in self.messages]}")
                self._cond.wait(left)

    def recipients(self) -> list[list[str]]:
        with self._cond:
            return [m["rcpt_tos"] for m in self.messages]


def decode(m: dict) -> dict:
    """A received message as Python's ``email`` package reads it (the body's line breaks as
    ``\n``: a base64 body keeps the CRLF of text's canonical form, which ``get_content`` leaves)."""
    msg = message_from_bytes(m["raw"], policy=policy.default)
    body = msg.get_content().replace("\r\n", "\n") if not msg.is_multipart() else None
    [sender] = msg["From"].addresses
    return {
        "mail_from": m["mail_from"], "rcpt_tos": m["rcpt_tos"],
        "from_name": sender.display_name, "from_addr": sender.addr_spec,
        "to": [a.addr_spec for a in msg["To"].addresses],
        "subject": str(msg["Subject"]), "content_type": msg.get_content_type(),
        "charset": msg.get_content_charset(), "body": body,
        "links": re.findall(r"https?://\S+", body or ""),
        "headers": {k.lower(): str(v) for k, v in msg.items()},
    }


def describe(mails: list[dict]) -> str:
    return json.dumps([{k: v for k, v in d.items() if k != "raw"} for d in mails], indent=1, ensure_ascii=False)


def check_mail(d: dict, *, to: str, sender: Address, subject: str, sentences: list[str], lang: str, issuer: str,
               path: str, where, frame: tuple[str, str] | None = None) -> str:
    """One mail with a link: envelope and headers (``sender``, ``to``), ``subject``,
    ``text/plain; charset=utf-8``, the ``sentences`` it must say, all in ``lang`` (Japanese
    with no English phrase but the link, or no Japanese at all), and one link: on the issuer
    at ``path``, with only a long random ``token``, on a line of its own (nothing glued to it a
    mail reader would take along); ``frame``: what the body starts and ends with (the
    ``mail.txt`` template's words around the message's; final line breaks aside). Returns the
    link."""
    where = (to, lang, where)
    assert (d["mail_from"], d["rcpt_tos"]) == (sender.addr_spec, [to]), where
    assert (d["from_name"], d["from_addr"]) == (sender.display_name, sender.addr_spec), where
    assert d["to"] == [to] and d["subject"] == subject, where
    assert (d["content_type"], d["charset"]) == ("text/plain", "utf-8"), where
    for sentence in sentences:
        assert sentence in d["body"], (sentence, where)
    if frame is not None:
        body = d["body"].rstrip("\n")
        assert body.startswith(frame[0]) and body.endswith(frame[1]), (frame, d["body"], where)
    assert len(d["links"]) == 1, where
    [link] = d["links"]
    parts = urlsplit(link)
    assert f"{parts.scheme}://{parts.netloc}" == issuer and parts.path == path, (link, where)
    query = parse_qs(parts.query)
    assert list(query) == ["token"] and re.fullmatch(r"[A-Za-z0-9_-]{32,}", query["token"][0]), (link, where)
    assert link in [line.strip() for line in d["body"].splitlines()], where
    if lang == "ja":
        assert CJK.search(d["body"]) and not ENGLISH_PHRASE.search(d["body"].replace(link, " ")), where
    else:
        assert not CJK.search(d["body"]) and not CJK.search(d["subject"]), where
    return link


# ---------------------------------------------------------------------------------------------
# What the browser program asks Python, and the client's redirect URI.


class Checker:
    """``POST /check`` with JSON ``{walk, label, op}``: op ``mail`` waits for the next mail to
    ``to`` and answers its link (the message kept, decoded, under the walk and label); op
    ``redeem`` redeems ``code`` at the token endpoint (``client_secret_basic``, the PKCE
    verifier) and verifies the ID token against the JWKS (its ``id_token_claims`` answered
    too, as ``claims``, when asked for, and the same from userinfo); any other op is ``ops[op](body)``. ``GET /cb`` is the
    client's redirect URI: a small page, what it was sent recorded."""

    def __init__(self, server, mailbox: Mailbox, client: dict, ops: dict | None = None,
                 id_token_claims: tuple[str, ...] = ()):
        self.server, self.mailbox, self.client = server, mailbox, client
        self.ops = ops or {}
        self.id_token_claims = id_token_claims
        self.mails: dict[tuple[str, str], dict] = {}
        self.results: dict[tuple[str, str], dict] = {}
        self.callbacks: list[dict] = []
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                url = urlsplit(self.path)
                if url.path == "/cb":
                    with lock:
                        outer.callbacks.append({k: v[0] for k, v in parse_qs(url.query).items()})
                    body = b'<!doctype html><html lang="en"><title>Example App</title><p>Signed in.</p></html>'
                    self.send_response(200)
                    self.send_header("Content-Type", "text/html; charset=utf-8")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                else:  # the favicon: none, without an error
                    self.send_response(204)
                    self.end_headers()

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                try:
                    result = outer.run(body)
                except BaseException as exc:  # reported to the program, which fails with it
                    result, status = {"exception": repr(exc)}, 500
                else:
                    status = 200
                with lock:
                    outer.results[(body["walk"], body["label"])] = result
                data = json.dumps(result, ensure_ascii=False).encode()
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
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()

    def run(self, body: dict) -> dict:
        if body["op"] == "mail":
            d = decode(self.mailbox.next_to(body["to"]))
            self.mails[(body["walk"], body["label"])] = d
            return {"link": d["links"][0] if d["links"] else None, "subject": d["subject"]}
        if body["op"] == "redeem":
            return self.redeem(body)
        return self.ops[body["op"]](body)

    def redeem(self, body: dict) -> dict:
        server, client = self.server, self.client
        resp = requests.post(server.url("/token"), auth=(client["client_id"], client["client_secret"]),
                             data={"grant_type": "authorization_code", "code": body["code"],
                                   "redirect_uri": client["redirect_uri"], "code_verifier": body["verifier"]},
                             timeout=HTTP_TIMEOUT_S)
        out = {"status": resp.status_code, "error": resp.json().get("error")}
        if resp.status_code == 200:
            discovery = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
            jwks = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S)
            claims = jwt.decode(resp.json()["id_token"], KeySet.import_key_set(jwks.json()), algorithms=["RS256"]).claims
            out.update(sub=claims["sub"], aud=claims["aud"], iss=claims["iss"], nonce_ok=claims.get("nonce") == body["nonce"])
            if self.id_token_claims:
                out["claims"] = {c: claims.get(c) for c in self.id_token_claims}
                # The same claims at userinfo, with the access token.
                info = requests.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S,
                                    headers={"Authorization": f"Bearer {resp.json()['access_token']}"})
                out["userinfo"] = {"status": info.status_code, "sub": info.json().get("sub"),
                                   **{c: info.json().get(c) for c in self.id_token_claims}}
        return out

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)


# ---------------------------------------------------------------------------------------------
# The browser program.


def run_program(program: Path, artifacts: Path, env: dict, checker: Checker, tmp_path: Path,
                timeout: float) -> tuple[dict, str]:
    """Run the node ``program`` with ``env`` (and CHECKER, CHROMIUM, ARTIFACTS_DIR) in the
    environment; its screenshots (and, on a failure, the page as ``failure.*``) are copied to
    ``artifacts`` whatever the outcome, over an earlier run's. Returns what it printed, and
    that with what the checker did, as a report."""
    def checked() -> str:
        results = {f"{w} {label}": r for (w, label), r in checker.results.items()}
        return f"\nthe checker: {json.dumps(results, indent=1, ensure_ascii=False)}"

    seen = run_browser_program(program, dict(env, CHECKER=checker.origin), tmp_path, artifacts, timeout=timeout,
                               stale=[*artifacts.glob("*-[0-9][0-9]-*.png"), *artifacts.glob("failure.*")],
                               explain=checked)
    return seen, f"{brief_pages(seen, tmp_path)}{checked()}\nthe client's redirect URI was sent: {checker.callbacks}"


# ---------------------------------------------------------------------------------------------
# The pages the program saw.


def check_walks(seen: dict, walks: dict, pages_of, report: str):
    """The walks ran in order, each browser sending its locale as Accept-Language, and took
    their pages (``pages_of(walk)``: name -> (method, path, status)) in order, each reached
    the way it should be."""
    assert [(w["name"], w["locale"], w["accept_language"]) for w in seen["walks"]] == [
        (name, locale, locale) for name, locale in walks.items()], report
    for walk in walks:
        visited = [p for p in seen["pages"] if p["walk"] == walk]
        assert [p["name"] for p in visited] == list(pages_of(walk)), (walk, report)
        for p in visited:
            assert (p["method"], p["path"], p["status"]) == pages_of(walk)[p["name"]], (walk, p["name"], report)


def check_page(p: dict, lang: str, title: str, head: str, sentence: str):
    """A page in ``lang``: its headers, ``<html lang>``, title (`` · Authrim`` after it),
    heading and a sentence it must say."""
    where = (p["walk"], p["name"])
    assert p["content_language"] == lang and p["html_lang"] == lang, (where, p["content_language"], p["html_lang"])
    assert "accept-language" in (p["vary"] or "").lower(), (where, p["vary"])
    assert p["content_type"].startswith("text/html"), (where, p["content_type"])
    assert (p["title"], p["heading"]) == (f"{title} · Authrim", head), where
    assert sentence in p["text"], (where, sentence, p["text"])
    if lang == "ja":
        assert CJK.search(p["title"]), (where, p["title"])


def other_language(p: dict, lang: str, names: list[str]) -> list[str]:
    """Text in another language than the page's, not marked as such (WCAG 3.1.2); names and
    addresses may stand in any."""
    found = []
    for part in p["parts"]:
        if (part["lang"] or "").split("-")[0] != lang:
            continue
        text = re.sub(r"https?://\S+", " ", part["text"])
        for name in names:
            text = text.replace(name, " ")
        if ENGLISH_PHRASE.search(text) if lang == "ja" else CJK.search(text):
            found.append(f"{p['walk']} {p['name']} ({p['method']} {p['path']}, lang={lang}): "
                         f"{part.get('attribute', 'text')} {part['text']!r} is marked lang={part['lang']}")
    return found


def check_axe(seen: dict, axed: list[dict], expected: list[tuple[str, str]], package_json: Path, report: str):
    """axe-core: the version pinned in ``package_json`` with AXE_TAGS' rules; the control page
    found what it should (faint text in both themes, in the dark one only, a field without a
    label); the pages run (``axed``) are the ``expected`` (walk, page) pairs, each in the light
    and the dark theme (which applied), colour contrast checked; no violation (what axe-core
    could not decide: a warning)."""
    assert seen["axe_version"] == json.loads(package_json.read_text())["dependencies"]["axe-core"], report
    assert seen["axe_tags"] == AXE_TAGS, report
    light, dark = seen["axe_control"]
    found = {r["scheme"]: {v["id"]: sorted(v["targets"]) for v in r["violations"]} for r in (light, dark)}
    assert found["light"].get("color-contrast") == [".faint"], found
    assert found["dark"].get("color-contrast") == [".dark-only", ".faint"], found
    assert found["light"].get("label") == ["input"] and found["dark"].get("label") == ["input"], found
    assert [(p["walk"], p["name"]) for p in axed] == expected, report
    for p in axed:
        lt, dk = p["axe"]
        where = (p["walk"], p["name"])
        assert (lt["scheme"], lt["dark"], dk["scheme"], dk["dark"]) == ("light", False, "dark", True), where
        assert lt["body_background"] != dk["body_background"], (where, "the dark theme did not apply")
        for run in p["axe"]:
            assert run["engine"] == seen["axe_version"], where
            assert "color-contrast" in run["passes"] + [v["id"] for v in run["violations"]], (where, run["scheme"])
    incomplete = axe_findings(axed, "incomplete")
    if incomplete:
        warnings.warn("axe-core could not decide (check by hand):\n" + "\n".join(incomplete))
    violations = axe_findings(axed, "violations")
    assert not violations, f"axe-core {seen['axe_version']} found:\n" + "\n".join(violations)


def check_screenshots(seen: dict, artifacts: Path, expected: list[str], report: str):
    assert seen["screenshots"] == expected, report
    for name in expected:
        f = artifacts / name
        assert f.is_file() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", f


# ---------------------------------------------------------------------------------------------
# Pages fetched with requests.


def html_text(html: str) -> str:
    body = re.sub(r"(?s)<(script|style|head)\b.*?</\1>", " ", html)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).replace("&#39;", "'").replace("&amp;", "&").strip()


def heading(html: str) -> str:
    m = re.search(r"<h1>(.*?)</h1>", html, re.S)
    return m.group(1).strip() if m else ""


def form_token(page: requests.Response) -> str:
    """The form's token (sealed to the browser cookie) on a page fetched with requests."""
    assert page.status_code == 200, (page.status_code, page.text)
    form = re.search(r'<input type="hidden" name="form" value="([^"]+)">', page.text)
    assert form, page.text
    return form.group(1)


def login_page(server, prefix: str) -> requests.Response:
    """The login page of a client registered for it (``prefix``: its id's), as a browser
    without a session gets it from the client's authorization request."""
    client_id = server.unique(prefix)
    server.create_client(client_id=client_id, redirect_uris=["http://127.0.0.1:9/cb"],
                         token_endpoint_auth_method="client_secret_basic", grant_types=["authorization_code"], scope="openid")
    login = requests.get(server.url("/authorize"), params={
        "response_type": "code", "client_id": client_id, "redirect_uri": "http://127.0.0.1:9/cb", "scope": "openid",
        "state": "s", "code_challenge": "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM", "code_challenge_method": "S256"},
        timeout=HTTP_TIMEOUT_S)
    assert login.status_code == 200 and 'action="/login"' in login.text, login.text
    return login


def account_session(server, username: str, password: str) -> tuple[requests.Session, requests.Response]:
    """A browser without JavaScript (requests) signed in to ``/account`` through the page's own
    sign-in (``/account/login`` to ``/authorize``, the login form, ``/account/callback``): the
    session and the overview."""
    s = requests.Session()
    login = s.get(server.url("/account"), timeout=HTTP_TIMEOUT_S)
    challenge = re.search(r'<input type="hidden" name="challenge" value="([^"]+)">', login.text)
    assert login.status_code == 200 and urlsplit(login.url).path == "/authorize" and challenge, (login.url, login.text)
    overview = s.post(server.url("/login"), data={"challenge": challenge.group(1), "username": username, "password": password},
                      timeout=HTTP_TIMEOUT_S)
    assert overview.status_code == 200 and urlsplit(overview.url).path == "/account", (overview.url, overview.text)
    return s, overview


def account_csrf(page: requests.Response) -> str:
    """The CSRF token of an account page's forms (sealed to the session cookie)."""
    csrf = re.search(r'<input type="hidden" name="csrf" value="([^"]+)">', page.text)
    assert page.status_code == 200 and csrf, (page.status_code, page.text)
    return csrf.group(1)


def check_error_page(resp: requests.Response, status: int, lang: str, sentence: str):
    where = (status, lang, resp.status_code, resp.text[:2000])
    assert resp.status_code == status, where
    assert resp.headers["Content-Type"].startswith("text/html"), where
    assert resp.headers.get("Content-Language") == lang and f'<html lang="{lang}">' in resp.text, where
    assert sentence in html_text(resp.text), where
