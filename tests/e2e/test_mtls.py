"""Mutual TLS for OAuth (RFC 8705) with a third-party HTTP client (``requests`` with ``cert=``).

Two ways a client certificate reaches Authrim: Authrim terminating TLS itself (``AUTHRIM_TLS_*``
with ``AUTHRIM_MTLS``), and a TLS-terminating proxy forwarding it as URL-encoded PEM in a
header (here the test plays the proxy, from a trusted address, then from an untrusted one).
The certificates are made here with ``cryptography``; the client registers its certificate's
key (``self_signed_tls_client_auth``) and asks for certificate-bound access tokens.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import os
import secrets
import signal
import subprocess
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests
import urllib3
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from conftest import HTTP_TIMEOUT_S, REPO_ROOT, _free_port, _log_tail, _resolve_binary, run_authrim

urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Cert:
    """A self-signed client certificate and its key, written to ``directory``."""

    def __init__(self, directory: Path, name: str):
        self.key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        now = datetime.datetime.now(datetime.timezone.utc)
        self.cert = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self.key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(self.key, hashes.SHA256())
        )
        self.cert_path = directory / f"{name}.crt"
        self.key_path = directory / f"{name}.key"
        self.cert_path.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))
        self.key_path.write_bytes(self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))

    @property
    def pair(self) -> tuple[str, str]:
        return str(self.cert_path), str(self.key_path)

    def thumbprint(self) -> str:
        return b64url(hashlib.sha256(self.cert.public_bytes(serialization.Encoding.DER)).digest())

    def jwks(self) -> dict:
        n = self.key.public_key().public_numbers()
        return {"keys": [{"kty": "EC", "crv": "P-256", "x": b64url(n.x.to_bytes(32, "big")), "y": b64url(n.y.to_bytes(32, "big"))}]}

    def escaped(self) -> str:
        """As nginx's ``$ssl_client_escaped_cert`` sends it."""
        return urllib.parse.quote(self.cert.public_bytes(serialization.Encoding.PEM).decode(), safe="")


