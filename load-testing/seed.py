#!/usr/bin/env python3
"""Seed an Authrim server for a load-test scenario through the test-only bulk interface
(/test/bulk/*, enabled by AUTHRIM_ENABLE_TEST_ENDPOINTS=true) and write the scenario's seed
file, in the formats described in CONTRACT.md. Python 3 standard library only.

    python3 load-testing/seed.py --base http://127.0.0.1:8080 --admin-token T \\
        --scenario token-exchange --out results/run/seed.json [--count N]
"""
import argparse
import json
import random
import sys
import urllib.error
import urllib.request

TE = "urn:ietf:params:oauth:grant-type:token-exchange"
REDIRECT = "https://rp.example/callback"
SCOPES = ["openid profile email address phone", "openid profile email", "openid profile", "openid"]
SERVICES = ["service-gateway", "service-bff", "service-worker", "service-scheduler", "service-notifier"]
AUDIENCES = [f"https://api.example.com/{a}" for a in (
    "gateway users payments orders inventory shipping billing search catalog reviews "
    "notifications analytics auth profile settings reports media messages admin audit").split()]
RESOURCES = [
    "https://resource.example.com/api/v1", "https://data.example.com/graphql", "https://files.example.com/storage",
    "https://stream.example.com/events", "https://ml.example.com/predict", "https://cache.example.com/kv",
    "https://queue.example.com/jobs", "https://mail.example.com/send", "https://pay.example.com/charge",
    "https://geo.example.com/lookup",
]
BATCH = 5_000


