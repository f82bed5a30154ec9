#!/usr/bin/env python3
"""Sign-in throughput: password only (A), passkey only (P), password then passkey (D).

A software WebAuthn authenticator (ES256, attestation "none", user verification), written from
the WebAuthn Level 2 data formats as in tests/integration/passkeys.rs, so that the server
verifies what a browser would send.

Setup (untimed): creates the public client "rp" (if absent) and --users users through the admin
API; in modes P and D each user then registers a passkey the way a person does, on the account
page: GET /account (303s to the login page), POST /login with the password, the account page's
CSRF token, POST /account/passkeys/new, navigator.credentials.create on the page's data-options,
POST /account/passkeys. Then for --duration seconds --workers threads sign in, each on one
keep-alive connection, the cookie jar cleared before every sign-in:
  A: GET /authorize (login page) -> POST /login (password);
  P: GET /authorize -> an assertion for the login page's data-options -> POST /login/passkey
     (challenge, passkey_state, credential);
  D: GET /authorize -> POST /login (password) -> the second-factor page's passkey form ->
     POST /login/second-factor (challenge, passkey_state, credential).
A sign-in counts as completed on the 303 that sets authrim_session; anything else is an error.
Users are reused (a passkey's signature counter goes up by one per assertion). In mode A the
users have no passkey (with one, the password would lead to a second step). With --pid,
Authrim's CPU (utime+stime from /proc/PID/stat) over the timed window is reported per completed
sign-in.

Passkeys need a domain name: run `authrim serve` with AUTHRIM_ISSUER=http://localhost:PORT
(relying-party id "localhost", origin http://localhost:PORT) and AUTHRIM_ADMIN_TOKEN set:
  target/e2e-venv/bin/python load-testing/login-passkey.py --base http://localhost:18917 \
      --admin-token T --pid $(pgrep -n authrim) --mode P --users 16 --workers 8 --duration 20
Needs `requests` and `cryptography` (both in target/e2e-venv). Prints one JSON line.
"""
import argparse, base64, hashlib, html, json, os, queue, re, struct, threading, time, uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec

REDIRECT = "http://127.0.0.1:9/cb"
AUTHZ = ("/authorize?response_type=code&client_id=rp&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb"
         "&scope=openid&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
         "&code_challenge_method=S256")
PASSWORD = "correct horse battery"