def server_cert(directory: Path) -> tuple[Path, Path]:
    """Authrim's own TLS certificate for 127.0.0.1."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "server.crt", directory / "server.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


@contextmanager
def authrim_over_tls(directory: Path):
    """``authrim serve`` terminating TLS with mTLS on (conftest's launcher speaks plain HTTP):
    its base URL, admin token, and its certificate, which the test's requests verify against."""
    cert, key = server_cert(directory)
    port = _free_port()
    base = f"https://127.0.0.1:{port}"
    admin = secrets.token_urlsafe(24)
    (directory / "data").mkdir()
    env = dict(os.environ, AUTHRIM_LISTEN=f"127.0.0.1:{port}", AUTHRIM_ISSUER=base, AUTHRIM_DATA_DIR=str(directory / "data"),
               AUTHRIM_ADMIN_TOKEN=admin, AUTHRIM_TLS_CERT=str(cert), AUTHRIM_TLS_KEY=str(key), AUTHRIM_MTLS="true")
    log_path = directory / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([str(_resolve_binary()), "serve"], cwd=str(REPO_ROOT), env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 20
            while True:
                try:
                    if requests.get(base + "/healthz", verify=str(cert), timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"authrim over TLS did not start:\n{_log_tail(log_path)}", pytrace=False)
                time.sleep(0.1)
            yield base, admin, str(cert)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=15)


def admin_post(base: str, admin: str, path: str, body: dict, **kw) -> dict:
    r = requests.post(base + path, json=body, headers={"Authorization": f"Bearer {admin}"}, timeout=HTTP_TIMEOUT_S, **kw)
    assert r.status_code == 201, r.text
    return r.json()


def bound_client(base: str, admin: str, cert: Cert, **kw) -> str:
    client_id = f"svc-{secrets.token_hex(3)}"
    admin_post(base, admin, "/admin/clients", {
        "client_id": client_id,
        "token_endpoint_auth_method": "self_signed_tls_client_auth",
        "jwks": cert.jwks(),
        "tls_client_certificate_bound_access_tokens": True,
        "grant_types": ["client_credentials"],
        "redirect_uris": [],
    }, **kw)
    return client_id


def introspected_cnf(base: str, admin: str, token: str, **kw) -> dict | None:
    rs = admin_post(base, admin, "/admin/clients", {"client_id": f"rs-{secrets.token_hex(3)}", "grant_types": ["client_credentials"], "redirect_uris": []}, **kw)
    r = requests.post(base + "/introspect", data={"token": token}, auth=(rs["client_id"], rs["client_secret"]), timeout=HTTP_TIMEOUT_S, **kw)
    assert r.status_code == 200, r.text
    return r.json().get("cnf")


def test_bound_token_through_authrims_own_tls(tmp_path):
    mine, other = Cert(tmp_path, "mine"), Cert(tmp_path, "other")
    with authrim_over_tls(tmp_path) as (base, admin, ca):
        client_id = bound_client(base, admin, mine, verify=ca)
        form = {"grant_type": "client_credentials", "client_id": client_id}
        r = requests.post(base + "/token", data=form, cert=mine.pair, verify=ca, timeout=HTTP_TIMEOUT_S)
        assert r.status_code == 200, r.text
        token = r.json()["access_token"]
        assert r.json()["token_type"] == "Bearer"
        assert introspected_cnf(base, admin, token, verify=ca) == {"x5t#S256": mine.thumbprint()}

        # Another certificate, or none, cannot authenticate as the client ...
        for cert in (other.pair, None):
            r = requests.post(base + "/token", data=form, cert=cert, verify=ca, timeout=HTTP_TIMEOUT_S)
            assert (r.status_code, r.json()["error"]) == (401, "invalid_client"), r.text
        # ... nor use its token. With the right certificate the token passes the binding and
        # is refused for what it is (a client's token, without openid): 403, not 401.
        for cert in (other.pair, None):
            r = requests.get(base + "/userinfo", headers={"Authorization": f"Bearer {token}"}, cert=cert, verify=ca, timeout=HTTP_TIMEOUT_S)
            assert (r.status_code, r.json()["error"]) == (401, "invalid_token"), r.text
        r = requests.get(base + "/userinfo", headers={"Authorization": f"Bearer {token}"}, cert=mine.pair, verify=ca, timeout=HTTP_TIMEOUT_S)
        assert (r.status_code, r.json()["error"]) == (403, "insufficient_scope"), r.text

        meta = requests.get(base + "/.well-known/openid-configuration", verify=ca, timeout=HTTP_TIMEOUT_S).json()
        assert "self_signed_tls_client_auth" in meta["token_endpoint_auth_methods_supported"]
        assert meta["tls_client_certificate_bound_access_tokens"] is True


@pytest.mark.parametrize("trusted", [True, False])
def test_bound_token_through_a_proxy_header(tmp_path_factory, tmp_path, trusted):
    mine = Cert(tmp_path, "mine")
    env = {"AUTHRIM_MTLS": "true", "AUTHRIM_MTLS_CLIENT_CERT_HEADER": "x-ssl-client-cert",
           "AUTHRIM_MTLS_TRUSTED_PROXIES": "127.0.0.1" if trusted else "192.0.2.10"}
    with run_authrim(tmp_path_factory, "mtls-proxy", env) as server:
        client_id = bound_client(server.base_url, server.admin_token, mine)
        # The test is the proxy: it terminated the client's TLS and forwards the certificate.
        forwarded = {"x-ssl-client-cert": mine.escaped()}
        form = {"grant_type": "client_credentials", "client_id": client_id}
        r = requests.post(server.url("/token"), data=form, headers=forwarded, timeout=HTTP_TIMEOUT_S)
        if not trusted:
            assert (r.status_code, r.json()["error"]) == (401, "invalid_client"), "the header of an untrusted address is ignored"
            return
        assert r.status_code == 200, r.text
        token = r.json()["access_token"]
        assert introspected_cnf(server.base_url, server.admin_token, token) == {"x5t#S256": mine.thumbprint()}
        r = requests.get(server.url("/userinfo"), headers={"Authorization": f"Bearer {token}"}, timeout=HTTP_TIMEOUT_S)
        assert (r.status_code, r.json()["error"]) == (401, "invalid_token"), "no certificate forwarded"
        r = requests.get(server.url("/userinfo"), headers={"Authorization": f"Bearer {token}", **forwarded}, timeout=HTTP_TIMEOUT_S)
        assert (r.status_code, r.json()["error"]) == (403, "insufficient_scope"), r.text
