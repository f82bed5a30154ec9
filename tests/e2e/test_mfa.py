"""Second factors (issue 17) seen by a third-party relying party (Authlib).

An Authlib ``OAuth2Session`` (PKCE S256, state, nonce; ``client_secret_basic`` for a client
registered through the admin API) asks for a second factor with ``acr_values`` (OpenID
Connect Core §3.1.2.1) or an essential ``acr`` in the ``claims`` request (§5.5.1.1); a
``requests.Session`` plays the browser through the login page, the second-factor page
(``POST /login/second-factor``) and the consent page; the code is redeemed with Authlib's
``fetch_token`` and the ID token verified with Authlib/joserfc against the JWKS (signature,
iss, aud, nonce, at_hash) before its ``acr`` and ``amr`` (RFC 8176) are checked.

TOTP codes (RFC 6238: HMAC-SHA1, 6 digits, 30 s step) are computed here from the base32
secret the admin API returns. Authrim accepts each code once, so no test signs in twice
with TOTP for one user within one step; each test has its own user.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import struct
import time
from urllib.parse import parse_qs, urljoin, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc.errors import InvalidClaimError
from joserfc.jwt import JWTClaimsRegistry

from conftest import HTTP_TIMEOUT_S, admin
from test_authlib import REDIRECT_URI, describe, find_form, verify_id_token

ACR_MFA = "urn:authrim:acr:mfa"
ACR_PASSWORD = "urn:authrim:acr:password"
AMR_MFA = ["pwd", "otp", "mfa"]
AMR_PASSWORD = ["pwd"]
SESSION_COOKIE = "authrim_session"
PASSWORD = "second factor, first part"
SCOPE = "openid profile"
RECOVERY_CODE = re.compile(r"^[A-Z0-9]{5}-[A-Z0-9]{5}$")


# --------------------------------------------------------------------------
# RFC 6238 TOTP, by hand
# --------------------------------------------------------------------------


def hotp(key: bytes, counter: int, digits: int = 6, digest=hashlib.sha1) -> str:
    """RFC 4226 §5.3: HMAC of the big-endian counter, dynamic truncation, modulo 10^digits."""
    mac = hmac.new(key, struct.pack(">Q", counter), digest).digest()
    offset = mac[-1] & 0x0F
    binary = struct.unpack(">I", mac[offset:offset + 4])[0] & 0x7FFFFFFF
    return str(binary % 10 ** digits).zfill(digits)


def b32decode_nopad(secret: str) -> bytes:
    """RFC 4648 base32 as otpauth secrets carry it: no padding (and any case)."""
    secret = secret.strip().upper()
    return base64.b32decode(secret + "=" * (-len(secret) % 8))


def totp(secret_b32: str, at: float | None = None, digits: int = 6, step: int = 30) -> str:
    """RFC 6238 §4: HOTP with T = floor((time - T0) / step), T0 = 0."""
    at = time.time() if at is None else at
    return hotp(b32decode_nopad(secret_b32), int(at) // step, digits)


def test_totp_helper_matches_rfc6238_appendix_b():
    """The test's own TOTP against RFC 6238 Appendix B's SHA-1 vectors (seed
    "12345678901234567890", 8 digits), and its base32 path against the same seed."""
    seed = b"12345678901234567890"
    for t, want in [(59, "94287082"), (1111111109, "07081804"), (1111111111, "14050471"),
                    (1234567890, "89005924"), (2000000000, "69279037"),
                    (20000000000, "65353130")]:
        assert hotp(seed, t // 30, 8) == want, t
    b32 = base64.b32encode(seed).decode().rstrip("=")
    assert totp(b32, at=59, digits=8) == "94287082"
    assert totp(b32, at=59) == "287082"


# --------------------------------------------------------------------------
# Admin API
# --------------------------------------------------------------------------


def new_user(server, prefix: str) -> dict:
    username = server.unique(prefix)
    user = server.create_user(username, PASSWORD, {"name": f"MFA user {username}"})
    assert user.get("id"), user
    return {**user, "username": username, "password": PASSWORD}


def enrol_totp(server, user: dict, name: str = "phone") -> dict:
    resp = admin(server, "POST", f"/admin/users/{user['id']}/factors/totp", {"name": name})
    assert resp.status_code == 201, describe(resp)
    factor = resp.json()
    assert factor.get("id"), factor
    assert factor.get("kind") == "totp", factor
    assert factor.get("name") == name, factor
    secret = factor.get("secret", "")
    assert re.fullmatch(r"[A-Z2-7]+", secret), f"not unpadded RFC 4648 base32: {secret!r}"
    assert len(b32decode_nopad(secret)) >= 16, "a TOTP key shorter than 128 bits (RFC 4226 §4)"
    uri = urlsplit(factor.get("otpauth_uri", ""))
    assert (uri.scheme, uri.netloc) == ("otpauth", "totp"), factor
    query = parse_qs(uri.query)
    assert query.get("secret") == [secret], factor
    assert query.get("algorithm", ["SHA1"]) == ["SHA1"], factor
    assert query.get("digits", ["6"]) == ["6"], factor
    assert query.get("period", ["30"]) == ["30"], factor
    return factor


def list_factors(server, user: dict) -> dict:
    resp = admin(server, "GET", f"/admin/users/{user['id']}/factors")
    assert resp.status_code == 200, describe(resp)
    listing = resp.json()
    for factor in listing.get("factors", []):
        assert "secret" not in factor and "otpauth_uri" not in factor, listing
    return listing


def new_client(server, prefix: str) -> dict:
    client_id = server.unique(prefix)
    reg = server.create_client(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code"],
        scope=SCOPE,
    )
    assert reg.get("client_secret"), reg
    return {"client_id": client_id, "client_secret": reg["client_secret"]}


# --------------------------------------------------------------------------
# The relying party (Authlib) and the browser (requests)
# --------------------------------------------------------------------------


class RelyingParty:
    """One authorization request of an Authlib client and the redemption of its answer."""

    def __init__(self, discovery: dict, client: dict, **extra):
        self.discovery = discovery
        self.client_id = client["client_id"]
        self.session = OAuth2Session(
            client_id=client["client_id"],
            client_secret=client["client_secret"],
            scope=SCOPE,
            redirect_uri=REDIRECT_URI,
            code_challenge_method="S256",
            token_endpoint_auth_method="client_secret_basic",
        )
        self.nonce = generate_token(20)
        self.code_verifier = generate_token(48)
        self.url, self.state = self.session.create_authorization_url(
            discovery["authorization_endpoint"], nonce=self.nonce,
            code_verifier=self.code_verifier, **extra)
        query = parse_qs(urlsplit(self.url).query)
        for name, value in extra.items():
            assert query.get(name) == [value], (name, self.url)
        assert query.get("code_challenge_method") == ["S256"], self.url

    def response_params(self, location: str) -> dict:
        """The authorization response at the redirect URI (state and RFC 9207 iss checked)."""
        loc = urlsplit(location)
        assert f"{loc.scheme}://{loc.netloc}{loc.path}" == REDIRECT_URI, location
        params = parse_qs(loc.query)
        assert params.get("state") == [self.state], location
        assert params.get("iss") == [self.discovery["issuer"]], location
        return params

    def redeem(self, location: str, jwks: dict, acr: str, amr: list[str]) -> dict:
        """fetch_token with the code, verify the ID token, check its acr and amr."""
        params = self.response_params(location)
        assert "error" not in params and params.get("code"), location
        token = self.session.fetch_token(self.discovery["token_endpoint"],
                                         authorization_response=location,
                                         code_verifier=self.code_verifier, state=self.state)
        assert token.get("id_token"), token
        claims = dict(verify_id_token(token["id_token"], jwks, self.discovery["issuer"],
                                      self.client_id, self.nonce, token["access_token"]))
        check_acr(claims, acr)
        assert isinstance(claims.get("amr"), list), claims
        assert sorted(claims["amr"]) == sorted(amr), claims
        assert len(set(claims["amr"])) == len(claims["amr"]), claims
        assert isinstance(claims.get("auth_time"), int), claims
        return claims


def check_acr(claims: dict, acr: str):
    """The acr claim by value through joserfc's claims registry (and the check really checks)."""
    JWTClaimsRegistry(acr={"essential": True, "value": acr}).validate(claims)
    other = ACR_PASSWORD if acr == ACR_MFA else ACR_MFA
    with pytest.raises(InvalidClaimError):
        JWTClaimsRegistry(acr={"essential": True, "value": other}).validate(claims)