def b64u(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def field(page, name):
    m = re.search(r'name="%s" value="([^"]*)"' % re.escape(name), page)
    return html.unescape(m.group(1)) if m else None


def options(page):
    m = re.search(r'data-options="([^"]*)"', page)
    return json.loads(html.unescape(m.group(1))) if m else None


# --- Minimal CBOR (RFC 8949): unsigned and negative ints, byte and text strings, maps --------

def _head(major, n):
    if n < 24:
        return bytes([major << 5 | n])
    if n < 0x100:
        return bytes([major << 5 | 24, n])
    if n < 0x10000:
        return bytes([major << 5 | 25]) + struct.pack(">H", n)
    return bytes([major << 5 | 26]) + struct.pack(">I", n)


def cbor(v):
    if isinstance(v, int):
        return _head(0, v) if v >= 0 else _head(1, -1 - v)
    if isinstance(v, bytes):
        return _head(2, len(v)) + v
    if isinstance(v, str):
        b = v.encode()
        return _head(3, len(b)) + b
    if isinstance(v, list):  # a map, as a list of (key, value) pairs: keeps the order given
        return _head(5, len(v)) + b"".join(cbor(k) + cbor(x) for k, x in v)
    raise TypeError(type(v))


UP, UV, AT = 0x01, 0x04, 0x40


class Authenticator:
    """One passkey: an ES256 key, a random credential id, the user handle it was made for, and
    a signature counter. Used by one worker at a time (the user pool hands it out)."""

    def __init__(self):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.cred_id = os.urandom(16)
        self.user_handle = None
        self.counter = 0

    @staticmethod
    def client_data(kind, challenge, origin):
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin, "crossOrigin": False},
                          separators=(",", ":")).encode()

    def create(self, opts, origin, rp_id):
        pk = opts["publicKey"]
        self.user_handle = pk["user"]["id"]  # base64url, echoed back as userHandle
        nums = self.key.public_key().public_numbers()
        cose = cbor([(1, 2), (3, -7), (-1, 1), (-2, nums.x.to_bytes(32, "big")), (-3, nums.y.to_bytes(32, "big"))])
        auth_data = (hashlib.sha256(rp_id.encode()).digest() + bytes([UP | UV | AT]) + struct.pack(">I", self.counter)
                     + bytes(16) + struct.pack(">H", len(self.cred_id)) + self.cred_id + cose)
        att = cbor([("fmt", "none"), ("attStmt", []), ("authData", auth_data)])
        cd = self.client_data("webauthn.create", pk["challenge"], origin)
        return json.dumps({"id": b64u(self.cred_id), "rawId": b64u(self.cred_id), "type": "public-key", "extensions": {},
                           "response": {"attestationObject": b64u(att), "clientDataJSON": b64u(cd)}})

    def get(self, opts, origin, rp_id):
        pk = opts["publicKey"]
        self.counter += 1
        auth_data = hashlib.sha256(rp_id.encode()).digest() + bytes([UP | UV]) + struct.pack(">I", self.counter)
        cd = self.client_data("webauthn.get", pk["challenge"], origin)
        sig = self.key.sign(auth_data + hashlib.sha256(cd).digest(), ec.ECDSA(hashes.SHA256()))
        return json.dumps({"id": b64u(self.cred_id), "rawId": b64u(self.cred_id), "type": "public-key", "extensions": {},
                           "response": {"authenticatorData": b64u(auth_data), "clientDataJSON": b64u(cd),
                                        "signature": b64u(sig), "userHandle": self.user_handle}})


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def register(s, base, name, origin, rp_id):
    """Sign in to the account page with the password and add a passkey; its authenticator."""
    r = s.get(base + "/account")  # 303s to /authorize: the login page
    ch = field(r.text, "challenge")
    if r.status_code != 200 or not ch:
        raise SystemExit(f"account login page: {r.status_code} {r.text[:300]}")
    r = s.post(base + "/login", data={"challenge": ch, "username": name, "password": PASSWORD})
    csrf = field(r.text, "csrf")
    if r.status_code != 200 or not csrf:
        raise SystemExit(f"account page: {r.status_code} {r.url} {r.text[:300]}")
    r = s.post(base + "/account/passkeys/new", data={"csrf": csrf})
    opts = options(r.text)
    if r.status_code != 200 or not opts:
        raise SystemExit(f"passkey setup page: {r.status_code} {r.text[:300]}")
    auth = Authenticator()
    answer = auth.create(opts, origin, rp_id)
    r = s.post(base + "/account/passkeys", data={"csrf": field(r.text, "csrf"), "passkey_state": field(r.text, "passkey_state"),
                                                 "credential": answer, "name": "bench"})
    if r.status_code != 200 or "bench" not in r.text:
        raise SystemExit(f"passkey registration: {r.status_code} {r.text[:300]}")
    return auth


