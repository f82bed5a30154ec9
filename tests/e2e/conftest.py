"""Fixtures for the Authlib end-to-end tests.

Starts the real Authrim binary (``$AUTHRIM_BIN serve``) on a free loopback
port with a throw-away data directory, waits for ``/healthz`` and stops it
with SIGTERM at the end of the session. The server's stdout/stderr go to a
log file whose tail is printed when startup fails and attached to the report
of every failing test.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable
from urllib.parse import urlsplit

import pytest
import requests
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

REPO_ROOT = Path(__file__).resolve().parents[2]
# How much longer a whole browser or client program may run than its bound for a serial run:
# under pytest-xdist (scripts/test.sh runs ``-n 2``) each worker's programs share the machine's
# cores with the other workers', and a walk in Chromium keeps a core busy all along; the machine
# may be running other work too (a walk took twice its serial time on a loaded 2-core machine).
# So twice the number of workers; serially 1. The programs' own limits (browser/report.mjs,
# giveUpAfter) read it from the environment. Only these whole-program bounds scale, which only
# matter to a program that hangs; a step's wait (10 s) and every assertion on time do not.
_WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
TIME_SCALE = 2 * _WORKERS if _WORKERS > 1 else 1
os.environ["AUTHRIM_E2E_TIME_SCALE"] = str(TIME_SCALE)
HEALTH_TIMEOUT_S = 20.0
SHUTDOWN_TIMEOUT_S = 15.0
HTTP_TIMEOUT_S = 10.0

# Shared with the reporting hook below.
_SERVER_LOG: dict[str, Path] = {}
# Servers a test started for itself (start_authrim), while it runs: (name, log path).
_EXTRA_LOGS: list[tuple[str, Path]] = []

ALICE_PASSWORD = "correct horse battery"
ALICE_CLAIMS = {
    "email": "alice@example.com",
    "email_verified": True,
    "name": "Alice Liddell",
    "given_name": "Alice",
    "family_name": "Liddell",
    "phone_number": "+81 3 1234 5678",
    "phone_number_verified": False,
    "address": {"country": "JP", "locality": "Tokyo"},
}


def _log_tail(path: Path, max_chars: int = 20000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:  # pragma: no cover - diagnostics only
        return f"<could not read server log {path}: {exc}>"
    if len(text) > max_chars:
        text = "...[truncated]...\n" + text[-max_chars:]
    return text


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _resolve_binary() -> Path:
    raw = os.environ.get("AUTHRIM_BIN", "target/debug/authrim")
    path = Path(raw)
    if not path.is_absolute():
        path = REPO_ROOT / path
    return path


def admin(server: "AuthrimServer", method: str, path: str, body: dict | None = None) -> requests.Response:
    """`method path` (with a JSON `body`) to the admin API of `server`, with its token."""
    return requests.request(method, server.url(path), json=body, timeout=HTTP_TIMEOUT_S,
                            headers={"Authorization": f"Bearer {server.admin_token}"})


@dataclass
class AuthrimServer:
    base_url: str
    issuer: str
    admin_token: str
    log_path: Path
    process: subprocess.Popen
    # The server's AUTHRIM_DATA_DIR, for the `authrim` CLI commands that work on it.
    data_dir: Path | None = None
    _counter: int = field(default=0)
    # A tenant's Alice, made by the first test that runs against the tenant (`issuer`).
    tenant_alice: dict | None = None

    def url(self, path: str) -> str:
        return self.base_url + path

    def admin_post(self, path: str, body: dict) -> requests.Response:
        return admin(self, "POST", path, body)

    def unique(self, prefix: str) -> str:
        self._counter += 1
        return f"{prefix}-{self._counter}-{secrets.token_hex(3)}"

    def create_client(self, **metadata) -> dict:
        """POST /admin/clients and return the JSON registration response."""
        resp = self.admin_post("/admin/clients", metadata)
        assert resp.status_code == 201, (
            f"POST /admin/clients {metadata!r} -> {resp.status_code} {resp.text}"
        )
        return resp.json()

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """Run ``$AUTHRIM_BIN <args>`` on this server's data directory (as its operator
        would, next to the running server); fails the test if it exits non-zero."""
        env = dict(os.environ, AUTHRIM_DATA_DIR=str(self.data_dir))
        done = subprocess.run([str(_resolve_binary()), *args], cwd=str(REPO_ROOT), env=env,
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=30)
        assert done.returncode == 0, (
            f"authrim {' '.join(args)} -> exit {done.returncode}\n{done.stderr}\n{done.stdout}")
        return done

    def create_user(self, username: str, password: str, claims: dict) -> dict:
        body = {"username": username, "password": password, "claims": claims}
        resp = self.admin_post("/admin/users", body)
        assert resp.status_code == 201, (
            f"POST /admin/users {username!r} -> {resp.status_code} {resp.text}"
        )
        return resp.json()

    def create_tenant(self, slug: str, hosts: list[str] | None = None) -> "AuthrimServer":
        """POST /admin/tenants on this (the default tenant's) server and return the new
        tenant's view: ``issuer`` is the tenant's, as the admin API says, and ``url()`` and the
        admin calls address it (its ``/t/{slug}`` prefix, or its host), so that code written
        for the default issuer runs unchanged against the tenant."""
        body = {"slug": slug, **({"hosts": hosts} if hosts else {})}
        resp = self.admin_post("/admin/tenants", body)
        assert resp.status_code == 201, f"POST /admin/tenants {body!r} -> {resp.status_code} {resp.text}"
        issuer = resp.json()["issuer"]
        # A path tenant is reached at the server's address with its prefix; a host tenant at
        # its host, which the tests choose to resolve to the server (localhost).
        base_url = issuer if hosts else f"{self.base_url}/t/{slug}"
        return replace(self, issuer=issuer, base_url=base_url, _counter=0)


# What `authrim serve` says when its port is taken (then run_authrim tries another port).
ADDRESS_IN_USE = "Address already in use"
PORT_ATTEMPTS = 3
HEALTH_POLL_S = 0.05


def _start_authrim(binary: Path, args: tuple, data_dir: Path, log_path: Path, host: str | None,
                   extra_env: dict | None):
    """Start the server on a free port (see run_authrim); returns the process, port, base URL,
    issuer, admin token and a function that stops it (returning its exit code, None if it had
    to be killed)."""
    port = _free_port()
    base_url = f"http://127.0.0.1:{port}"
    issuer = f"http://{host or 'localhost'}:{port}"
    admin_token = secrets.token_urlsafe(32)
    env = dict(os.environ)
    if host is None:
        env.pop("AUTHRIM_ISSUER", None)
    env.update(
        {
            "AUTHRIM_LISTEN": f"127.0.0.1:{port}",
            **({"AUTHRIM_ISSUER": issuer} if host is not None else {}),
            "AUTHRIM_DATA_DIR": str(data_dir),
            "AUTHRIM_ADMIN_TOKEN": admin_token,
            "AUTHRIM_LOG_FORMAT": "json",
            # The tests serve client documents (jwks_uri, metadata documents) on loopback.
            "AUTHRIM_FETCH_ALLOW_PRIVATE_ADDRESSES": "true",
            # Strict refresh-token rotation: the tests of theft detection replay the token
            # just replaced. The default grace has its own test (test_spa.py).
            "AUTHRIM_REFRESH_REUSE_GRACE": "0",
            **(extra_env or {}),
        }
    )
    # A setting given as None is left at the server's default.
    env = {k: v for k, v in env.items() if v is not None}

    log_file = open(log_path, "wb")
    proc = subprocess.Popen(
        [str(binary), *args],
        cwd=str(REPO_ROOT),
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log_file,
        stderr=subprocess.STDOUT,
    )

    def stop() -> int | None:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=SHUTDOWN_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
                log_file.close()
                return None
        log_file.close()
        return proc.returncode

    return proc, port, base_url, issuer, admin_token, stop


def _wait_healthy(proc: subprocess.Popen, base_url: str) -> tuple[bool, str]:
    """Poll ``/healthz`` until it answers 200 (True), the process exits or HEALTH_TIMEOUT_S
    passes (False, and the last error)."""
    deadline = time.monotonic() + HEALTH_TIMEOUT_S
    last_error = "no attempt made"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False, f"server exited early with code {proc.returncode}"
        try:
            r = requests.get(base_url + "/healthz", timeout=2)
            if r.status_code == 200:
                return True, ""
            last_error = f"/healthz -> {r.status_code} {r.text[:200]}"
        except requests.RequestException as exc:
            last_error = f"/healthz: {exc.__class__.__name__}: {exc}"
        time.sleep(HEALTH_POLL_S)
    return False, last_error



@contextmanager
def run_authrim(tmp_path_factory: pytest.TempPathFactory, name: str = "authrim",
                extra_env: dict | None = None, host: str | None = "127.0.0.1",
                args: tuple = ("serve",), data_dir: Path | None = None):
    """Start ``$AUTHRIM_BIN serve`` on a free loopback port with a fresh data directory and
    ``extra_env`` on top of the usual settings (None: unset, the server's default); yield it once healthy, stop it with SIGTERM.

    ``host`` names the server in its issuer: ``"localhost"`` gives ``http://localhost:<port>``
    (a domain, which WebAuthn needs: passkeys are off under an IP issuer) while it still
    listens on 127.0.0.1; ``base_url`` (health check, admin API) stays the 127.0.0.1 address.
    ``host=None`` sets no ``AUTHRIM_ISSUER``: the server's default (``http://localhost:`` and
    the port it listens on). ``args``: the command (``("serve", "--demo")``, say);
    ``data_dir``: an existing data directory to start on (a restart) instead of a fresh one.
    """
    binary = _resolve_binary()
    if not binary.is_file() or not os.access(binary, os.X_OK):
        pytest.fail(
            f"Authrim binary not found or not executable: {binary} "
            "(set AUTHRIM_BIN or build target/debug/authrim first)",
            pytrace=False,
        )

    workdir = tmp_path_factory.mktemp(name)
    log_path = workdir / "server.log"

    fresh_data_dir = data_dir is None
    if data_dir is None:
        data_dir = workdir / "data"
    for attempt in range(1, PORT_ATTEMPTS + 1):
        if fresh_data_dir:
            # A retry starts as afresh as the first attempt (which may have made a signing key).
            shutil.rmtree(data_dir, ignore_errors=True)
            data_dir.mkdir()
        started = _start_authrim(binary, args, data_dir, log_path, host, extra_env)
        proc, port, base_url, issuer, admin_token, stop = started
        healthy, last_error = _wait_healthy(proc, base_url)
        if healthy:
            break
        stop()
        log = _log_tail(log_path)
        # The port _free_port found was free, but something else (another test, another
        # pytest-xdist worker) may have taken it before the server bound it: try another.
        if attempt < PORT_ATTEMPTS and proc.returncode is not None and ADDRESS_IN_USE in log:
            print(f"authrim could not listen on port {port} (taken since it was picked); another port")
            continue
        print(f"----- authrim server log ({log_path}) -----\n{log}")
        pytest.fail(
            f"Authrim did not become healthy within {HEALTH_TIMEOUT_S:.0f}s: "
            f"{last_error}\n----- server log -----\n{log}",
            pytrace=False,
        )

    server = AuthrimServer(
        base_url=base_url,
        issuer=issuer,
        admin_token=admin_token,
        log_path=log_path,
        process=proc,
        data_dir=data_dir,
    )
    try:
        yield server
    finally:
        code = stop()
        # A clean SIGTERM shutdown should exit 0; report (but don't fail on)
        # anything else so it is visible in the pytest output with -s / -rA.
        if code not in (0, None):
            print(f"authrim exited with code {code} after SIGTERM; log: {log_path}")
        elif code is None:
            print(f"authrim ignored SIGTERM and had to be killed; log: {log_path}")


@pytest.fixture(scope="session")
def authrim_server(tmp_path_factory: pytest.TempPathFactory):
    with run_authrim(tmp_path_factory) as server:
        _SERVER_LOG["path"] = server.log_path
        yield server


@pytest.fixture
def start_authrim(tmp_path_factory: pytest.TempPathFactory):
    """Another server for one test, with its own settings: ``start(name, extra_env)``
    returns it running (with a fresh data dir and admin token); it stops after the test.
    ``host="localhost"`` gives it a domain issuer (see ``run_authrim``).
    Its log is attached to the report when the test fails."""
    with ExitStack() as stack:
        def start(name: str, extra_env: dict, host: str = "127.0.0.1") -> AuthrimServer:
            server = stack.enter_context(run_authrim(tmp_path_factory, name, extra_env, host))
            _EXTRA_LOGS.append((name, server.log_path))
            return server

        try:
            yield start
        finally:
            _EXTRA_LOGS.clear()


@pytest.fixture(scope="session")
def discovery(authrim_server: AuthrimServer) -> dict:
    resp = requests.get(
        authrim_server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S
    )
    assert resp.status_code == 200, resp.text
    return resp.json()


@pytest.fixture(scope="session")
def jwks(discovery: dict) -> dict:
    resp = requests.get(discovery["jwks_uri"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, resp.text
    return resp.json()


@pytest.fixture(scope="session")
def alice(authrim_server: AuthrimServer) -> dict:
    """The end user, as returned by POST /admin/users, plus her password."""
    user = authrim_server.create_user("alice", ALICE_PASSWORD, ALICE_CLAIMS)
    assert user.get("id"), f"admin user response has no id: {user!r}"
    assert user.get("username") == "alice", user
    return {**user, "password": ALICE_PASSWORD}


@dataclass
class IssuerUnderTest:
    """One issuer of the session's deployment, for the tests that run against several
    (``issuer`` below): the default tenant's, a path tenant's (``{issuer}/t/acme``) or a host
    tenant's (``http://localhost:<port>``, the server being ``127.0.0.1:<port>`` to the
    default tenant). ``server`` addresses it (``url()``, clients, users); ``other`` is
    another issuer of the same deployment, which must refuse what this one issued."""
    kind: str
    server: AuthrimServer
    discovery: dict
    jwks: dict
    alice: dict
    other: AuthrimServer

    @property
    def base(self) -> str:
        """The issuer's path (``/t/acme``; empty at a host's root): its pages' forms are
        under it."""
        return urlsplit(self.server.issuer).path


def issuer_under_test(kind: str, server: AuthrimServer, alice: dict | None, other: AuthrimServer) -> IssuerUnderTest:
    meta = requests.get(server.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S)
    assert meta.status_code == 200, f"{kind}: discovery -> {meta.status_code} {meta.text}"
    meta = meta.json()
    assert meta["issuer"] == server.issuer, (kind, meta["issuer"], server.issuer)
    keys = requests.get(meta["jwks_uri"], timeout=HTTP_TIMEOUT_S)
    assert keys.status_code == 200, keys.text
    if alice is None:
        # Made once per tenant: pytest may set a parametrized session fixture up again when
        # the order of tests switches between its parameters.
        if server.tenant_alice is None:
            server.tenant_alice = {**server.create_user("alice", ALICE_PASSWORD, ALICE_CLAIMS), "password": ALICE_PASSWORD}
        alice = server.tenant_alice
    return IssuerUnderTest(kind, server, meta, keys.json(), alice, other)


@pytest.fixture(scope="session")
def path_tenant(authrim_server: AuthrimServer) -> AuthrimServer:
    """A tenant of the session's server at ``{issuer}/t/acme``."""
    return authrim_server.create_tenant("acme")


