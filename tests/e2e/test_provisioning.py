"""Outbound provisioning (issue 32, slice 3): Authrim as a SCIM client keeping an
application's users in step, against a SCIM server nobody here wrote:
`scim2-server <https://github.com/python-scim/scim2-server>`_ (pinned in ``requirements.txt``),
its in-memory store, started by the test with a bearer token.

Between the two runs a small gate (a proxy the test controls) that can be *down* (503, the
target unreachable) or *lose* answers (the target acts, Authrim never hears it did: a crash or a
timeout after the write). Checked: users assigned to the application (by a role) arrive with
their attributes, changes follow, a disabled or unassigned user is deactivated there, a deleted
one deleted; a change made while the target is down and Authrim killed (SIGKILL) before it was
delivered arrives after the restart, once; an answer lost after the target made a user makes
no second one (found again by externalId).
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests

from conftest import HTTP_TIMEOUT_S, _free_port, admin, run_authrim

SCIM_SERVER = Path(sys.executable).parent / "scim2-server"
TOKEN = "target-secret-token"
WAIT_S = 20.0


class Gate:
    """A proxy in front of the target: ``mode`` is ``open``, ``down`` (503 without forwarding)
    or ``lose`` (a write forwarded, then answered 503: the target acted, the answer is lost;
    reads pass)."""

    def __init__(self, upstream_port: int):
        self.mode = "open"
        self.seen: list[str] = []
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                gate.seen.append(f"{gate.mode} {self.command} {self.path}")
                status, data, ctype = 503, b"", "text/plain"
                if gate.mode != "down":
                    conn = http.client.HTTPConnection("127.0.0.1", upstream_port, timeout=30)
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in ("connection", "host")}
                    conn.request(self.command, self.path, body=body, headers=headers)
                    resp = conn.getresponse()
                    data, status, ctype = resp.read(), resp.status, resp.getheader("Content-Type") or "application/json"
                    conn.close()
                    if gate.mode == "lose" and self.command != "GET":
                        status, data = 503, b""
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()


@contextmanager
def scim_target(tmp_path: Path):
    port = _free_port()
    log = open(tmp_path / "scim2-server.log", "wb")
    proc = subprocess.Popen([str(SCIM_SERVER), "--port", str(port), "--bearer-token", TOKEN], stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + WAIT_S
        while True:
            try:
                if requests.get(f"{base}/ServiceProviderConfig", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            assert time.monotonic() < deadline, (tmp_path / "scim2-server.log").read_text()
            time.sleep(0.1)
        gate = Gate(port)
        yield base, gate
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        log.close()


def there(base: str, external_id: str, kind: str = "Users") -> list[dict]:
    """The target's users (or groups) whose externalId is ``external_id``."""
    r = requests.get(f"{base}/{kind}", params={"filter": f'externalId eq "{external_id}"'},
                     headers={"Authorization": f"Bearer {TOKEN}"}, timeout=HTTP_TIMEOUT_S)
    assert r.status_code == 200, r.text
    return r.json().get("Resources", [])


def eventually(what, check, timeout: float = WAIT_S):
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.1)


def make_user(server, username: str, claims: dict) -> str:
    r = admin(server, "POST", "/admin/users", {"username": username, "password": "correct horse battery", "claims": claims})
    assert r.status_code == 201, r.text
    return r.json()["id"]


def assign(server, client_id: str, user_id: str):
    r = admin(server, "PUT", f"/admin/clients/{client_id}/roles/{'member'}/assignments/users/{user_id}")
    assert r.status_code in (200, 204), r.text


ENV = {"AUTHRIM_BACKCHANNEL_LOGOUT_RETRY_INITIAL": "1"}


