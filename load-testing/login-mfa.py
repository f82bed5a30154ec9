#!/usr/bin/env python3
"""Sign-in throughput: password-only (A) against password + TOTP (B).

Creates a client "rp" (if absent) and a pool of users through the admin API (untimed), then for
--duration seconds has --workers threads sign in: GET /authorize, POST /login and, in mode B,
POST /login/second-factor with a TOTP code (RFC 6238, HMAC-SHA1, 6 digits, 30 s) computed from
the secret the admin API returned. Each worker keeps one keep-alive connection; the cookie jar
is cleared before every sign-in. A sign-in counts as completed on the expected 303 with an
authrim_session cookie; any other status is an error. In mode B each user signs in once (a TOTP
step is accepted only once per user), so --users must exceed the sign-ins of a run; the run
stops early (and says so) if the pool runs out. With --pid, Authrim's CPU (utime+stime from
/proc/PID/stat) over the timed window is reported per completed sign-in.

Run against `authrim serve` (AUTHRIM_ADMIN_TOKEN set):
  python3 load-testing/login-mfa.py --base http://127.0.0.1:8090 --admin-token T \
      --pid $(pgrep -n authrim) --mode B --users 900 --workers 8 --duration 20
Needs the `requests` package (pip install requests). Prints one JSON line.
"""
import argparse, base64, hashlib, hmac, json, os, queue, re, struct, threading, time, uuid
from concurrent.futures import ThreadPoolExecutor
import requests

REDIRECT = "http://127.0.0.1:9/cb"
AUTHZ = ("/authorize?response_type=code&client_id=rp&redirect_uri=http%3A%2F%2F127.0.0.1%3A9%2Fcb"
         "&scope=openid&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
         "&code_challenge_method=S256")
PASSWORD = "correct horse battery"
CHALLENGE = re.compile(r'name="challenge" value="([^"]+)"')


def totp(secret_b32, t=None):
    key = base64.b32decode(secret_b32 + "=" * (-len(secret_b32) % 8), casefold=True)
    step = int((time.time() if t is None else t) // 30)
    mac = hmac.new(key, struct.pack(">Q", step), hashlib.sha1).digest()
    off = mac[-1] & 0x0F
    return "%06d" % ((struct.unpack(">I", mac[off:off + 4])[0] & 0x7FFFFFFF) % 1_000_000)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15)


def setup(base, token, mode, n, threads):
    h = {"Authorization": f"Bearer {token}"}
    r = requests.post(f"{base}/admin/clients", headers=h, json={
        "client_id": "rp", "redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"})
    if r.status_code not in (200, 201, 409) and "already exists" not in r.text:
        raise SystemExit(f"client: {r.status_code} {r.text[:200]}")
    run = uuid.uuid4().hex[:8]
    local = threading.local()

    def one(i):
        s = getattr(local, "s", None) or requests.Session()
        local.s = s
        name = f"{mode.lower()}{run}-{i}"
        r = s.post(f"{base}/admin/users", headers=h, json={"username": name, "password": PASSWORD, "claims": {}})
        r.raise_for_status()
        secret = None
        if mode == "B":
            r2 = s.post(f"{base}/admin/users/{r.json()['id']}/factors/totp", headers=h, json={"name": "phone"})
            r2.raise_for_status()
            secret = r2.json()["secret"]
        return name, secret

    with ThreadPoolExecutor(threads) as ex:
        return list(ex.map(one, range(n)))


def sign_in(s, base, user, secret):
    """One whole sign-in; returns None on success, else a short error description."""
    s.cookies.clear()
    r = s.get(base + AUTHZ, allow_redirects=False)
    m = CHALLENGE.search(r.text) if r.status_code == 200 else None
    if not m:
        return f"authorize {r.status_code}"
    r = s.post(base + "/login", data={"challenge": m.group(1), "username": user, "password": PASSWORD},
               allow_redirects=False)
    if secret is not None:
        m = CHALLENGE.search(r.text) if r.status_code == 200 and "/login/second-factor" in r.text else None
        if not m:
            return f"login {r.status_code}"
        r = s.post(base + "/login/second-factor", data={"challenge": m.group(1), "code": totp(secret)},
                   allow_redirects=False)
        where = "second-factor"
    else:
        where = "login"
    if r.status_code != 303 or "authrim_session" not in r.headers.get("set-cookie", ""):
        return f"{where} {r.status_code}"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", required=True)
    p.add_argument("--admin-token", required=True)
    p.add_argument("--mode", choices="AB", required=True)
    p.add_argument("--users", type=int, default=200)
    p.add_argument("--workers", type=int, default=8)
    p.add_argument("--setup-threads", type=int, default=4)
    p.add_argument("--duration", type=float, default=20)
    p.add_argument("--pid", type=int)
    a = p.parse_args()
    base = a.base.rstrip("/")

    t0 = time.time()
    users = setup(base, a.admin_token, a.mode, a.users, a.setup_threads)
    setup_s = time.time() - t0
    pool = queue.Queue()
    for u in users:
        pool.put(u)
    lat, errors, lock = [], {}, threading.Lock()
    exhausted = threading.Event()
    start = time.monotonic()
    deadline = start + a.duration

    def worker():
        s = requests.Session()
        while time.monotonic() < deadline:
            try:
                user, secret = pool.get_nowait()
            except queue.Empty:
                exhausted.set()
                return
            t = time.monotonic()
            try:
                err = sign_in(s, base, user, secret)
            except requests.RequestException as e:
                err = type(e).__name__
            dt = time.monotonic() - t
            with lock:
                if err:
                    errors[err] = errors.get(err, 0) + 1
                else:
                    lat.append(dt)
            if a.mode == "A":
                pool.put((user, secret))  # password-only users can sign in again

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
           "p50_ms": pct(0.50), "p99_ms": pct(0.99), "errors": errors, "pool_exhausted": exhausted.is_set()}
    if a.pid:
        hz = os.sysconf("SC_CLK_TCK")
        out["cpu_s"] = round((c1 - c0) / hz, 2)
        out["cpu_ms_per_signin"] = round((c1 - c0) / hz * 1000 / n, 2) if n else None
    print(json.dumps(out))


if __name__ == "__main__":
    main()