@pytest.fixture(scope="session")
def host_tenant(authrim_server: AuthrimServer) -> AuthrimServer:
    """A tenant of the session's server at a host of its own: ``localhost:<port>``, which
    reaches the same server (listening on 127.0.0.1) under another name than the default
    tenant's ``127.0.0.1:<port>``; no resolver needed."""
    port = authrim_server.base_url.rsplit(":", 1)[1]
    return authrim_server.create_tenant("globex", hosts=[f"localhost:{port}"])


# The issuers a test taking ``issuer`` runs against; a test may name a subset or add
# "host-tenant" with ``@pytest.mark.parametrize("issuer", [...], indirect=True)``.
ISSUER_KINDS = ["default", "path-tenant"]


@pytest.fixture(scope="session", params=ISSUER_KINDS)
def issuer(request, authrim_server: AuthrimServer, alice: dict) -> IssuerUnderTest:
    """The issuer a third-party client runs against (issue 31): the default tenant's, then a
    tenant's, each with its discovery, keys and Alice (the same claims and password)."""
    kind = request.param
    if kind == "default":
        return issuer_under_test(kind, authrim_server, alice, request.getfixturevalue("path_tenant"))
    tenant = request.getfixturevalue(kind.replace("-", "_"))
    return issuer_under_test(kind, tenant, None, authrim_server)


