#!/usr/bin/env python3
"""Instructions per request on the hot paths, under callgrind (docs/benchmarks.md, "The admin
console and the 3 % budget (issue 18)"; the method of "Passkeys, pages and the 3 % budget").

Starts BIN under `valgrind --tool=callgrind` with a fresh data directory, creates a
confidential client (`bench`, client credentials, scope `api:read`) and a public client (`pub`)
through the admin API, a user and an access token for it through the test-only bulk interface,
then, for each case, on one keep-alive connection: 50 warm-up requests, `callgrind_control -z`,
N measured requests (every answer checked), `callgrind_control -d`; Ir of that dump / N.

    python3 load-testing/callgrind-paths.py --bin /work/bins/authrim-console-rel --label head-1 \\
        --out-dir /tmp/cg

With `--tenant SLUG` (issue 31, slice 4) it also creates tenant SLUG through the admin API
(`POST /admin/tenants`), the same clients, user and token in it (at `/t/SLUG/admin/…`), and runs
every case twice in the same server: on the default tenant (whose requests now pass the
resolver's read lock, since another tenant exists) and under `/t/SLUG` (the lock, a probe by
slug and the URI rewritten), the latter reported as `t:{case}`.

With `--groups N` (issue 32) it also measures a refresh-token grant that issues an ID token
(scope `openid offline_access`, rotation off so one request repeats) for a client that takes
groups by name and defines a role, twice: `refresh` for a user in no group, `refresh:groups` for
a user in N groups (each holding the role); the token sizes go in `sizes`. Run the server with
AUTHRIM_TOKEN_MAX_GROUPS at least N to see every group in the tokens (else the overage).

Prints one JSON line: {"label", "bin", "ir_per_request": {case: Ir/N}, "dumps": {case: file}}.
Needs valgrind (callgrind_control) and a binary with debug info for callgrind_annotate.
"""
import argparse, base64, glob, http.client, json, os, subprocess, sys, tempfile
import urllib.parse

from benchserver import ADMIN, call, free_port, server_env, stop, wait_healthy

WARMUP = 50
CASES = [("client_credentials", 200), ("userinfo", 300), ("introspection", 300), ("authorize", 300)]
REDIRECT = "http://127.0.0.1:9/cb"
AUTHORIZE = ("/authorize?response_type=code&client_id=pub&redirect_uri=" + urllib.parse.quote(REDIRECT, safe="")
             + "&scope=openid&state=s&code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
             + "&code_challenge_method=S256")