def set_up(server, gate: Gate) -> str:
    client = server.create_client(client_id=server.unique("wiki"), client_name="Wiki", redirect_uris=["https://wiki.example/cb"])["client_id"]
    assert admin(server, "PUT", f"/admin/clients/{client}/roles/member", {"description": "uses the wiki"}).status_code in (200, 201, 204)
    r = admin(server, "PUT", f"/admin/clients/{client}/provisioning",
              {"endpoint": f"http://127.0.0.1:{gate.port}", "token": TOKEN, "users": "assigned"})
    assert r.status_code == 200, r.text
    assert "token" not in r.json() and r.json()["enabled"] is True, r.json()
    return client


def test_assigned_users_are_provisioned_changed_deactivated_and_deleted(tmp_path, tmp_path_factory):
    with scim_target(tmp_path) as (base, gate), run_authrim(tmp_path_factory, "provisioning", ENV) as server:
        client = set_up(server, gate)
        babs = make_user(server, "babs", {"email": "babs@example.com", "given_name": "Barbara", "family_name": "Jensen", "name": "Babs Jensen"})
        carol = make_user(server, "carol", {"email": "carol@example.com"})
        assign(server, client, babs)

        user = eventually("babs provisioned", lambda: there(base, babs))[0]
        assert user["userName"] == "babs" and user["active"] is True, user
        assert user["name"]["givenName"] == "Barbara" and user["displayName"] == "Babs Jensen", user
        assert user["emails"][0]["value"] == "babs@example.com", user
        time.sleep(1)
        assert there(base, carol) == [], "carol holds no role of the application"

        # A change follows; a disabled user is deactivated there.
        assert admin(server, "PATCH", f"/admin/users/{babs}", {"claims": {"name": "Barbara Jensen"}}).status_code == 200
        eventually("the new name", lambda: there(base, babs)[0]["displayName"] == "Barbara Jensen")
        assert admin(server, "PATCH", f"/admin/users/{babs}", {"disabled": True}).status_code == 200
        eventually("deactivated", lambda: there(base, babs)[0]["active"] is False)
        assert admin(server, "PATCH", f"/admin/users/{babs}", {"disabled": False}).status_code == 200
        eventually("active again", lambda: there(base, babs)[0]["active"] is True)

        # Unassigned: deactivated, kept. Assigned through a group: back.
        assert admin(server, "DELETE", f"/admin/clients/{client}/roles/member/assignments/users/{babs}").status_code in (200, 204)
        eventually("deactivated when unassigned", lambda: there(base, babs)[0]["active"] is False)
        r = admin(server, "POST", "/admin/groups", {"display_name": "Writers"})
        assert r.status_code == 201, r.text
        writers = r.json()["id"]
        assert admin(server, "PUT", f"/admin/clients/{client}/roles/member/assignments/groups/Writers").status_code in (200, 204)
        assert admin(server, "PUT", f"/admin/groups/Writers/members/users/{babs}").status_code in (200, 204)
        eventually("assigned through a group", lambda: there(base, babs)[0]["active"] is True)

        # The group holding the role is there too, with its members the target has.
        remote_babs = there(base, babs)[0]["id"]
        group = eventually("the group, with babs", lambda: [g for g in there(base, writers, "Groups") if [m["value"] for m in g.get("members", [])] == [remote_babs]])[0]
        assert group["displayName"] == "Writers", group
        assert admin(server, "PATCH", f"/admin/groups/{writers}", {"display_name": "Authors"}).status_code == 200
        eventually("renamed there", lambda: there(base, writers, "Groups")[0]["displayName"] == "Authors")

        # The state the admin API shows, then deletion.
        state = admin(server, "GET", f"/admin/clients/{client}/provisioning").json()
        assert state["provisioned"] == 1 and state["provisioned_groups"] == 1, state
        assert state["last_delivered_at"] and state.get("last_error") is None, state
        assert admin(server, "DELETE", f"/admin/users/{babs}").status_code in (200, 204)
        eventually("deleted there", lambda: there(base, babs) == [])
        eventually("and gone from the group", lambda: not there(base, writers, "Groups")[0].get("members"))
        assert len(there(base, carol)) == 0

        # The group no longer holding the role: deleted there.
        assert admin(server, "DELETE", f"/admin/clients/{client}/roles/member/assignments/groups/{writers}").status_code in (200, 204)
        eventually("the group deleted there", lambda: there(base, writers, "Groups") == [])
        # Each delivery is audited; a group's names the group, not a user.
        events = admin(server, "GET", "/admin/audit?event=scim_provisioned&limit=200").json()["events"]
        ours = [e for e in events if e["detail"].get("group_id") == writers]
        assert ours and all(not e.get("user_id") for e in ours), events[:3]
        assert any(e.get("user_id") == babs for e in events), events[:3]


