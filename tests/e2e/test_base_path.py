"""An issuer with a path behind a prefix-stripping proxy (issue 36, MCP item 3).

Authrim runs with the issuer ``http://localhost:<proxy port>/tenant1`` behind ``PrefixProxy``
(``prefix_proxy.py``), which forwards ``/tenant1/…`` to Authrim's root and answers 404 to
everything else (recording it). Everything is done through the proxy, as a browser and a
client would: discovery (the issuer's own and RFC 8414's path-inserted form), the code flow
through the login and consent pages (every form, redirect and cookie path under the prefix),
the token and userinfo endpoints, every asset the pages load, the account page's sign-in, and
the console's. At the end nothing has left the prefix.
"""

from __future__ import annotations

from html.parser import HTMLParser
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import requests

from conftest import ALICE_PASSWORD, HTTP_TIMEOUT_S
from prefix_proxy import PrefixProxy
from test_authlib import browser_authorize, describe

PREFIX = "/tenant1"
REDIRECT = "http://127.0.0.1:9/cb"


class _Urls(HTMLParser):
    def __init__(self):
        super().__init__()
        self.urls: list[tuple[str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src", "action", "formaction") and value:
                self.urls.append((tag, name, value))


def page_urls(html: str) -> list[tuple[str, str, str]]:
    p = _Urls()
    p.feed(html)
    return p.urls


def assert_under_prefix(resp: requests.Response, seen_assets: set[str]):
    """Every URL of ours the page names is under the prefix; its assets load through it."""
    for tag, attr, url in page_urls(resp.text):
        if url.startswith("/") and not url.startswith("//"):
            assert url == PREFIX or url.startswith(PREFIX + "/"), (
                f"<{tag} {attr}={url!r}> outside {PREFIX} on {resp.url}")
            if "/assets/" in url:
                seen_assets.add(url)


def assert_cookie_paths(resp: requests.Response):
    for c in resp.raw.headers.get_all("Set-Cookie") or []:
        assert f"Path={PREFIX};" in c, f"cookie not scoped to {PREFIX}: {c}"


def test_everything_works_behind_a_prefix_stripping_proxy(start_authrim):
    with PrefixProxy(upstream_port=0, prefix=PREFIX) as proxy:
        origin = f"http://localhost:{proxy.port}"
        issuer = origin + PREFIX
        server = start_authrim("base-path", {"AUTHRIM_ISSUER": issuer, "AUTHRIM_CONSOLE_MFA": "if_enrolled"})
        proxy.upstream_port = int(server.base_url.rsplit(":", 1)[1])
        assets: set[str] = set()

        # Discovery through the proxy, in both forms.
        d = requests.get(issuer + "/.well-known/openid-configuration", timeout=HTTP_TIMEOUT_S)
        assert d.status_code == 200, describe(d)
        meta = d.json()
        assert meta["issuer"] == issuer
        for name in ("authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "end_session_endpoint"):
            assert meta[name].startswith(issuer + "/"), (name, meta[name])
        d2 = requests.get(f"{origin}/.well-known/oauth-authorization-server{PREFIX}", timeout=HTTP_TIMEOUT_S)
        assert d2.status_code == 200 and d2.json()["issuer"] == issuer, describe(d2)
        assert requests.get(meta["jwks_uri"], timeout=HTTP_TIMEOUT_S).json()["keys"]

        # The code flow through the pages.
        client = server.create_client(redirect_uris=[REDIRECT], client_name="Prefixed RP",
                                      token_endpoint_auth_method="client_secret_basic")
        alice = server.unique("alice")
        server.create_user(alice, ALICE_PASSWORD, {"email": f"{alice}@example.com"})
        admin = server.unique("root")
        made = server.admin_post("/admin/users", {"username": admin, "password": ALICE_PASSWORD, "claims": {}, "roles": ["admin"]})
        assert made.status_code == 201, describe(made)
        browser = requests.Session()
        query = {"response_type": "code", "client_id": client["client_id"], "redirect_uri": REDIRECT,
                 "scope": "openid email", "state": "st", "nonce": "n"}
        auth_url = meta["authorization_endpoint"] + "?" + urlencode(query)
        first = browser.get(auth_url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
        assert first.status_code == 200, describe(first)
        assert_under_prefix(first, assets)
        assert_cookie_paths(first)
        location, consent_shown = browser_authorize(server, auth_url, alice, ALICE_PASSWORD, browser, base=PREFIX)
        assert consent_shown
        assert location.startswith(REDIRECT), location
        params = parse_qs(urlsplit(location).query)
        assert params["state"] == ["st"], location
        session_cookie = [c for c in browser.cookies if c.name == "authrim_session"]
        assert session_cookie and session_cookie[0].path == PREFIX, [(c.name, c.path) for c in browser.cookies]

        tok = requests.post(meta["token_endpoint"], auth=(client["client_id"], client["client_secret"]),
                            data={"grant_type": "authorization_code", "code": params["code"][0], "redirect_uri": REDIRECT},
                            timeout=HTTP_TIMEOUT_S)
        assert tok.status_code == 200, describe(tok)
        ui = requests.get(meta["userinfo_endpoint"], headers={"Authorization": f"Bearer {tok.json()['access_token']}"},
                          timeout=HTTP_TIMEOUT_S)
        assert ui.status_code == 200 and ui.json()["email"] == f"{alice}@example.com", describe(ui)

        # The account page: its sign-in (already signed in: straight through) and the page.
        resp = browser.get(issuer + "/account", timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        assert urlsplit(resp.url).path == PREFIX + "/account", resp.url
        assert alice in resp.text
        assert_under_prefix(resp, assets)
        for r in resp.history:
            loc = r.headers.get("Location", "")
            assert loc.startswith(PREFIX + "/") or loc.startswith(issuer + "/"), (r.status_code, loc)

        # The console: its own sign-in, as an admin, then its pages.
        console = requests.Session()
        resp = console.get(issuer + "/console", allow_redirects=True, timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200 and 'name="challenge"' in resp.text, describe(resp)
        location, _ = browser_authorize(server, resp.url, admin, ALICE_PASSWORD, console, base=PREFIX)
        assert location.startswith(issuer + "/console/callback"), location
        resp = console.get(location, timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200 and urlsplit(resp.url).path == PREFIX + "/console", describe(resp)
        assert_under_prefix(resp, assets)
        for page in ("/console/clients", "/console/users", "/console/audit"):
            r = console.get(issuer + page, timeout=HTTP_TIMEOUT_S)
            assert r.status_code == 200, describe(r)
            assert_under_prefix(r, assets)

        # The landing and an error page, and every asset the pages named.
        for path in ("/", "/account/nothing-here"):
            r = requests.get(issuer + path, timeout=HTTP_TIMEOUT_S)
            assert_under_prefix(r, assets)
        assert {PREFIX + "/assets/style.css", PREFIX + "/assets/logo.svg", PREFIX + "/assets/ui.js"} <= assets, assets
        for a in sorted(assets):
            r = requests.get(urljoin(origin, a), timeout=HTTP_TIMEOUT_S)
            assert r.status_code == 200 and r.content, describe(r)

        assert proxy.outside == [], f"requests left {PREFIX}: {proxy.outside}"