class Seeder:
    def __init__(self, base, admin_token):
        self.base = base.rstrip("/")
        self.token = admin_token

    def post(self, path, body):
        req = urllib.request.Request(
            self.base + path, data=json.dumps(body).encode(), method="POST",
            headers={"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=600) as res:
                return json.load(res)
        except urllib.error.HTTPError as e:
            sys.exit(f"seed: {path} answered {e.code}: {e.read().decode(errors='replace')}")

    def client(self, client_id, **metadata):
        body = {"count": 1, "prefix": client_id, "client": metadata}
        c = self.post("/test/bulk/clients", body)["clients"][0]
        return c["client_id"], c["client_secret"]

    def users(self, n, prefix="load-user"):
        return [u["id"] for u in self.post("/test/bulk/users", {"count": n, "prefix": prefix, "password": "load-test-password"})["users"]]

    def tokens(self, client_id, n, kind="valid", users=None, **extra):
        out = []
        while len(out) < n:
            want = min(BATCH, n - len(out))
            body = {"client_id": client_id, "kind": kind, **extra}
            if users:
                body.update(user_ids=users, per_user=-(-want // len(users)))
            else:
                body.update(count=want)
            out += self.post("/test/bulk/tokens", body)["tokens"][:want]
        return out


def token_exchange(s, count):
    client_id, secret = s.client("exchanger", grant_types=[TE], redirect_uris=[], scope=SCOPES[0],
                                 allowed_audiences=AUDIENCES, allowed_resources=RESOURCES)
    webapp, _ = s.client("webapp", redirect_uris=[REDIRECT], scope=SCOPES[0])
    for svc in SERVICES:
        s.post("/test/bulk/clients", {"count": 1, "prefix": svc, "client": {
            "grant_types": ["client_credentials"], "redirect_uris": [], "scope": "svc"}})
    users = s.users(100)
    actors = [s.tokens(f"{svc}-0", 1, scope="svc")[0] for svc in SERVICES]
    n = count or 1000
    # The reference's mix (token-exchange-load-test.ja.md §5.3): 14/56/10/10/10 %.
    parts = {k: round(n * p) for k, p in
             [("valid_with_actor", .14), ("valid", .56), ("expired", .10), ("invalid", .10), ("revoked", .10)]}
    valid = s.tokens(webapp, parts["valid_with_actor"] + parts["valid"], users=users, scope=SCOPES[0])
    cases = [{"kind": "valid_with_actor", "subject_token": t, "actor_token": actors[i % 5], "expect": 200}
             for i, t in enumerate(valid[:parts["valid_with_actor"]])]
    cases += [{"kind": "valid", "subject_token": t, "expect": 200} for t in valid[parts["valid_with_actor"]:]]
    cases += [{"kind": "expired", "subject_token": t, "expect": 400}
              for t in s.tokens(webapp, parts["expired"], kind="expired", users=users, scope=SCOPES[0])]
    cases += [{"kind": "invalid", "subject_token": f"eyJhbGciOiJSUzI1NiJ9.invalid.{i:08d}", "expect": 400}
              for i in range(parts["invalid"])]
    cases += [{"kind": "revoked", "subject_token": t, "expect": 400}
              for t in s.tokens(webapp, parts["revoked"], kind="revoked", users=users, scope=SCOPES[0])]
    # Interleave so that every slice of the run sees the mix.
    random.Random(8693).shuffle(cases)
    return {"client_id": client_id, "client_secret": secret,
            "audiences": AUDIENCES, "resources": RESOURCES, "scopes": SCOPES, "cases": cases}


def refresh_rotation(s, count):
    client_id, secret = s.client("refresher", grant_types=["authorization_code", "refresh_token"],
                                 redirect_uris=[REDIRECT], scope="openid offline_access")
    users = s.users(min(count or 1000, 10_000))
    tokens = s.tokens(client_id, count or 1000, users=users, token_type="refresh_token", scope="offline_access")
    return {"client_id": client_id, "client_secret": secret, "tokens": tokens}


def authorization_code(s, count):
    client_id, secret = s.client("code-client", redirect_uris=[REDIRECT], scope="openid profile email")
    users = s.users(1000)
    codes = []
    n = count or 1000
    while len(codes) < n:
        want = min(BATCH, n - len(codes))
        body = {"client_id": client_id, "redirect_uri": REDIRECT, "user_ids": users,
                "per_user": -(-want // len(users)), "scope": "openid profile email", "expires_in": 3600}
        codes += s.post("/test/bulk/codes", body)["codes"][:want]
    return {"client_id": client_id, "client_secret": secret, "redirect_uri": REDIRECT, "codes": codes}


def userinfo(s, count):
    client_id, _ = s.client("userinfo-client", redirect_uris=[REDIRECT], scope="openid profile email")
    users = s.users(1000)
    return {"tokens": s.tokens(client_id, count or 4000, users=users, scope="openid profile email")}


def silent_auth(s, count):
    client_id, _ = s.client("silent-client", redirect_uris=[REDIRECT], scope="openid profile email")
    users = s.users(count or 1000)
    sessions = s.post("/test/bulk/sessions", {"user_ids": users, "consent_client_id": client_id, "scope": "openid"})
    return {"client_id": client_id, "redirect_uri": REDIRECT, "cookies": [x["cookie"] for x in sessions["sessions"]]}


def introspection(s, count):
    webapp, _ = s.client("webapp", redirect_uris=[REDIRECT], scope="openid profile email")
    client_id, secret = s.client("resource-server", grant_types=["client_credentials"], redirect_uris=[], scope="rs")
    users = s.users(1000)
    return {"client_id": client_id, "client_secret": secret,
            "tokens": s.tokens(webapp, count or 4000, users=users, scope="openid profile email")}


SCENARIOS = {
    "token-exchange": token_exchange,
    "refresh-rotation": refresh_rotation,
    "authorization-code": authorization_code,
    "userinfo": userinfo,
    "silent-auth": silent_auth,
    "introspection": introspection,
}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--base", required=True)
    p.add_argument("--admin-token", required=True)
    p.add_argument("--scenario", required=True, choices=sorted(SCENARIOS))
    p.add_argument("--out", required=True, help="seed file to write")
    p.add_argument("--count", type=int, default=0,
                   help="codes (authorization-code), families (refresh-rotation), tokens (userinfo, "
                        "introspection, token-exchange cases), sessions (silent-auth); 0 = the reference's")
    a = p.parse_args()
    seed = SCENARIOS[a.scenario](Seeder(a.base, a.admin_token), a.count)
    with open(a.out, "w") as f:
        json.dump(seed, f)
    sizes = {k: len(v) for k, v in seed.items() if isinstance(v, list)}
    print(f"seeded {a.scenario}: {sizes} -> {a.out}")


if __name__ == "__main__":
    main()