def test_nothing_lost_across_a_kill_and_nothing_made_twice_when_an_answer_is_lost(tmp_path, tmp_path_factory):
    with scim_target(tmp_path) as (base, gate):
        with run_authrim(tmp_path_factory, "provisioning-crash", ENV) as server:
            client = set_up(server, gate)
            # The target is down: the change is queued, tried, and waits; then the server dies
            # without a chance to finish anything.
            gate.mode = "down"
            dora = make_user(server, "dora", {"email": "dora@example.com"})
            assign(server, client, dora)
            eventually("an attempt made", lambda: any(s.startswith("down ") for s in gate.seen))
            server.process.send_signal(signal.SIGKILL)
            server.process.wait(timeout=10)
            data_dir = server.data_dir
        assert there(base, dora) == []

        # Back up, the target too, but losing the answer of its first write: the user is made
        # there, Authrim hears nothing and tries again, finds them by externalId, makes no
        # second one.
        gate.mode = "lose"
        with run_authrim(tmp_path_factory, "provisioning-restarted", ENV, data_dir=data_dir) as server:
            eventually("made there", lambda: len(there(base, dora)) == 1)
            gate.mode = "open"
            eventually("delivered", lambda: admin(server, "GET", f"/admin/clients/{client}/provisioning").json()["pending"] == 0)
            made = there(base, dora)
            assert len(made) == 1, made
            r = requests.get(f"{base}/Users", params={"filter": 'userName eq "dora"'}, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=HTTP_TIMEOUT_S)
            assert r.json()["totalResults"] == 1, r.json()
            state = admin(server, "GET", f"/admin/clients/{client}/provisioning").json()
            assert state["provisioned"] == 1, state

            # A resync sends everyone again (the target's copy altered behind our back is put
            # right); a bad credential is shown on the target.
            rid = made[0]["id"]
            requests.patch(f"{base}/Users/{rid}", json={"schemas": ["urn:ietf:params:scim:api:messages:2.0:PatchOp"],
                                                        "Operations": [{"op": "replace", "path": "displayName", "value": "tampered"}]},
                           headers={"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/scim+json"}, timeout=HTTP_TIMEOUT_S)
            r = admin(server, "POST", f"/admin/clients/{client}/provisioning/resync")
            assert r.status_code == 202 and r.json()["queued"] == 1, r.text
            eventually("put right", lambda: there(base, dora)[0].get("displayName") != "tampered")
            r = admin(server, "PUT", f"/admin/clients/{client}/provisioning", {"endpoint": f"http://127.0.0.1:{gate.port}", "token": "wrong"})
            assert r.status_code == 200, r.text
            assert admin(server, "POST", f"/admin/clients/{client}/provisioning/resync").status_code == 202
            shown = lambda: "401" in (admin(server, "GET", f"/admin/clients/{client}/provisioning").json()["last_error"] or "")
            eventually("the refusal shown", shown)


