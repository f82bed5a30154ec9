#!/usr/bin/env python3
"""Server CPU and system calls per client-credentials issuance under load (issue 31's
performance goal; docs/benchmarks.md, "Cutting an ES256 issuance's overhead").

For each binary in turn (alternated: `--bin A --bin B --rounds 2` runs A, B, A, B), starts it
with a fresh data directory and ES256 access tokens (`AUTHRIM_SIGNING_ALGORITHMS="RS256 ES256"`,
`AUTHRIM_TOKEN_SIGNING_ALG=ES256`), creates a confidential client through the admin API, checks
that one issuance answers 200 with an ES256 token, then drives `POST /token`
(`grant_type=client_credentials`, HTTP Basic) with wrk (`-t2 -cC`, `-t1` for one connection, under SCHED_BATCH where
allowed, like load-testing/lib/server.sh): a warm-up, then a measured run during which
`perf stat` counts the server's system calls and context switches. Reports per run:
requests a second, server CPU per request (utime + stime from /proc/PID/stat over the measured
run ÷ requests, and each of the two), and system calls per request by kind. Non-2xx answers
fail the run. With `--control`, the same server is then driven on `GET /healthz` the same way:
the floor of a request that does no token work (HTTP, middleware, the kernel's loopback).

    python3 load-testing/issuance-cost.py --bin /tmp/authrim-base --bin /tmp/authrim-new --rounds 2

The load generator shares the machine's cores with the server, so requests a second are the
pair's, not the server's alone; CPU and system calls per request are the server's own.
Needs wrk and perf (tracepoints: root or perf_event_paranoid ≤ 1); without perf, the system
call columns are left out.
"""
import argparse, base64, json, os, re, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchserver import ADMIN, free_port, server_env, stop, wait_healthy  # noqa: E402
import http.client  # noqa: E402

SYSCALLS = ["clock_gettime", "futex", "epoll_wait", "recvfrom", "writev", "sendto", "write", "read", "sched_yield"]
EVENTS = ["raw_syscalls:sys_enter"] + [f"syscalls:sys_enter_{s}" for s in SYSCALLS] + ["context-switches", "cpu-migrations"]


