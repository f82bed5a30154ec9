"""A tiny path-forwarding reverse proxy, as an operator would put in front of Authrim with the
issuer ``http://localhost:<port>/tenant1``: ``/tenant1/…`` is forwarded to the server's root
with the prefix stripped, the RFC 8414 path-inserted metadata of an issuer under the prefix
(``/.well-known/<name>/tenant1``, or a path tenant's ``/.well-known/<name>/tenant1/t/acme``)
as it is, and anything else is answered 404 and recorded in ``outside`` so that a test can
say which URL left the prefix. Redirects are passed through untouched (no rewriting of
``Location`` or cookie paths: Authrim must get them right itself)."""

from __future__ import annotations

import http.client
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
              "proxy-authorization", "proxy-authenticate"}


class PrefixProxy:
    def __init__(self, upstream_port: int, prefix: str = "/tenant1"):
        self.upstream_port = upstream_port
        self.prefix = prefix
        self.outside: list[str] = []
        self.forwarded: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _target(self) -> str | None:
                path = self.path
                if path == proxy.prefix or path.startswith(proxy.prefix + "/") or path.startswith(proxy.prefix + "?"):
                    rest = path[len(proxy.prefix):]
                    return rest if rest.startswith("/") else "/" + rest
                # RFC 8414's path-inserted metadata of an issuer under the prefix: the
                # deployment's (`/.well-known/<name>/tenant1`) or a tenant's there
                # (`/.well-known/<name>/tenant1/t/acme`).
                if path.startswith("/.well-known/"):
                    inserted = "/" + path.split("?")[0].split("/", 3)[3] if path.count("/") >= 3 else ""
                    if inserted == proxy.prefix or inserted.startswith(proxy.prefix + "/"):
                        return path
                return None

            def _handle(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                target = self._target()
                if target is None:
                    proxy.outside.append(f"{self.command} {self.path}")
                    payload = b"outside the proxied prefix"
                    self.send_response(404)
                    self.send_header("Content-Type", "text/plain")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                proxy.forwarded.append(f"{self.command} {self.path}")
                conn = http.client.HTTPConnection("127.0.0.1", proxy.upstream_port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                conn.request(self.command, target, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = do_OPTIONS = _handle

        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        sock.close()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "PrefixProxy":
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def reserve_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port
