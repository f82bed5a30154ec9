#!/usr/bin/env python3
"""Many tenants on one node (issue 31, slice 4): start time and RSS before and after, the time
of each creation, discovery at a handful of them, and the token endpoint's latency on the
default tenant and on a tenant (docs/benchmarks.md, "Tenants (issue 31, slice 4)").

On a fresh data directory with SQLite:
  1. starts BIN once (which makes the default tenant's keys), creates the confidential client
     `bench` (client credentials) and stops it; starts it again and measures the start (until
     /healthz answers 200) and RSS (VmRSS of /proc/PID/status, at that moment and after
     --settle seconds) with no tenant besides the default, and the median of --requests
     client_credentials requests on the default tenant (one keep-alive connection);
  2. creates --tenants tenants one after another through `POST /admin/tenants` (each built at
     once, its signing keys made in the request: one per algorithm of `signing_algorithms`),
     timing each; with --clients/--users, that many clients and users in each
     (`/t/SLUG/test/bulk/…`, the test-only bulk interface, timed apart); RSS after;
  3. stops the server and starts it again, --restarts times: start time and RSS with every
     tenant loaded, each run's and their spread (a busy machine moves the start time);
  4. checks discovery at the first, the last and a few tenants between (the issuer it names,
     and RFC 8414's path-inserted form), then the token endpoint's median latency on the default
     tenant and on a tenant (its own `bench` client), in alternated blocks.

    python3 load-testing/tenants-at-scale.py --bin /tmp/authrim-slice4 --tenants 1000

With --existing, the data directory (--data-dir) is one an earlier run filled: steps 1 and 2
are skipped (the number of tenants and the `bench` clients' secrets are read from its
bench.json), so that two binaries are compared on the same data:

    python3 load-testing/tenants-at-scale.py --bin /tmp/authrim-new --data-dir DIR --existing

Prints a report on stderr as it goes and one JSON line on stdout at the end. Python 3 stdlib.
"""
import argparse, base64, http.client, json, os, signal, statistics, subprocess, sys, tempfile, time

