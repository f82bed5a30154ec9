"""The first hour (issue 36): ``authrim serve --demo`` as the README runs it, in a real browser.

``browser/demo.mjs`` (see its header) plays the newcomer on a server started with no issuer
set (the default, ``http://localhost:<port>``): the start page, the demo application's
sign-in, its callback showing the ID token's and access token's claims and userinfo, "Sign
out" back to the demo page, "Sign in again", then a passkey added on the account page with
the DevTools virtual authenticator and a sign-in to the demo with it. Then the server is
restarted on the same data directory (the banner prints the same client secret, which still
authenticates), and once more after the demo user's password changed (the banner no longer
prints it). A second test starts the demo on an IP-address issuer: no ERROR in the log, and
the start, login and account pages say why passkeys are off and how to turn them on.

Screenshots go to ``target/e2e-artifacts/demo/``. Needs what ``test_browser.py`` needs.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import requests

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, run_authrim, TIME_SCALE
from test_browser import CHROMIUM, needs_browser

PROGRAM = Path(__file__).resolve().parent / "browser" / "demo.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "demo"
WAIT_MS = 10_000
RUN_TIMEOUT_S = 120 * TIME_SCALE
ACR_PASSKEY = "urn:authrim:acr:passkey"


def run_browser(scenario: str, issuer: str, password: str = "demo-password") -> dict:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, SCENARIO=scenario, ISSUER=issuer, PASSWORD=password, CHROMIUM=CHROMIUM,
               ARTIFACTS_DIR=str(ARTIFACTS), WAIT_MS=str(WAIT_MS))
    done = subprocess.run(["node", str(PROGRAM)], cwd=PROGRAM.parent, env=env, capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S)
    assert done.returncode == 0, f"demo.mjs {scenario} failed:\n{done.stderr}\n{done.stdout}"
    return json.loads(done.stdout.strip().splitlines()[-1])


def banner(log_path: Path) -> dict:
    """The demo banner's lines (``name: value``) from the server's log."""
    text = log_path.read_text(errors="replace")
    assert "Authrim demo mode" in text, text
    block = text.split("Authrim demo mode", 1)[1]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\s+([a-z_ ]+):\s+(.+)$", block, re.M)}


def error_lines(log_path: Path) -> list[str]:
    """Log lines at ERROR level (JSON logs: "level":"ERROR"; any line saying ERROR)."""
    return [line for line in log_path.read_text(errors="replace").splitlines() if "ERROR" in line]


def axe_violations(pages: list[dict]) -> list[str]:
    return [f"{p.get('name') or p.get('path')} ({run['scheme']}): {v['id']} {v['help']} {[n['target'] for n in v['nodes']]}"
            for p in pages for run in p.get("axe", []) for v in run["violations"]]


def secret_works(server, secret: str) -> bool:
    """The demo client authenticates with `secret` (introspection answers, not 401)."""
    r = requests.post(server.url("/introspect"), data={"token": "not-a-token"},
                      auth=("demo-client", secret), timeout=HTTP_TIMEOUT_S)
    return r.status_code == 200 and r.json() == {"active": False}


def test_demo_walk_with_passkey_on_the_default_issuer(tmp_path_factory):
    needs_browser()
    with run_authrim(tmp_path_factory, "demo", host=None, args=("serve", "--demo")) as server:
        data_dir = server.data_dir
        port = server.base_url.rsplit(":", 1)[1]
        # No issuer set: the default names localhost on the port it listens on.
        issuer = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()["issuer"]
        assert issuer == f"http://localhost:{port}"
        assert error_lines(server.log_path) == []
        assert "passkeys are off" not in server.log_path.read_text()
        first = banner(server.log_path)
        assert first["user"] == "demo / demo-password", first
        assert first["demo client"] == f"{issuer}/demo", first
        assert "passkeys" not in first, first

        seen = run_browser("walk", issuer)
        report = json.dumps(seen, indent=1)[:20000]
        start, demo, callback, signed_out = seen["pages"]
        # 1. The start page links everywhere a newcomer goes, and says nothing about passkeys.
        hrefs = {link["href"] for link in start["links"]}
        assert {"/demo", "/account", "/console", "/.well-known/openid-configuration"} <= hrefs, report
        assert "README.md" in start["text"] and start["passkeys_off"] == 0, report
        assert demo["heading"] == "Demo application", report
        # 2. The demo client signs in as a client does: state, nonce, PKCE S256.
        assert seen["authorize"] == {"client_id": "demo-client", "response_type": "code", "scope": "openid profile email",
                                     "code_challenge_method": "S256", "redirect_uri": f"{issuer}/demo/callback",
                                     "has_state": True, "has_nonce": True, "has_code_challenge": True}, report
        facts = callback["facts"]
        assert callback["path"] == "/demo/callback" and callback["heading"] == "Signed in to the demo", report
        id_token, access_token, userinfo = facts["id_token"], facts["access_token"], facts["userinfo"]
        assert id_token["iss"] == issuer and id_token["aud"] == "demo-client" and id_token["nonce"], report
        assert access_token["iss"] == issuer and access_token["sub"] == id_token["sub"], report
        assert access_token["client_id"] == "demo-client", report
        assert userinfo["sub"] == id_token["sub"] and userinfo["name"] == "Demo User", report
        assert userinfo["email"] == "demo@example.com", report
        assert facts["buttons"] == ["Sign out", "Sign in again"], report
        # 3. Signed out back on the demo page; the next sign-in asks for the password again;
        #    "Sign in again" is a new sign-in (another nonce) through the open session.
        assert signed_out["path"] == "/demo" and "state=signed-out" in signed_out["search"], report
        assert signed_out["notice"].startswith("You are signed out"), report
        assert seen["after_sign_out"]["password_field"] == 1, report
        nonces = [t["nonce"] for t in seen["sign_ins"]]
        assert len(set(nonces)) == 3 and seen["third_path"] == "/demo/callback", report
        assert len({t["sub"] for t in seen["sign_ins"]}) == 1, report
        # 4. Passkeys work out of the box: added on the account page, then the demo signs in
        #    with the passkey alone (the login page's autofill request).
        assert seen["account"]["path"] == "/account" and seen["account"]["passkeys_off"] == 0, report
        assert seen["credentials"] == [{"rp_id": "localhost", "resident": True}], report
        assert seen["passkey_sign_in"]["acr"] == ACR_PASSKEY, report
        assert "pwd" not in seen["passkey_sign_in"]["amr"], report
        assert "added" in seen["webauthn"] and "asserted" in seen["webauthn"], report
        # Accessible in light and dark; nothing wider than a phone.
        langs = seen["more"]
        assert axe_violations(seen["pages"] + [langs[k] for k in ("ja/", "ja/demo", "fr/", "fr/demo")]) == [], report
        for name, w in [("/", langs["/"]["widths"]), ("/demo", langs["/demo"]["widths"]),
                        ("callback", callback["widths"]), ("signed out", signed_out["widths"])]:
            assert w["scroll_width"] <= w["client_width"], (name, w)
        assert (langs["ja/"]["lang"], langs["fr/"]["lang"]) == ("ja", "fr"), report
        assert langs["ja/demo"]["heading"] == "デモアプリケーション", report
        assert langs["fr/demo"]["heading"] == "Application de démonstration", report
        assert secret_works(server, first["client_secret"])

    # A restart on the same data directory: the same credentials, still working.
    with run_authrim(tmp_path_factory, "demo-again", host=None, args=("serve", "--demo"), data_dir=data_dir) as server:
        again = banner(server.log_path)
        assert again["client_secret"] == first["client_secret"], (first, again)
        assert again["user"] == "demo / demo-password", again
        assert secret_works(server, again["client_secret"])
        server.cli("user", "update", "demo", "--password", "a new password for the demo")

    # The banner is true: once the password changed, it no longer prints demo-password.
    with run_authrim(tmp_path_factory, "demo-changed", host=None, args=("serve", "--demo"), data_dir=data_dir) as server:
        changed = banner(server.log_path)
        assert "demo-password" not in changed["user"].split("(")[0] and "was changed" in changed["user"], changed
        assert changed["client_secret"] == first["client_secret"], changed
        assert secret_works(server, changed["client_secret"])


def test_an_ip_issuer_says_why_passkeys_are_off(tmp_path_factory):
    needs_browser()
    with run_authrim(tmp_path_factory, "demo-ip", host="127.0.0.1", args=("serve", "--demo")) as server:
        port = server.base_url.rsplit(":", 1)[1]
        # Passkeys off, said once as a warning with the way out; no ERROR line.
        assert error_lines(server.log_path) == []
        log = server.log_path.read_text()
        assert "passkeys are off" in log and f"http://localhost:{port}" in log, log
        assert "http://localhost:" in banner(server.log_path)["passkeys"]

        seen = run_browser("ip", server.issuer)
        report = json.dumps(seen, indent=1)[:20000]
        how = f"AUTHRIM_ISSUER=http://localhost:{port}"
        for page in ("start", "login", "account"):
            notice = seen[page]["notice"]
            assert notice and "IP address" in notice and how in notice, (page, report)
        assert seen["login"]["passkey_button"] == 0 and seen["account"]["add_passkey"] == 0, report
        assert axe_violations([seen["start"], seen["login"], seen["account"]]) == [], report

        # In Japanese and French too.
        for lang, words in (("ja", "パスキーは無効です"), ("fr", "Les clés d'accès sont désactivées")):
            html = requests.get(server.url("/"), headers={"Accept-Language": lang}, timeout=HTTP_TIMEOUT_S).text
            assert words in html and how in html, (lang, html)
