"""Two tenants of one deployment in one Chromium (issue 31; ``browser/tenants.mjs``).

The default tenant and a tenant ``acme`` at ``{issuer}/t/acme`` share a host, hence a
browser's cookie jar. Each has a client ``rp`` and a user ``alice`` (the same names, other
passwords' hashes, other display names). The browser signs in at the default tenant, then is
asked to sign in again at acme; signed in at both, silent requests get codes at each; signed
out at acme, it is still signed in at the default tenant. Each code is redeemed at its own
tenant's token endpoint and its ID token checked (issuer, name); the other tenant refuses it.

Needs Chromium and ``npm ci`` in ``browser/`` (as test_browser.py).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

from conftest import TIME_SCALE, admin
from test_browser import CHROMIUM, WAIT_MS, needs_browser

PROGRAM = Path(__file__).resolve().parent / "browser" / "tenants.mjs"
PASSWORD = "correct horse battery staple"


class RelyingParty:
    """The client's redirect URI: a page on loopback, whatever it is asked."""

    def __init__(self):
        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                body = b"<!doctype html><title>rp</title><p>back at the client"
                self.send_response(200)
                self.send_header("content-type", "text/html")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.redirect_uri = f"http://127.0.0.1:{self.httpd.server_address[1]}/cb"

    def close(self):
        self.httpd.shutdown()


def claims(jwt: str) -> dict:
    part = jwt.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def redeem(server, prefix: str, secret: str, code: str, redirect_uri: str) -> requests.Response:
    return requests.post(server.url(f"{prefix}/token"), auth=("rp", secret), timeout=10,
                         data={"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri})


def test_two_tenants_in_one_browser_keep_their_own_sessions(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("tenants", {})
    resp = admin(server, "POST", "/admin/tenants", {"slug": "acme"})
    assert resp.status_code == 201, resp.text
    tenant_issuer = resp.json()["issuer"]
    assert tenant_issuer == f"{server.issuer}/t/acme"
    rp = RelyingParty()
    try:
        secrets = {}
        for prefix, name in (("", "Alice Default"), ("/t/acme", "Alice Acme")):
            resp = admin(server, "POST", f"{prefix}/admin/clients", {"client_id": "rp", "redirect_uris": [rp.redirect_uri]})
            assert resp.status_code == 201, resp.text
            secrets[prefix] = resp.json()["client_secret"]
            resp = admin(server, "POST", f"{prefix}/admin/users", {"username": "alice", "password": PASSWORD, "claims": {"name": name}})
            assert resp.status_code == 201, resp.text
        env = dict(os.environ, SECRETS=json.dumps({"default": secrets[""], "acme": secrets["/t/acme"]}), ISSUER=server.issuer, TENANT_ISSUER=tenant_issuer, CLIENT_ID="rp",
                   REDIRECT_URI=rp.redirect_uri, PASSWORD=PASSWORD, CHROMIUM=CHROMIUM, WAIT_MS=str(WAIT_MS),
                   ARTIFACTS_DIR=str(tmp_path))
        done = subprocess.run(["node", str(PROGRAM)], cwd=PROGRAM.parent, env=env, capture_output=True,
                              text=True, timeout=90 * TIME_SCALE)
        assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
        seen = json.loads(done.stdout.strip().splitlines()[-1])
    finally:
        rp.close()

    # Signed in at the default tenant, the browser was asked to sign in again at acme.
    assert seen["first_default"]["signed_in_here"] is True, seen
    assert seen["then_acme"]["signed_in_here"] is True, seen
    # Each tenant's cookies are scoped to its own path.
    acme_cookies = [c for c in seen["cookies"] if c["path"].startswith("/t/acme")]
    assert acme_cookies, seen["cookies"]
    assert all(c["path"] in ("/", "/t/acme") for c in seen["cookies"]), seen["cookies"]
    # Acme's codes, redeemed by the program before it signed out: acme's user, whose token
    # acme's userinfo takes and the default tenant's refuses.
    for got in seen["redeemed_acme"]:
        assert got["status"] == 200, got
        assert claims(got["id_token"])["iss"] == tenant_issuer, got
        assert got["userinfo"]["acme"]["status"] == 200 and got["userinfo"]["acme"]["body"]["name"] == "Alice Acme", got
        assert got["userinfo"]["default"]["status"] == 401, got
    # The default tenant's codes: redeemed there with its user, refused by acme; acme's, used
    # already (and their session since ended), refused everywhere.
    for step in ("then_acme", "silent_acme"):
        for prefix in ("", "/t/acme"):
            again = redeem(server, prefix, secrets[prefix], seen[step]["code"], rp.redirect_uri)
            assert again.status_code == 400 and again.json()["error"] == "invalid_grant", (step, prefix, again.text)
    for step, prefix, name in (("first_default", "", "Alice Default"), ("silent_default", "", "Alice Default"),
                               ("after_logout_default", "", "Alice Default")):
        code = seen[step].get("code")
        assert code, (step, seen[step])
        other = "/t/acme" if prefix == "" else ""
        wrong = redeem(server, other, secrets[other], code, rp.redirect_uri)
        assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant", (step, wrong.text)
        resp = redeem(server, prefix, secrets[prefix], code, rp.redirect_uri)
        assert resp.status_code == 200, (step, resp.text)
        id_token = claims(resp.json()["id_token"])
        assert id_token["iss"] == (tenant_issuer if prefix else server.issuer), (step, id_token)
        bearer = {"Authorization": f"Bearer {resp.json()['access_token']}"}
        me = requests.get(server.url(f"{prefix}/userinfo"), headers=bearer, timeout=10)
        assert me.status_code == 200 and me.json()["name"] == name, (step, me.text)
        assert me.json()["sub"] == id_token["sub"], (step, me.text)
        assert requests.get(server.url(f"{other}/userinfo"), headers=bearer, timeout=10).status_code == 401, step
    # Signed out at acme (its own confirmation form), signed in still at the default tenant.
    assert seen["acme_logout_form_action"].startswith("/t/acme/"), seen
    assert seen["after_logout_acme"].get("error") == "login_required", seen