def admin(port, path, body):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    st, data = call(c, "POST", path, json.dumps(body),
                    {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"})
    c.close()
    if st not in (200, 201):
        sys.exit(f"{path}: {st} {data[:300]!r}")
    return json.loads(data)


def setup(port, prefix):
    """The clients, user and token of the cases at the issuer under `prefix` ("" for the
    default tenant, "/t/SLUG" for a path tenant), and the requests, each with its check."""
    bench = admin(port, prefix + "/admin/clients", {"client_id": "bench", "grant_types": ["client_credentials"],
                                                    "scope": "api:read", "redirect_uris": ["https://rp.example/cb"]})
    admin(port, prefix + "/admin/clients", {"client_id": "pub", "token_endpoint_auth_method": "none",
                                            "redirect_uris": [REDIRECT], "scope": "openid"})
    web = admin(port, prefix + "/test/bulk/clients", {"count": 1, "prefix": "webapp", "client": {
        "redirect_uris": ["https://rp.example/cb"], "scope": "openid profile email"}})["clients"][0]["client_id"]
    user = admin(port, prefix + "/test/bulk/users", {"count": 1, "prefix": "bench-user",
                                                     "password": "load-test-password"})["users"][0]["id"]
    token = admin(port, prefix + "/test/bulk/tokens", {"client_id": web, "kind": "valid", "user_ids": [user],
                                                       "per_user": 1, "scope": "openid profile email"})["tokens"][0]
    basic = "Basic " + base64.b64encode(f"bench:{bench['client_secret']}".encode()).decode()
    form = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic}
    return {
        "client_credentials": ("POST", prefix + "/token", "grant_type=client_credentials&scope=api%3Aread", form,
                               lambda st, b: st == 200 and b'"access_token"' in b),
        "userinfo": ("GET", prefix + "/userinfo", None, {"Authorization": f"Bearer {token}"},
                     lambda st, b: st == 200 and b'"sub"' in b),
        "introspection": ("POST", prefix + "/introspect", "token=" + urllib.parse.quote(token), form,
                          lambda st, b: st == 200 and b'"active":true' in b),
        "authorize": ("GET", prefix + AUTHORIZE, None, {}, lambda st, b: st == 200 and b"<form" in b),
    }


def groups_setup(port, n):
    """The `--groups` cases: client `grp`, users `plain` (no group) and `member` (in `n` groups
    holding the role `reader` of `grp`), a refresh token for each."""
    c = admin(port, "/admin/clients", {"client_id": "grp", "grant_types": ["authorization_code", "refresh_token"],
                                       "redirect_uris": ["https://rp.example/cb"], "scope": "openid offline_access",
                                       "groups_claim": "names"})
    users = admin(port, "/test/bulk/users", {"count": 2, "prefix": "grp-user", "password": "load-test-password"})["users"]
    plain, member = users[0]["id"], users[1]["id"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    auth = {"Authorization": f"Bearer {ADMIN}", "Content-Type": "application/json"}
    st, _ = call(conn, "PUT", "/admin/clients/grp/roles/reader", "{}", auth)
    assert st == 204, st
    for i in range(n):
        name = f"Department {i:03}"
        admin(port, "/admin/groups", {"display_name": name})
        for path in (f"/admin/groups/{urllib.parse.quote(name)}/members/users/{member}",
                     f"/admin/clients/grp/roles/reader/assignments/groups/{urllib.parse.quote(name)}"):
            st, b = call(conn, "PUT", path, None, auth)
            if st != 204:
                sys.exit(f"{path}: {st} {b[:300]!r}")
    conn.close()
    basic = "Basic " + base64.b64encode(f"grp:{c['client_secret']}".encode()).decode()
    form = {"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic}
    cases = {}
    for case, user in (("refresh", plain), ("refresh:groups", member)):
        token = admin(port, "/test/bulk/tokens", {"client_id": "grp", "user_ids": [user], "per_user": 1, "kind": "valid",
                                                  "token_type": "refresh_token", "scope": "openid offline_access"})["tokens"][0]
        cases[case] = ("POST", "/token", "grant_type=refresh_token&refresh_token=" + urllib.parse.quote(token), form,
                       lambda st, b: st == 200 and b'"id_token"' in b)
    return cases


def token_sizes(port, request):
    """The access and ID tokens' lengths (bytes) in one answer to `request`."""
    method, path, body, headers, _ = request
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    st, b = call(conn, method, path, body, headers)
    conn.close()
    v = json.loads(b)
    return {"access_token": len(v["access_token"]), "id_token": len(v["id_token"])}


def dump_total(path):
    """Ir of one callgrind dump: its `summary:` line (callgrind_annotate's PROGRAM TOTALS)."""
    with open(path) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    sys.exit(f"{path}: no summary line")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--bin", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--out-dir", required=True)
    p.add_argument("--startup-timeout", type=int, default=300)
    p.add_argument("--tenant", help="also create this tenant and run every case at its issuer (/t/SLUG)")
    p.add_argument("--groups", type=int, help="also measure refreshes of a user in this many groups (and of one in none)")
    a = p.parse_args()
    os.makedirs(a.out_dir, exist_ok=True)
    port = free_port()
    data = tempfile.mkdtemp(prefix=f"cg-{a.label}-")
    out = os.path.join(a.out_dir, f"callgrind.{a.label}")
    env = server_env(data, port, **({"AUTHRIM_REFRESH_TOKEN_ROTATION": "false"} if a.groups else {}))
    log = open(os.path.join(a.out_dir, f"server.{a.label}.log"), "w")
    srv = subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", a.bin, "serve"],
                           env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        startup = wait_healthy(srv, port, a.startup_timeout, log.name, poll=1)

        if a.tenant:
            admin(port, "/admin/tenants", {"slug": a.tenant})
        result, dumps, sizes = {}, {}, {}
        runs = [("", "", CASES)] + ([(f"/t/{a.tenant}", "t:", CASES)] if a.tenant else [])
        if a.groups:
            runs.append(("", "", [("refresh", 200), ("refresh:groups", 200)]))
        for prefix, tag, cases in runs:
            requests = setup(port, prefix) if cases is CASES else groups_setup(port, a.groups)
            if cases is not CASES:
                sizes = {case: token_sizes(port, requests[case]) for case, _ in cases}
            for case, n in cases:
                method, path, body, headers, ok = requests[case]
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
                for i in range(WARMUP + n):
                    if i == WARMUP:
                        subprocess.run(["callgrind_control", "-z", str(srv.pid)], check=True, capture_output=True)
                    st, b = call(conn, method, path, body, headers)
                    if not ok(st, b):
                        sys.exit(f"{tag}{case} request {i}: {st} {b[:300]!r}")
                before = set(glob.glob(out + ".*"))
                subprocess.run(["callgrind_control", "-d", tag + case, str(srv.pid)], check=True, capture_output=True)
                conn.close()
                new = sorted(set(glob.glob(out + ".*")) - before, key=os.path.getmtime)
                if not new:
                    sys.exit(f"{tag}{case}: no new dump beside {out}")
                dumps[tag + case] = new[-1]
                result[tag + case] = round(dump_total(new[-1]) / n, 1)
        print(json.dumps({"label": a.label, "bin": a.bin, "startup_s": round(startup, 1),
                          "ir_per_request": result, "dumps": dumps, **({"sizes": sizes} if sizes else {})}), flush=True)
    finally:
        stop(srv, 120)


if __name__ == "__main__":
    main()
