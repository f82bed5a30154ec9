"""Authrim's own encryption keys used by a library nobody here wrote (joserfc): a client
encrypts its signed request object (RFC 9101 section 6.1, a nested JWT) to the key Authrim
publishes in its JWKS with ``use: enc``, and decrypts the encrypted JARM response (JARM
section 2.2: signed, then encrypted to the client's key) before verifying it as any JARM
response. The client registered ``request_object_encryption_alg`` / ``_enc``, so the same
request object sent unencrypted is refused with ``invalid_request_object``.
"""

from __future__ import annotations

import time
from urllib.parse import urlencode

import pytest
import requests
from authlib.common.security import generate_token
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from joserfc import jwe, jwt
from joserfc.jwk import ECKey, RSAKey

from conftest import HTTP_TIMEOUT_S
from test_authlib import REDIRECT_URI, browser_authorize, describe
from test_jarm import jarm_claims, only_response, split

CASES = [
    # (the server key's kty, request object alg, enc; the client's key kind, JARM alg, enc)
    ("EC", "ECDH-ES+A128KW", "A128CBC-HS256", "RSA", "RSA-OAEP-256", "A256GCM"),
    ("RSA", "RSA-OAEP-256", "A256GCM", "P-256", "ECDH-ES", "A128CBC-HS256"),
]


def server_key(jwks: dict, kty: str):
    """The server's published encryption key of this type, as a client finds it."""
    found = [k for k in jwks["keys"] if k.get("use") == "enc" and k["kty"] == kty]
    assert found, jwks
    assert all("d" not in k for k in found), "a private key published"
    return found[0]


@pytest.mark.parametrize("server_kty,ro_alg,ro_enc,client_kind,jarm_alg,jarm_enc", CASES)
def test_encrypted_request_object_and_encrypted_jarm_with_joserfc(authrim_server, discovery, jwks, alice, server_kty,
                                                                 ro_alg, ro_enc, client_kind, jarm_alg, jarm_enc):
    assert ro_alg in discovery["request_object_encryption_alg_values_supported"], discovery
    assert jarm_alg in discovery["authorization_encryption_alg_values_supported"], discovery
    client_id = authrim_server.unique(f"enc-{ro_alg.lower()}")
    signing = ECKey.generate_key("P-256", parameters={"kid": f"{client_id}-sig", "use": "sig"})
    decrypting = RSAKey.generate_key(2048) if client_kind == "RSA" else ECKey.generate_key(client_kind)
    enc_kid = f"{client_id}-enc"
    public = [signing.as_dict(private=False), {**decrypting.as_dict(private=False), "use": "enc", "kid": enc_kid}]
    reg = authrim_server.create_client(
        client_id=client_id, redirect_uris=[REDIRECT_URI], token_endpoint_auth_method="client_secret_basic",
        scope="openid profile", jwks={"keys": public}, request_object_signing_alg="ES256",
        request_object_encryption_alg=ro_alg, request_object_encryption_enc=ro_enc,
        authorization_encrypted_response_alg=jarm_alg, authorization_encrypted_response_enc=jarm_enc)

    verifier = generate_token(48)
    now = int(time.time())
    claims = {"iss": client_id, "aud": discovery["issuer"], "iat": now, "exp": now + 300, "client_id": client_id,
              "response_type": "code", "response_mode": "jwt", "redirect_uri": REDIRECT_URI,
              "scope": "openid profile", "state": "sealed", "nonce": generate_token(16),
              "code_challenge": create_s256_code_challenge(verifier), "code_challenge_method": "S256"}
    signed = jwt.encode({"alg": "ES256", "kid": signing.kid}, claims, signing)
    ours = server_key(jwks, server_kty)
    recipient = ECKey.import_key(ours) if server_kty == "EC" else RSAKey.import_key(ours)
    protected = {"alg": ro_alg, "enc": ro_enc, "cty": "JWT", "kid": ours["kid"]}
    encrypted = jwe.encrypt_compact(protected, signed, recipient, algorithms=[ro_alg, ro_enc])
    assert encrypted.count(".") == 4

    url = f"{discovery['authorization_endpoint']}?{urlencode({'client_id': client_id, 'request': encrypted})}"
    location, _ = browser_authorize(authrim_server, url, alice["username"], alice["password"])
    query, _ = split(location)
    response = only_response(query)
    assert response.count(".") == 4, f"not a JWE: {response[:60]}"
    opened = jwe.decrypt_compact(response, decrypting, algorithms=[jarm_alg, jarm_enc])
    assert opened.protected["kid"] == enc_kid and opened.protected["cty"] == "JWT", opened.protected
    inner = opened.plaintext.decode()
    jarm = jarm_claims(inner, jwks, discovery["issuer"], client_id)
    assert jarm["state"] == "sealed" and jarm["code"], jarm
    token = requests.post(discovery["token_endpoint"], auth=(client_id, reg["client_secret"]), timeout=HTTP_TIMEOUT_S,
                          data={"grant_type": "authorization_code", "code": jarm["code"], "redirect_uri": REDIRECT_URI,
                                "code_verifier": verifier})
    assert token.status_code == 200, describe(token)

    # The same signed object, not encrypted: refused, as an encrypted JARM error.
    plain = {"client_id": client_id, "request": signed, "redirect_uri": REDIRECT_URI, "response_type": "code",
             "response_mode": "jwt", "state": "plain"}
    resp = requests.get(f"{discovery['authorization_endpoint']}?{urlencode(plain)}", allow_redirects=False,
                        timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    query, _ = split(resp.headers["Location"])
    opened = jwe.decrypt_compact(only_response(query), decrypting, algorithms=[jarm_alg, jarm_enc])
    error = jarm_claims(opened.plaintext.decode(), jwks, discovery["issuer"], client_id)
    assert error["error"] == "invalid_request_object" and error["state"] == "plain", error
    # A key of our own is not one of the server's: the JWE cannot be read.
    stranger = ECKey.generate_key("P-256")
    foreign = jwe.encrypt_compact({"alg": "ECDH-ES", "enc": "A128GCM", "cty": "JWT"}, signed, stranger,
                                  algorithms=["ECDH-ES", "A128GCM"])
    resp = requests.get(f"{discovery['authorization_endpoint']}?{urlencode({**plain, 'request': foreign})}",
                        allow_redirects=False, timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 302, describe(resp)
    query, _ = split(resp.headers["Location"])
    opened = jwe.decrypt_compact(only_response(query), decrypting, algorithms=[jarm_alg, jarm_enc])
    error = jarm_claims(opened.plaintext.decode(), jwks, discovery["issuer"], client_id)
    assert error["error"] == "invalid_request_object", error