from benchserver import ADMIN, call, free_port, server_env, wait_healthy


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Server:
    def __init__(self, a, data):
        self.a, self.port = a, free_port()
        self.env = server_env(data, self.port, AUTHRIM_SIGNING_ALGORITHMS=a.signing_algorithms)
        self.logf = open(os.path.join(data, "server.log"), "a")
        self.proc = None

    def start(self):
        """Start; the seconds until /healthz answers 200, and VmRSS (KiB) then."""
        t0 = time.monotonic()
        self.proc = subprocess.Popen([self.a.bin, "serve"], env=self.env, stdout=self.logf, stderr=subprocess.STDOUT)
        return wait_healthy(self.proc, self.port, self.a.startup_timeout, self.logf.name, since=t0), self.rss()

    def rss(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def admin(self, path, body, ok=(200, 201)):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        st, data = call(c, "POST", path, json.dumps(body),
                        {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
        c.close()
        if st not in ok:
            sys.exit(f"{path}: {st} {data[:300]!r}")
        return json.loads(data)


def bench_client(srv, prefix):
    """The confidential client `bench` at the issuer under `prefix`: its form headers."""
    c = srv.admin(prefix + "/admin/clients", {"client_id": "bench", "grant_types": ["client_credentials"],
                                              "scope": "api:read", "redirect_uris": ["https://rp.example/cb"]})
    basic = "Basic " + base64.b64encode(f"bench:{c['client_secret']}".encode()).decode()
    return {"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic}


def token_latencies(srv, prefix, headers, n):
    """n client_credentials requests at `prefix`/token on one keep-alive connection, after 20
    warm-up ones: each one's milliseconds."""
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
    out = []
    for i in range(20 + n):
        t0 = time.perf_counter()
        st, b = call(conn, "POST", prefix + "/token", "grant_type=client_credentials&scope=api%3Aread", headers)
        dt = (time.perf_counter() - t0) * 1000
        if st != 200 or b'"access_token"' not in b:
            sys.exit(f"{prefix}/token: {st} {b[:300]!r}")
        if i >= 20:
            out.append(dt)
    conn.close()
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))]


def summary(xs):
    return {"n": len(xs), "median": round(statistics.median(xs), 3), "p90": round(pct(xs, 90), 3),
            "min": round(min(xs), 3), "max": round(max(xs), 3), "total": round(sum(xs), 1)}


def fill(srv, a, res):
    """Steps 1 and 2: the default tenant measured alone, then the tenants made; the server is
    left stopped. The form headers of the `bench` client at the default tenant and at the last
    tenant."""
    # 1. The first start makes the default tenant's keys; measured is the second.
    first, _ = srv.start()
    res["first_start_s"] = round(first, 3)
    default_form = bench_client(srv, "")
    srv.stop()
    t, rss = srv.start()
    time.sleep(a.settle)
    res["zero"] = {"start_s": round(t, 3), "rss_kib_at_healthz": rss, "rss_kib_settled": srv.rss(),
                   "token_default_ms": summary(token_latencies(srv, "", default_form, a.requests))}
    log(f"0 tenants: start {t:.3f} s, RSS {rss} KiB at /healthz, {res['zero']['rss_kib_settled']} KiB settled; "
        f"default /token median {res['zero']['token_default_ms']['median']} ms")

    # 2. The tenants, one after another.
    slugs = [f"t{i:04d}" for i in range(a.tenants)]
    create, fill = [], []
    t_all = time.monotonic()
    for i, slug in enumerate(slugs):
        t0 = time.perf_counter()
        srv.admin("/admin/tenants", {"slug": slug})
        create.append((time.perf_counter() - t0) * 1000)
        if a.clients or a.users:
            t0 = time.perf_counter()
            if a.clients:
                srv.admin(f"/t/{slug}/test/bulk/clients", {"count": a.clients, "prefix": "app", "client": {
                    "redirect_uris": ["https://rp.example/cb"], "scope": "openid profile email"}})
            if a.users:
                srv.admin(f"/t/{slug}/test/bulk/users", {"count": a.users, "prefix": "user",
                                                         "password": "load-test-password"})
            fill.append((time.perf_counter() - t0) * 1000)
        if (i + 1) % 100 == 0:
            log(f"  {i + 1} tenants: creation median so far {statistics.median(create):.1f} ms, RSS {srv.rss()} KiB")
    res["create_ms"] = summary(create)
    res["create_wall_s"] = round(time.monotonic() - t_all, 1)
    if fill:
        res["fill_ms"] = summary(fill)
    res["rss_kib_after_creation"] = srv.rss()
    tenant_form = bench_client(srv, f"/t/{slugs[-1]}") if slugs else None
    log(f"created {a.tenants}: {res['create_ms']}; RSS {res['rss_kib_after_creation']} KiB")
    srv.stop()
    return default_form, tenant_form


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--tenants", type=int, default=1000)
    p.add_argument("--signing-algorithms", default="RS256", help="AUTHRIM_SIGNING_ALGORITHMS (RS256 always)")
    p.add_argument("--clients", type=int, default=0, help="clients made in each tenant (bulk interface)")
    p.add_argument("--users", type=int, default=0, help="users made in each tenant (bulk interface)")
    p.add_argument("--requests", type=int, default=300, help="token requests per latency sample")
    p.add_argument("--settle", type=float, default=3.0, help="seconds after start before the second RSS")
    p.add_argument("--startup-timeout", type=int, default=600)
    p.add_argument("--data-dir", help="default: a fresh temporary directory")
    p.add_argument("--restarts", type=int, default=3, help="starts measured with every tenant loaded")
    p.add_argument("--existing", action="store_true", help="the data directory holds an earlier run's tenants")
    a = p.parse_args()
    if a.existing and not a.data_dir:
        sys.exit("--existing needs --data-dir")
    data = a.data_dir or tempfile.mkdtemp(prefix="tenants-at-scale-")
    os.makedirs(data, exist_ok=True)
    res = {"bin": a.bin, "tenants": a.tenants, "signing_algorithms": a.signing_algorithms,
           "clients_per_tenant": a.clients, "users_per_tenant": a.users, "data_dir": data}
    srv = Server(a, data)
    saved_path = os.path.join(data, "bench.json")
    try:
        if a.existing:
            with open(saved_path) as f:
                saved = json.load(f)
            default_form, tenant_form = saved["default_form"], saved["tenant_form"]
            a.tenants = res["tenants"] = saved["tenants"]
            res.update(clients_per_tenant=saved["clients"], users_per_tenant=saved["users"])
        else:
            default_form, tenant_form = fill(srv, a, res)
            with open(saved_path, "w") as f:
                json.dump({"default_form": default_form, "tenant_form": tenant_form, "tenants": a.tenants,
                           "clients": a.clients, "users": a.users}, f)
        slugs = [f"t{i:04d}" for i in range(a.tenants)]

        # 3. Start with every tenant in the table, --restarts times.
        runs = []
        for i in range(a.restarts):
            if i:
                srv.stop()
            t, rss = srv.start()
            time.sleep(a.settle)
            runs.append({"start_s": round(t, 3), "rss_kib_at_healthz": rss, "rss_kib_settled": srv.rss()})
            log(f"{a.tenants} tenants: start {t:.3f} s, RSS {rss} KiB at /healthz, {runs[-1]['rss_kib_settled']} KiB settled")
        starts = [r["start_s"] for r in runs]
        res["loaded"] = {"runs": runs, "start_s": {"min": min(starts), "median": statistics.median(starts), "max": max(starts)},
                         "rss_kib_settled_median": statistics.median(r["rss_kib_settled"] for r in runs)}
        log(f"start with {a.tenants} tenants over {len(runs)} runs: {res['loaded']['start_s']}")

        # 4. Discovery at a handful, then /token latency, default and tenant alternated.
        picks = sorted({0, len(slugs) // 4, len(slugs) // 2, 3 * len(slugs) // 4, len(slugs) - 1}) if slugs else []
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=60)
        checked = []
        for i in picks:
            issuer = f"http://127.0.0.1:{srv.port}/t/{slugs[i]}"
            for path in (f"/t/{slugs[i]}/.well-known/openid-configuration",
                         f"/.well-known/oauth-authorization-server/t/{slugs[i]}"):
                st, b = call(c, "GET", path)
                if st != 200 or json.loads(b).get("issuer") != issuer:
                    sys.exit(f"{path}: {st} {b[:300]!r}")
            checked.append(slugs[i])
        st, _ = call(c, "GET", "/t/no-such-tenant/.well-known/openid-configuration")
        if st != 404:
            sys.exit(f"an unknown slug answered {st}, not 404")
        c.close()
        res["discovery_checked"] = checked
        log(f"discovery answers its issuer at {', '.join(checked)} (both forms); an unknown slug 404")
        if slugs:
            d, t_ = [], []
            for _ in range(3):
                d += token_latencies(srv, "", default_form, a.requests // 3)
                t_ += token_latencies(srv, f"/t/{slugs[-1]}", tenant_form, a.requests // 3)
            res["loaded"]["token_default_ms"] = summary(d)
            res["loaded"]["token_tenant_ms"] = summary(t_)
            log(f"/token median: default {res['loaded']['token_default_ms']['median']} ms, "
                f"tenant {slugs[-1]} {res['loaded']['token_tenant_ms']['median']} ms "
                f"(0 tenants: {res['zero']['token_default_ms']['median'] if 'zero' in res else 'not measured'} ms)")
        print(json.dumps(res), flush=True)
    finally:
        if srv.proc and srv.proc.poll() is None:
            srv.stop()


if __name__ == "__main__":
    main()