def open_authorize(browser: requests.Session, url: str) -> requests.Response:
    resp = browser.get(url, allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code in (200, 302, 303), describe(resp)
    return resp


def is_login_page(resp: requests.Response) -> bool:
    return resp.status_code == 200 and 'action="/login"' in resp.text


def post_password(browser: requests.Session, page: requests.Response, user: dict) -> requests.Response:
    assert is_login_page(page), describe(page)
    login = find_form(page.text, "/login")
    assert login.method == "post", login
    assert login.inputs.get("password", {}).get("type") == "password", login
    return browser.post(urljoin(page.url, login.action),
                        data={"challenge": login.inputs["challenge"]["value"],
                              "username": user["username"], "password": user["password"]},
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)


def post_code(browser: requests.Session, page: requests.Response, code: str) -> requests.Response:
    """Fill in the second-factor page ``page`` (200 after the password, or 401 after a
    refused code) with ``code``."""
    assert page.status_code in (200, 401), describe(page)
    form = find_form(page.text, "/login/second-factor")
    assert form.method == "post", form
    assert form.inputs.get("challenge", {}).get("type") == "hidden", form
    assert form.inputs["challenge"]["value"], form
    assert form.inputs.get("code", {}).get("type") == "text", form
    assert "password" not in form.inputs, form
    return browser.post(urljoin(page.url, form.action),
                        data={"challenge": form.inputs["challenge"]["value"], "code": code},
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)


def to_client(browser: requests.Session, resp: requests.Response, consent: bool) -> str:
    """From a signed-in step to the redirect back to the client: through the consent page
    (reached by the 303 to GET /consent) when ``consent``, else directly. Returns Location."""
    if consent:
        assert resp.status_code == 303, describe(resp)
        assert resp.headers["Location"].startswith("/consent"), describe(resp)
        resp = browser.get(urljoin(resp.url, resp.headers["Location"]), allow_redirects=False,
                           timeout=HTTP_TIMEOUT_S)
        assert resp.status_code == 200, describe(resp)
        form = find_form(resp.text, "/consent")
        resp = browser.post(urljoin(resp.url, form.action),
                            data={"challenge": form.inputs["challenge"]["value"],
                                  "decision": "allow"},
                            allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code in (302, 303), describe(resp)
    location = resp.headers.get("Location", "")
    assert location.startswith(REDIRECT_URI), describe(resp)
    return location


def second_factor_page(resp: requests.Response, browser: requests.Session):
    """The password was right and a second factor is asked: 200, a form to /login/second-factor,
    and no session yet."""
    assert resp.status_code == 200, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    find_form(resp.text, "/login/second-factor")
    assert SESSION_COOKIE not in browser.cookies, "a session before the second factor"


# --------------------------------------------------------------------------
# Tests
# --------------------------------------------------------------------------


def test_discovery_lists_acr_values(discovery):
    supported = discovery.get("acr_values_supported")
    assert isinstance(supported, list), discovery
    assert ACR_MFA in supported and ACR_PASSWORD in supported, supported
    assert discovery.get("claims_parameter_supported") is True, discovery


def test_totp_sign_in_requested_by_acr_values(authrim_server, discovery, jwks):
    """acr_values=mfa for a user with TOTP: password, then the code, then consent; the ID
    token says acr mfa, amr pwd+otp+mfa. The same code is refused (401) in another sign-in."""
    user = new_user(authrim_server, "mfa-totp")
    factor = enrol_totp(authrim_server, user)
    client = new_client(authrim_server, "authlib-mfa")

    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    browser = requests.Session()
    resp = post_password(browser, open_authorize(browser, rp.url), user)
    second_factor_page(resp, browser)
    code = totp(factor["secret"])
    resp = post_code(browser, resp, code)
    claims = rp.redeem(to_client(browser, resp, consent=True), jwks, ACR_MFA, AMR_MFA)
    assert claims["sub"] == user["id"], claims
    assert SESSION_COOKIE in browser.cookies

    listing = list_factors(authrim_server, user)
    assert [(f["id"], f["kind"], f["name"]) for f in listing["factors"]] == [
        (factor["id"], "totp", "phone")], listing
    assert listing["factors"][0].get("last_used_at", 0) > 0, listing

    # The same code again, in another browser: refused, the page again, no redirect.
    rp2 = RelyingParty(discovery, client, acr_values=ACR_MFA)
    other = requests.Session()
    resp = post_password(other, open_authorize(other, rp2.url), user)
    second_factor_page(resp, other)
    resp = post_code(other, resp, code)
    assert resp.status_code == 401, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    find_form(resp.text, "/login/second-factor")
    assert SESSION_COOKIE not in other.cookies


def test_password_session_stepped_up_by_acr_values(authrim_server, discovery, jwks):
    """A factorless user's session is password-only (acr_values is voluntary, §3.1.2.1). Once
    a factor is enrolled, a request without acr_values reuses it; one with acr_values=mfa
    signs in again (password, code); the new mfa session is then reused by both."""
    user = new_user(authrim_server, "mfa-stepup")
    client = new_client(authrim_server, "authlib-stepup")
    browser = requests.Session()

    # No factor yet: asked for mfa voluntarily, signed in with the password alone.
    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    resp = post_password(browser, open_authorize(browser, rp.url), user)
    first = rp.redeem(to_client(browser, resp, consent=True), jwks, ACR_PASSWORD, AMR_PASSWORD)
    password_cookie = browser.cookies[SESSION_COOKIE]

    factor = enrol_totp(authrim_server, user)

    # Without acr_values: the session is reused (no login page, consent remembered).
    rp = RelyingParty(discovery, client)
    resp = open_authorize(browser, rp.url)
    reused = rp.redeem(to_client(browser, resp, consent=False), jwks, ACR_PASSWORD, AMR_PASSWORD)
    assert reused["sub"] == first["sub"] and reused["auth_time"] == first["auth_time"], reused
    assert reused.get("sid") == first.get("sid"), (first, reused)

    # With acr_values=mfa: the login page again, then the second factor.
    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    resp = open_authorize(browser, rp.url)
    assert is_login_page(resp), f"no step-up for acr_values={ACR_MFA}: {describe(resp)}"
    resp = post_password(browser, resp, user)
    assert resp.status_code == 200, describe(resp)
    find_form(resp.text, "/login/second-factor")
    resp = post_code(browser, resp, totp(factor["secret"]))
    stepped = rp.redeem(to_client(browser, resp, consent=False), jwks, ACR_MFA, AMR_MFA)
    assert stepped["sub"] == first["sub"], stepped
    assert stepped["auth_time"] >= first["auth_time"], (first, stepped)
    assert browser.cookies[SESSION_COOKIE] != password_cookie, "session id kept across step-up"

    # The mfa session satisfies both kinds of request without a login.
    for extra in ({"acr_values": ACR_MFA}, {}):
        rp = RelyingParty(discovery, client, **extra)
        resp = open_authorize(browser, rp.url)
        again = rp.redeem(to_client(browser, resp, consent=False), jwks, ACR_MFA, AMR_MFA)
        assert again["auth_time"] == stepped["auth_time"], (extra, again)


def test_essential_acr_unmet_for_factorless_user(authrim_server, discovery, jwks):
    """claims={"id_token":{"acr":{"essential":true,"values":[mfa]}}} for a user without a
    factor: a failed authentication (§5.5.1.1), reported to the client as
    unmet_authentication_requirements with its state and iss; no session. The same acr asked
    voluntarily signs in with the password."""
    user = new_user(authrim_server, "mfa-none")
    client = new_client(authrim_server, "authlib-essential")
    browser = requests.Session()

    essential = {"id_token": {"acr": {"essential": True, "values": [ACR_MFA]}}}
    rp = RelyingParty(discovery, client, claims=json.dumps(essential))
    resp = post_password(browser, open_authorize(browser, rp.url), user)
    assert resp.status_code in (302, 303), describe(resp)
    params = rp.response_params(resp.headers["Location"])
    assert params.get("error") == ["unmet_authentication_requirements"], params
    assert "code" not in params, params
    assert SESSION_COOKIE not in browser.cookies, "a session after a failed authentication"

    voluntary = {"id_token": {"acr": {"values": [ACR_MFA]}}}
    rp = RelyingParty(discovery, client, claims=json.dumps(voluntary))
    resp = post_password(browser, open_authorize(browser, rp.url), user)
    rp.redeem(to_client(browser, resp, consent=True), jwks, ACR_PASSWORD, AMR_PASSWORD)


def test_recovery_code_works_once(authrim_server, discovery, jwks):
    """A recovery code completes the second step once: used again it is refused (401, the
    page again), and another code then goes through. After a reset the user signs in with
    the password alone."""
    user = new_user(authrim_server, "mfa-recovery")
    enrol_totp(authrim_server, user)
    resp = admin(authrim_server, "POST", f"/admin/users/{user['id']}/recovery-codes")
    assert resp.status_code == 201, describe(resp)
    codes = resp.json().get("codes")
    assert isinstance(codes, list) and len(codes) == 10 and len(set(codes)) == 10, codes
    assert all(RECOVERY_CODE.match(c) for c in codes), codes
    assert list_factors(authrim_server, user)["recovery_codes_left"] == 10
    client = new_client(authrim_server, "authlib-recovery")

    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    browser = requests.Session()
    resp = post_password(browser, open_authorize(browser, rp.url), user)
    second_factor_page(resp, browser)
    resp = post_code(browser, resp, codes[0])
    rp.redeem(to_client(browser, resp, consent=True), jwks, ACR_MFA, AMR_MFA)
    assert list_factors(authrim_server, user)["recovery_codes_left"] == 9

    # The same code again (another browser): 401 and the page again; the next code works.
    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    other = requests.Session()
    resp = post_password(other, open_authorize(other, rp.url), user)
    second_factor_page(resp, other)
    resp = post_code(other, resp, codes[0])
    assert resp.status_code == 401, describe(resp)
    assert "Location" not in resp.headers, describe(resp)
    assert SESSION_COOKIE not in other.cookies
    resp = post_code(other, resp, codes[1])
    rp.redeem(to_client(other, resp, consent=False), jwks, ACR_MFA, AMR_MFA)
    assert list_factors(authrim_server, user)["recovery_codes_left"] == 8

    # An operator's reset: no factor, no codes; the password alone signs in (acr password).
    resp = admin(authrim_server, "DELETE", f"/admin/users/{user['id']}/factors")
    assert resp.status_code == 204, describe(resp)
    listing = list_factors(authrim_server, user)
    assert listing["factors"] == [] and listing["recovery_codes_left"] == 0, listing
    rp = RelyingParty(discovery, client, acr_values=ACR_MFA)
    fresh = requests.Session()
    resp = post_password(fresh, open_authorize(fresh, rp.url), user)
    rp.redeem(to_client(fresh, resp, consent=False), jwks, ACR_PASSWORD, AMR_PASSWORD)
