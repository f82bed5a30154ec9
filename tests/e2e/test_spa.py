"""A single-page application open in two tabs (issue 36): oidc-client-ts 3.5, which does not
coordinate tabs, refreshes in both at the same moment.

``browser/spa.mjs`` (see its header) signs in through the application (served here from
``browser/spa/`` on another site than Authrim's: ``localhost`` against ``127.0.0.1``, so
``/token`` and ``/userinfo`` are cross-site calls under CORS), opens a second tab, and has both
refresh at once. The server runs with its default ``refresh_reuse_grace`` (30 s):

- the application's client, with no grace of its own: both tabs get new tokens, the *same*
  successor, and both access tokens stay good (the second presentation of the token just
  replaced is within the grace, not theft);
- a client with ``refresh_reuse_grace: 0`` (strict): one tab is refused (``invalid_grant``),
  and the family is revoked as stolen, so the other tab's new access token is refused too.
  The same race, so this shows the first case is the grace's doing.
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
PROGRAM = BROWSER / "spa.mjs"
ARTIFACTS = REPO_ROOT / "target" / "e2e-artifacts" / "spa"


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve_spa(root: Path, issuer: str) -> tuple[ThreadingHTTPServer, str]:
    """The application's files on a free port of localhost: its page and script, the library's
    browser build, and a config.js naming the issuer (the client id comes in the page's URL
    and is kept in the tab's storage)."""
    for name in ("index.html", "app.js"):
        (root / name).write_bytes((BROWSER / "spa" / name).read_bytes())
    library = BROWSER / "node_modules" / "oidc-client-ts" / "dist" / "browser" / "oidc-client-ts.min.js"
    (root / "oidc-client-ts.min.js").write_bytes(library.read_bytes())
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(root)))
    url = f"http://localhost:{httpd.server_address[1]}/index.html"
    config = {"authority": issuer, "redirect_uri": url, "scope": "openid offline_access",
              "userinfo": f"{issuer}/userinfo"}
    (root / "config.js").write_text(
        "(() => {\n"
        "  const q = new URLSearchParams(location.search);\n"
        "  if (q.has('client_id')) localStorage.setItem('spa_client_id', q.get('client_id'));\n"
        f"  window.SPA = Object.assign({json.dumps(config)}, {{ client_id: localStorage.getItem('spa_client_id') }});\n"
        "})();\n")
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, url


def test_two_tabs_refreshing_at_once_stay_signed_in(start_authrim, tmp_path):
    needs_browser()
    # The server's default grace: the conftest's strict setting unset.
    server = start_authrim("spa", {"AUTHRIM_REFRESH_REUSE_GRACE": None})
    server.create_user("carol", ALICE_PASSWORD, {"email": "carol@example.com"})
    root = tmp_path / "spa"
    root.mkdir()
    httpd, spa = serve_spa(root, server.issuer)
    clients = []
    for name, extra in (("default", {}), ("strict", {"refresh_reuse_grace": 0})):
        reg = server.create_client(client_id=f"spa-{name}", redirect_uris=[spa], token_endpoint_auth_method="none",
                                   grant_types=["authorization_code", "refresh_token"], scope="openid offline_access",
                                   **extra)
        assert reg.get("refresh_reuse_grace") == extra.get("refresh_reuse_grace"), reg
        clients.append({"name": name, "client_id": reg["client_id"]})
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, ISSUER=server.issuer, SPA=spa, CLIENTS=json.dumps(clients), USERNAME="carol",
               PASSWORD=ALICE_PASSWORD, CHROMIUM=CHROMIUM, ARTIFACTS_DIR=str(ARTIFACTS), WAIT_MS=str(WAIT_MS))
    try:
        done = subprocess.run(["node", str(PROGRAM)], cwd=BROWSER, env=env, capture_output=True, text=True, timeout=90 * TIME_SCALE)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the browser program ran over {90 * TIME_SCALE} s:\n{exc.stderr}\n{exc.stdout}")
    finally:
        httpd.shutdown()
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}"
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    report = json.dumps(seen, indent=1)
    assert seen["page_errors"] == [], report

    # Both tabs' token requests reached Authrim together (the program held the first until the
    # second was sent), in both cases.
    assert [seen[c]["token_requests"] for c in ("default", "strict")] == [{"held": 2, "released_alone": 0}] * 2, report

    default = seen["default"]
    assert default["sub"] and default["sub2"] == default["sub"], report
    for tab in default["tabs"]:
        assert tab["ok"] and tab["refresh_token_changed"], report
        assert tab["userinfo_at_once"] == 200 and tab["userinfo_after"] == 200, report
    assert default["same_successor"] is True, report

    strict = seen["strict"]
    outcomes = sorted(tab["ok"] for tab in strict["tabs"])
    assert outcomes == [False, True], report
    refused = next(tab for tab in strict["tabs"] if not tab["ok"])
    assert "invalid_grant" in refused["error"] or "refresh token" in refused["error"].lower(), report
    # Theft detection revoked the family: the winner's new access token is refused too.
    assert all(tab["userinfo_after"] == 401 for tab in strict["tabs"]), report