def assert_refused_by_other_issuer(issuer: IssuerUnderTest, access_token: str, id_token: str | None = None):
    """What ``issuer`` issued means nothing to the other issuer of the deployment: its
    userinfo answers 401 for the access token, which still works here, its introspection (by
    a client of its own) says inactive, and neither token verifies against its keys."""
    mine = requests.get(issuer.discovery["userinfo_endpoint"], headers={"Authorization": f"Bearer {access_token}"},
                        timeout=HTTP_TIMEOUT_S)
    assert mine.status_code == 200, (issuer.kind, mine.status_code, mine.text)
    assert_inactive_at_other_issuer(issuer, access_token)
    assert_not_signed_by_other_issuer(issuer, access_token, id_token)


def assert_inactive_at_other_issuer(issuer: IssuerUnderTest, access_token: str):
    """The other issuer's userinfo answers 401 ``invalid_token`` for ``access_token`` and its
    introspection, asked by a client of its own, says inactive."""
    other = issuer.other
    meta = requests.get(other.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    assert meta["issuer"] != issuer.server.issuer, meta
    resp = requests.get(meta["userinfo_endpoint"], headers={"Authorization": f"Bearer {access_token}"},
                        timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 401, (issuer.kind, resp.status_code, resp.text)
    assert 'error="invalid_token"' in resp.headers.get("WWW-Authenticate", ""), resp.headers
    rs = other.create_client(client_id=other.unique("rs"), grant_types=["client_credentials"],
                             redirect_uris=[], token_endpoint_auth_method="client_secret_basic")
    resp = requests.post(meta["introspection_endpoint"], data={"token": access_token},
                         auth=(rs["client_id"], rs["client_secret"]), timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200 and resp.json() == {"active": False}, (issuer.kind, resp.text)


def assert_not_signed_by_other_issuer(issuer: IssuerUnderTest, *tokens: str | None):
    """None of ``tokens`` (JWTs ``issuer`` signed) verifies against the other issuer's keys."""
    meta = requests.get(issuer.other.url("/.well-known/openid-configuration"), timeout=HTTP_TIMEOUT_S).json()
    other_keys = KeySet.import_key_set(requests.get(meta["jwks_uri"], timeout=HTTP_TIMEOUT_S).json())
    assert other_keys.keys, meta["jwks_uri"]
    for token in filter(None, tokens):
        # The other issuer's keys are its own: no kid of this issuer's is among them, and
        # no key of theirs verifies the signature.
        head = token.split(".")[0]
        kid = json.loads(base64.urlsafe_b64decode(head + "=" * (-len(head) % 4)))["kid"]
        assert kid not in {k.kid for k in other_keys.keys}, kid
        for key in other_keys.keys:
            if key.key_type == "RSA":
                with pytest.raises((JoseError, ValueError)):
                    jwt.decode(token, key, algorithms=["RS256"])


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    log_path = _SERVER_LOG.get("path")
    if report.failed and log_path is not None and log_path.exists():
        report.sections.append(
            ("authrim server log (tail)", _log_tail(log_path, max_chars=8000))
        )
    if report.failed:
        for name, extra in _EXTRA_LOGS:
            if extra.exists():
                report.sections.append(
                    (f"{name} server log (tail)", _log_tail(extra, max_chars=8000)))


# ---------------------------------------------------------------------------------------------
# The browser programs (tests/e2e/browser/*.mjs, Playwright driving Chromium).

CHROMIUM = os.environ.get("AUTHRIM_CHROMIUM", "/usr/bin/chromium")
BROWSER_PROGRAMS = Path(__file__).resolve().parent / "browser"


def run_browser_program(program: Path, env: dict, tmp_path: Path, artifacts: Path, *, timeout: float,
                        stale: Iterable[Path] = (), failure_prefix: str = "",
                        explain: Callable[[], str] = lambda: "") -> dict:
    """Run the node ``program`` with ``env`` (and CHROMIUM, ARTIFACTS_DIR) added to this
    process's environment, and return the JSON of the last line it printed (all it printed is
    kept in ``tmp_path/seen.json``). The program saves its screenshots (and, on a failure, the
    page as ``failure.*``) in a fresh folder of ``tmp_path``; they are copied to ``artifacts``
    whatever the outcome (``failure.*`` as ``<failure_prefix>failure.*``, so that the scenarios
    sharing a folder keep theirs apart), after the ``stale`` files, an earlier run's that this
    run would leave behind, are removed: the folder shows this run alone. ``explain()`` is added
    to a failed program's report (what the test's own servers saw meanwhile)."""
    shots = tmp_path / "screenshots"
    shots.mkdir()
    env = dict(os.environ, **env, CHROMIUM=CHROMIUM, ARTIFACTS_DIR=str(shots))
    artifacts.mkdir(parents=True, exist_ok=True)
    for old in list(stale):
        old.unlink(missing_ok=True)
    try:
        done = subprocess.run(["node", str(program)], cwd=program.parent, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the browser program ran over {timeout}s:\n{exc.stderr}\n{exc.stdout}")
    finally:
        for f in shots.iterdir():
            shutil.copy2(f, artifacts / (f"{failure_prefix}{f.name}" if f.name.startswith("failure.") else f.name))
    assert done.returncode == 0, f"the browser program failed:\n{done.stderr}\n{done.stdout}{explain()}"
    (tmp_path / "seen.json").write_text(done.stdout)
    return json.loads(done.stdout.strip().splitlines()[-1])


def brief_pages(seen: dict, tmp_path: Path) -> str:
    """A report of what a walk program saw: its pages without their long parts (all of it is in
    ``tmp_path/seen.json``)."""
    brief = {k: v for k, v in seen.items() if k != "pages"}
    brief["pages"] = [{k: v for k, v in p.items() if k not in ("parts", "axe", "text")} for p in seen["pages"]]
    return f"browser saw (all of it in {tmp_path / 'seen.json'}): {json.dumps(brief, indent=1, ensure_ascii=False)}"


RP_REDIRECT_URI = "http://127.0.0.1:9999/cb"


@pytest.fixture
def run_relying_party(authrim_server: AuthrimServer, alice: dict):
    """Run a relying-party program written with another library (openid-client, go-oidc).

    ``run(name, argv, cwd)`` registers a confidential client (client_secret_basic, code and
    refresh grants), runs ``argv`` with ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI,
    USERNAME and PASSWORD (Alice's) in its environment, fails the test with the program's
    output if it exits non-zero, and returns ``(client_id, what it printed)``: the JSON of
    its last line. ``metadata`` is more client metadata to register, ``extra_env`` more
    variables for the program, ``pass_fds`` descriptors it inherits (``subprocess.run``'s),
    ``issuer`` another issuer than the default (an ``IssuerUnderTest``: the client and Alice
    are that issuer's), ``prepare`` a function called with the client's id once it is
    registered, before the program runs (to give the client roles, say).
    """

    def run(name: str, argv: list[str], cwd: Path, timeout: float = 60, *,
            metadata: dict | None = None, extra_env: dict | None = None,
            pass_fds: tuple = (), issuer: IssuerUnderTest | None = None,
            prepare=None) -> tuple[str, dict]:
        if shutil.which(argv[0]) is None:
            pytest.fail(f"needs {argv[0]} (scripts/test.sh installs or asks for it)", pytrace=False)
        server, user = (issuer.server, issuer.alice) if issuer else (authrim_server, alice)
        client_id = server.unique(name)
        reg = server.create_client(
            client_id=client_id,
            redirect_uris=[RP_REDIRECT_URI],
            token_endpoint_auth_method="client_secret_basic",
            grant_types=["authorization_code", "refresh_token"],
            scope="openid profile email offline_access",
            **(metadata or {}),
        )
        if prepare:
            prepare(client_id)
        env = dict(os.environ, ISSUER=server.issuer, CLIENT_ID=client_id,
                   CLIENT_SECRET=reg["client_secret"], REDIRECT_URI=RP_REDIRECT_URI,
                   USERNAME="alice", PASSWORD=user["password"], **(extra_env or {}))
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, pass_fds=pass_fds)
        assert done.returncode == 0, f"{name} failed:\n{done.stderr}\n{done.stdout}"
        return client_id, json.loads(done.stdout.strip().splitlines()[-1])

    return run


# The modules that take longest (their browser walks: minutes, where the others take seconds),
# longest first, as measured serially. Under pytest-xdist (scripts/test.sh: ``-n 2 --dist
# loadfile``) they are handed out first, so that the short modules fill the end of the run
# instead of one worker finishing a long walk alone. Serially the order is pytest's own. A module
# missing here still runs, among the short ones.
LONGEST_FIRST = [
    "test_console.py", "test_pages.py", "test_signup.py", "test_reset.py", "test_account_email.py",
    "test_account.py", "test_passkeys.py", "test_demo.py", "test_upstream.py", "test_browser.py",
    "test_client_auth.py", "test_theme.py", "test_mcp_ts.py", "test_spa.py",
]


def pytest_collection_modifyitems(config, items):
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    # A stable sort: within a module, and among the unranked modules, pytest's order stays.
    items.sort(key=lambda item: rank.get(item.path.name, len(LONGEST_FIRST)))
