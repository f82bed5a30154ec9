"""OpenID Connect Session Management 1.0 in Chromium: an RP page on another origin of the
issuer's site embeds Authrim's ``check_session_iframe`` and asks it with ``postMessage``
(``browser/check_session.mjs``, see its header). While signed in the iframe answers
"unchanged" to the ``session_state`` of the authorization response and "changed" to any other
(another salt, another client); a malformed message gets "error"; after a sign-out at Authrim
the same ``session_state`` is "changed".
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import ALICE_PASSWORD, REPO_ROOT, TIME_SCALE
from test_browser import CHROMIUM, WAIT_MS, needs_browser

BROWSER = Path(__file__).resolve().parent / "browser"
PROGRAM = BROWSER / "check_session.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "check_session"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_rp(root: Path, issuer: str) -> tuple[ThreadingHTTPServer, str]:
    """The RP's page on a free port of the issuer's host: same site, another origin."""
    for name in ("rp.html", "rp.js"):
        (root / name).write_bytes((BROWSER / "check_session" / name).read_bytes())
    host = issuer.split("://", 1)[1].rsplit(":", 1)[0]
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    url = f"http://{host}:{httpd.server_address[1]}/rp.html"
    (root / "config.js").write_text(f"window.RP = {json.dumps({'issuer': issuer, 'op_origin': issuer})};\n")
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, url


def test_the_check_session_iframe_tells_an_rp_when_the_session_changes(start_authrim, tmp_path):
    needs_browser()
    server = start_authrim("check-session", {})
    server.create_user("carol", ALICE_PASSWORD, {"email": "carol@example.com"})
    root = tmp_path / "rp"
    root.mkdir()
    httpd, rp = serve_rp(root, server.issuer)
    client = server.create_client(client_id="sm-rp", redirect_uris=[rp], token_endpoint_auth_method="none",
                                  grant_types=["authorization_code"], scope="openid")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ISSUER=server.issuer, RP=rp, CLIENT_ID=client["client_id"], USERNAME="carol",
               PASSWORD=ALICE_PASSWORD, CHROMIUM=CHROMIUM, ARTIFACTS_DIR=str(ARTIFACTS), WAIT_MS=str(WAIT_MS))
    try:
        done = subprocess.run(["node", str(PROGRAM)], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=75 * TIME_SCALE)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the browser program ran over 75 s:\n{exc.stderr}\n{exc.stdout}")
    finally:
        httpd.shutdown()
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    report = json.dumps(seen, indent=1)
    assert seen["page_errors"] == [], report
    assert seen["same"] == "unchanged", report
    assert seen["other_salt"] == "changed", report
    assert seen["other_client"] == "changed", report
    assert seen["malformed"] == "error", report
    assert seen["after_logout"] == "changed", report
