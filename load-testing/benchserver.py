"""What the Python benchmark scripts share to start a server and talk to it (callgrind-paths.py,
tenants-at-scale.py, issuance-cost.py): a free port, the environment of a throwaway server with
the test-only interfaces on, one request, the wait until it answers /healthz, and the stop.
Python 3 stdlib.

Imported from beside the scripts (Python puts a script's folder first on its path).
"""
import http.client, os, socket, subprocess, sys, time

ADMIN = "benchtok"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def server_env(data, port, **extra):
    """The environment of a server on `port` with its data in `data`: the admin token ADMIN,
    the test-only bulk interface, warnings only in its log; `extra` adds AUTHRIM_* settings."""
    return dict(os.environ, AUTHRIM_DATA_DIR=data, AUTHRIM_LISTEN=f"127.0.0.1:{port}",
                AUTHRIM_ISSUER=f"http://127.0.0.1:{port}", AUTHRIM_ADMIN_TOKEN=ADMIN,
                AUTHRIM_ENABLE_TEST_ENDPOINTS="true", AUTHRIM_LOG="warn", **extra)


def call(conn, method, path, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    return r.status, r.read()


def wait_healthy(proc, port, timeout, log_name, poll=0.01, since=None):
    """Wait until the server `proc` answers /healthz with 200 on `port` (each try every `poll`
    seconds); exits the script when it died or `timeout` seconds passed. The seconds since
    `since` (a time.monotonic() taken before the process was started; default: now)."""
    t0 = time.monotonic() if since is None else since
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            if call(c, "GET", "/healthz")[0] == 200:
                c.close()
                return time.monotonic() - t0
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() - t0 > timeout:
            sys.exit(f"server did not start; see {log_name}")
        time.sleep(poll)


def stop(proc, timeout):
    """Stop the server `proc`: SIGTERM, then SIGKILL if it has not exited within `timeout` s."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