def setup(base, token, mode, n, threads, origin, rp_id):
    h = {"Authorization": f"Bearer {token}"}
    r = requests.post(f"{base}/admin/clients", headers=h, json={
        "client_id": "rp", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    if r.status_code not in (200, 201, 409) and "already exists" not in r.text:
        raise SystemExit(f"client: {r.status_code} {r.text[:200]}")
    run = uuid.uuid4().hex[:8]

    def one(i):
        s = requests.Session()
        name = f"{mode.lower()}{run}-{i}"
        r = s.post(f"{base}/admin/users", headers=h, json={"username": name, "password": PASSWORD, "claims": {}})
        r.raise_for_status()
        auth = register(s, base, name, origin, rp_id) if mode in "PD" else None
        s.close()
        return name, auth

    with ThreadPoolExecutor(threads) as ex:
        return list(ex.map(one, range(n)))


def done(r, where):
    if r.status_code != 303 or "authrim_session" not in r.headers.get("set-cookie", ""):
        return f"{where} {r.status_code}"
    return None


def sign_in(s, base, mode, user, auth, origin, rp_id):
    """One whole sign-in; returns None on success, else a short error description."""
    s.cookies.clear()
    r = s.get(base + AUTHZ, allow_redirects=False)
    ch = field(r.text, "challenge") if r.status_code == 200 else None
    if not ch:
        return f"authorize {r.status_code}"
    if mode == "P":
        opts, state = options(r.text), field(r.text, "passkey_state")
        if not opts or not state:
            return "authorize: no passkey form"
        r = s.post(base + "/login/passkey", data={"challenge": ch, "passkey_state": state, "credential": auth.get(opts, origin, rp_id)},
                   allow_redirects=False)
        return done(r, "passkey")
    r = s.post(base + "/login", data={"challenge": ch, "username": user, "password": PASSWORD}, allow_redirects=False)
    if mode == "A":
        return done(r, "login")
    if r.status_code != 200 or "/login/second-factor" not in r.text:
        return f"login {r.status_code}"
    opts, state, ch = options(r.text), field(r.text, "passkey_state"), field(r.text, "challenge")
    if not opts or not state or not ch:
        return "second-factor page: no passkey form"
    r = s.post(base + "/login/second-factor", data={"challenge": ch, "passkey_state": state, "credential": auth.get(opts, origin, rp_id)},
               allow_redirects=False)
    return done(r, "second-factor")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True, help="http://localhost:PORT (the issuer)")
    p.add_argument("--admin-token", required=True)
    p.add_argument("--mode", choices="APD", required=True)
    p.add_argument("--users", type=int, default=16)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--setup-threads", type=int, default=4)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--origin", help="WebAuthn origin (default: --base's origin)")
    p.add_argument("--rp-id", help="WebAuthn relying-party id (default: --base's host)")
    p.add_argument("--pid", type=int)
    a = p.parse_args()
    base = a.base.rstrip("/")
    u = urlsplit(base)
    origin = a.origin or f"{u.scheme}://{u.netloc}"
    rp_id = a.rp_id or u.hostname

    t0 = time.time()
    users = setup(base, a.admin_token, a.mode, a.users, a.setup_threads, origin, rp_id)
    setup_s = time.time() - t0
    pool = queue.Queue()
    for x in users:
        pool.put(x)
    lat, errors, lock = [], {}, threading.Lock()
    start = time.monotonic()
    deadline = start + a.duration

    def worker():
        s = requests.Session()
        while time.monotonic() < deadline:
            user, auth = pool.get()  # as many users as workers or more: never waits for long
            t = time.monotonic()
            try:
                err = sign_in(s, base, a.mode, user, auth, origin, rp_id)
            except requests.RequestException as e:
                err = type(e).__name__
            dt = time.monotonic() - t
            pool.put((user, auth))
            with lock:
                if err:
                    errors[err] = errors.get(err, 0) + 1
                else:
                    lat.append(dt)

    c0 = cpu_ticks(a.pid) if a.pid else None
    threads = [threading.Thread(target=worker) for _ in range(a.workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    c1 = cpu_ticks(a.pid) if a.pid else None

    lat.sort()
    n = len(lat)
    pct = lambda q: round(lat[min(n - 1, int(q * n))] * 1000, 1) if n else None
    out = {"mode": a.mode, "workers": a.workers, "users": a.users, "setup_s": round(setup_s, 1),
           "elapsed_s": round(elapsed, 2), "completed": n, "per_s": round(n / elapsed, 2),
           "p50_ms": pct(0.50), "p99_ms": pct(0.99), "errors": errors}
    if a.pid:
        hz = os.sysconf("SC_CLK_TCK")
        out["cpu_s"] = round((c1 - c0) / hz, 2)
        out["cpu_ms_per_signin"] = round((c1 - c0) / hz * 1000 / n, 2) if n else None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