def cpu_ticks(pid):
    """(utime, stime) of the process, in clock ticks."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def measured(pid, n_of, seconds):
    """Runs `n_of()` (a wrk run that returns its request count) and gives the server's CPU per
    request over it: all, user space and kernel, in µs; and the cores it used."""
    tick = os.sysconf("SC_CLK_TCK")
    t0, (u0, s0) = time.monotonic(), cpu_ticks(pid)
    n = n_of()
    (u1, s1), elapsed = cpu_ticks(pid), time.monotonic() - t0
    user, system = (u1 - u0) / tick, (s1 - s0) / tick
    return n, {"requests": n, "rps": round(n / seconds),
               "cpu_us_per_request": round((user + system) / n * 1e6, 1),
               "user_us_per_request": round(user / n * 1e6, 1), "kernel_us_per_request": round(system / n * 1e6, 1),
               "cores_used": round((user + system) / elapsed, 2)}


def batch_prefix():
    return ["chrt", "--batch", "0"] if shutil.which("chrt") and subprocess.run(
        ["chrt", "--batch", "0", "true"], capture_output=True).returncode == 0 else []


def wrk(url, script, seconds, conns):
    out = subprocess.run(batch_prefix() + ["wrk", f"-t{min(2, conns)}", f"-c{conns}", f"-d{seconds}s"] + (["-s", script] if script else []) + [url],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+) requests in", out)
    if not m:
        sys.exit(f"wrk printed no request count:\n{out}")
    if "Non-2xx" in out:
        sys.exit(f"non-2xx answers:\n{out}")
    return int(m.group(1)), out


def one_run(bin_path, seconds, warmup, conns, use_perf, extra_env, control):
    port = free_port()
    data = tempfile.mkdtemp(prefix="issuance-cost-")
    env = server_env(data, port, AUTHRIM_SIGNING_ALGORITHMS="RS256 ES256", AUTHRIM_TOKEN_SIGNING_ALG="ES256", **extra_env)
    log = open(os.path.join(data, "server.log"), "w")
    srv = subprocess.Popen([bin_path, "serve"], env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_healthy(srv, port, 300, log.name)
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        c.request("POST", "/admin/clients", body=json.dumps({
            "client_id": "bench", "grant_types": ["client_credentials"], "scope": "api:read",
            "redirect_uris": ["https://rp.example/cb"]}),
            headers={"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
        r = c.getresponse()
        secret = json.loads(r.read())["client_secret"]
        basic = base64.b64encode(f"bench:{secret}".encode()).decode()
        body = "grant_type=client_credentials&scope=api%3Aread"
        c.request("POST", "/token", body=body, headers={
            "Authorization": f"Basic {basic}", "Content-Type": "application/x-www-form-urlencoded"})
        r = c.getresponse()
        answer = json.loads(r.read())
        header = json.loads(base64.urlsafe_b64decode(answer["access_token"].split(".")[0] + "=="))
        if r.status != 200 or header["alg"] != "ES256":
            sys.exit(f"{bin_path}: the check issuance answered {r.status} {header}")
        c.close()
        script = os.path.join(data, "cc.lua")
        with open(script, "w") as f:
            f.write(f'wrk.method = "POST"\nwrk.body = "{body}"\n'
                    'wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"\n'
                    f'wrk.headers["Authorization"] = "Basic {basic}"\n')
        url = f"http://127.0.0.1:{port}/token"
        wrk(url, script, warmup, conns)
        perf = None
        if use_perf:
            perf_out = os.path.join(data, "perf.txt")
            perf = subprocess.Popen(["perf", "stat", "-x", ",", "-o", perf_out, "-e", ",".join(EVENTS),
                                     "-p", str(srv.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)
        n, result = measured(srv.pid, lambda: wrk(url, script, seconds, conns)[0], seconds)
        result = {"bin": bin_path, **result}
        if perf:
            perf.send_signal(2)
            perf.wait(30)
            counts = {}
            with open(perf_out) as f:
                for line in f:
                    parts = line.strip().split(",")
                    if len(parts) > 2 and parts[0].replace(".", "").isdigit():
                        counts[parts[2].replace("syscalls:sys_enter_", "").replace("raw_syscalls:sys_enter", "all")] = int(float(parts[0]))
            # perf counted a little longer than wrk ran (its start and stop around the run):
            # a small overestimate, the same for every binary.
            result["per_request"] = {k: round(v / n, 2) for k, v in counts.items()}
        if control:
            # The floor: the same connections and generator on GET /healthz (the HTTP stack, the
            # middleware and the kernel's loopback work, no token): what is left of an
            # issuance's CPU above it is the token's own work.
            health = f"http://127.0.0.1:{port}/healthz"
            wrk(health, None, warmup, conns)
            _, result["healthz"] = measured(srv.pid, lambda: wrk(health, None, seconds, conns)[0], seconds)
        return result
    finally:
        stop(srv, 60)
        shutil.rmtree(data, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", action="append", required=True, help="a server binary (repeat to alternate)")
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--seconds", type=int, default=8)
    p.add_argument("--warmup", type=int, default=2)
    p.add_argument("--connections", type=int, default=32)
    p.add_argument("--no-perf", action="store_true", help="skip the system call counts")
    p.add_argument("--control", action="store_true",
                   help="also measure GET /healthz on the same server: the per-request floor without token work")
    p.add_argument("--env", action="append", default=[], help="KEY=VALUE for the server's environment")
    a = p.parse_args()
    extra_env = dict(e.split("=", 1) for e in a.env)
    use_perf = not a.no_perf and shutil.which("perf") is not None
    for r in range(a.rounds):
        for b in a.bin:
            res = one_run(b, a.seconds, a.warmup, a.connections, use_perf, extra_env, a.control)
            res["round"] = r + 1
            res["connections"] = a.connections
            print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