# Seeds whose runs caught a real defect (a user made by an attempt whose answer was lost, then
# deleted or unassigned before the retry, left behind) before it was fixed; another can be
# tried with AUTHRIM_PROVISIONING_SEED.
SEEDS = [int(s) for s in os.environ.get("AUTHRIM_PROVISIONING_SEED", "2,4,5").split(",")]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_random_run_of_changes_and_faults_ends_with_the_target_agreeing(seed, tmp_path, tmp_path_factory):
    """Against a model: a seeded random run of changes (assignments, a group's members,
    disabling, renaming, deleting) while the target is up, down or losing answers; once it is
    up again and the outbox is drained, the target holds exactly what the model says: each
    user in scope once, with their state; nobody deleted; nobody twice; the group's members."""
    import random

    rng = random.Random(seed)
    with scim_target(tmp_path) as (base, gate), run_authrim(tmp_path_factory, "provisioning-model", ENV) as server:
        client = set_up(server, gate)
        r = admin(server, "POST", "/admin/groups", {"display_name": "Crew"})
        assert r.status_code == 201, r.text
        crew = r.json()["id"]
        assert admin(server, "PUT", f"/admin/clients/{client}/roles/member/assignments/groups/Crew").status_code in (200, 204)
        model = {}
        for i in range(6):
            uid = make_user(server, f"m{i}", {"name": f"M {i}"})
            model[uid] = {"exists": True, "direct": False, "crew": False, "disabled": False, "name": f"M {i}"}
        # Forty steps: ten with the target up, ten down, ten losing answers, ten at random;
        # each faulty stretch lasts until the target has met it (a delivery is at most a poll
        # away).
        for step in range(40):
            phase = ["open", "down", "lose", None][step // 10]
            if phase is not None:
                gate.mode = phase
            elif rng.random() < 0.3:
                gate.mode = rng.choice(["open", "down", "lose"])
            if step % 10 == 9 and phase in ("down", "lose"):
                eventually(f"a request met while {phase}", lambda: any(s.startswith(f"{phase} ") for s in gate.seen))
            uid = rng.choice(list(model))
            m = model[uid]
            if not m["exists"]:
                continue
            action = rng.choice(["direct", "crew", "disable", "rename", "rename", "delete"] if step > 10 else ["direct", "crew", "rename"])
            if action == "direct":
                method = "DELETE" if m["direct"] else "PUT"
                assert admin(server, method, f"/admin/clients/{client}/roles/member/assignments/users/{uid}").status_code in (200, 204)
                m["direct"] = not m["direct"]
            elif action == "crew":
                method = "DELETE" if m["crew"] else "PUT"
                assert admin(server, method, f"/admin/groups/Crew/members/users/{uid}").status_code in (200, 204)
                m["crew"] = not m["crew"]
            elif action == "disable":
                m["disabled"] = not m["disabled"]
                assert admin(server, "PATCH", f"/admin/users/{uid}", {"disabled": m["disabled"]}).status_code == 200
            elif action == "rename":
                m["name"] = f"{m['name'].split(' ')[0]} {step}"
                assert admin(server, "PATCH", f"/admin/users/{uid}", {"claims": {"name": m["name"]}}).status_code == 200
            else:
                assert admin(server, "DELETE", f"/admin/users/{uid}").status_code in (200, 204)
                m["exists"] = False
            time.sleep(rng.choice([0, 0, 0.05, 0.3]))

        gate.mode = "open"
        state = lambda: admin(server, "GET", f"/admin/clients/{client}/provisioning").json()
        eventually("the outbox drained", lambda: state()["pending"] == 0, timeout=120)

        remote_ids = {}
        for uid, m in model.items():
            held = there(base, uid)
            assert len(held) <= 1, f"{uid} made twice: {held}"
            in_scope = m["exists"] and (m["direct"] or m["crew"])
            if not m["exists"]:
                assert held == [], f"{uid} deleted here, still there: {held}"
            elif in_scope:
                assert len(held) == 1, f"{uid} in scope, not there ({m})"
                assert held[0]["active"] is (not m["disabled"]) and held[0]["displayName"] == m["name"], (m, held[0])
                remote_ids[uid] = held[0]["id"]
            else:
                # Out of scope: never sent (unassigned before its row ran), or deactivated.
                assert held == [] or held[0]["active"] is False, (m, held)
        group = there(base, crew, "Groups")
        assert len(group) == 1, group
        want = sorted(remote_ids[u] for u, m in model.items() if m["exists"] and m["crew"])
        assert sorted(x["value"] for x in group[0].get("members", [])) == want, (group, model)
        assert state()["last_delivered_at"], state()
