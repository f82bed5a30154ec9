"""Encrypted ID tokens and userinfo answers (OpenID Connect Core 10.2, Dynamic Registration
2) decrypted by a library nobody here wrote: joserfc holds the client's private key, the
client registers its public half (``use: enc``) with ``id_token_encrypted_response_alg`` /
``_enc`` and ``userinfo_encrypted_response_alg`` / ``_enc``, runs the code flow with Authlib,
and then:

- the ID token is a JWE (five parts) that joserfc decrypts, whose header names the client's
  key and says ``cty: JWT``, and whose plaintext is a JWS that Authlib verifies against the
  server's JWKS like any ID token (signature, iss, aud, nonce, at_hash);
- the userinfo answer is ``application/jwt``, a JWE around a JWS signed with the client's
  ``userinfo_signed_response_alg``;
- a key other than the client's does not decrypt either.

One case per key management algorithm, the content encryptions spread across them (and an
``alg`` registered alone, which gets the default ``enc``, A128CBC-HS256).
"""

from __future__ import annotations

import pytest
from joserfc import jwe, jwt
from joserfc.errors import JoseError
from joserfc.jwk import ECKey, KeySet, OKPKey, RSAKey

from conftest import ALICE_CLAIMS, HTTP_TIMEOUT_S
from test_authlib import REDIRECT_URI, describe, run_code_flow, verify_id_token

DEFAULT_ENC = "A128CBC-HS256"

CASES = [
    ("RSA", "RSA-OAEP-256", "A128GCM"),
    ("RSA", "RSA-OAEP", None),
    ("P-256", "ECDH-ES", "A256GCM"),
    ("P-384", "ECDH-ES+A128KW", "A128CBC-HS256"),
    ("X25519", "ECDH-ES+A256KW", "A256CBC-HS512"),
]


def generate(kind: str):
    if kind == "RSA":
        return RSAKey.generate_key(2048)
    if kind == "X25519":
        return OKPKey.generate_key("X25519")
    return ECKey.generate_key(kind)


@pytest.mark.parametrize("kind,alg,enc", CASES)
def test_encrypted_id_token_and_userinfo_decrypt_with_joserfc(authrim_server, discovery, jwks,
                                                             alice, kind, alg, enc):
    client_id = authrim_server.unique(f"jwe-{alg.lower()}")
    key = generate(kind)
    kid = f"{client_id}-enc"
    public = {**key.as_dict(private=False), "use": "enc", "kid": kid}
    metadata = dict(
        client_id=client_id,
        redirect_uris=[REDIRECT_URI],
        token_endpoint_auth_method="client_secret_basic",
        grant_types=["authorization_code"],
        scope="openid email",
        jwks={"keys": [public]},
        id_token_encrypted_response_alg=alg,
        userinfo_encrypted_response_alg=alg,
        userinfo_signed_response_alg="RS256",
    )
    if enc:
        metadata["id_token_encrypted_response_enc"] = enc
        metadata["userinfo_encrypted_response_enc"] = enc
    reg = authrim_server.create_client(**metadata)
    expected_enc = enc or DEFAULT_ENC
    assert reg["id_token_encrypted_response_enc"] == expected_enc, reg
    assert alg in discovery["id_token_encryption_alg_values_supported"], discovery
    assert expected_enc in discovery["userinfo_encryption_enc_values_supported"], discovery

    flow = run_code_flow(authrim_server, discovery, alice, client_id, reg["client_secret"],
                         "client_secret_basic", "openid email")
    encrypted = flow.token["id_token"]
    assert encrypted.count(".") == 4, f"not a compact JWE: {encrypted[:80]}"
    allowed = [alg, expected_enc]
    obj = jwe.decrypt_compact(encrypted, key, algorithms=allowed)
    header = obj.protected
    assert (header["alg"], header["enc"], header["kid"], header["cty"]) == (alg, expected_enc, kid, "JWT"), header
    claims = verify_id_token(obj.plaintext.decode(), jwks, discovery["issuer"], client_id,
                             flow.nonce, flow.token["access_token"])
    assert claims["sub"] == alice["id"], dict(claims)

    # Only the client's key opens it.
    with pytest.raises(JoseError):
        jwe.decrypt_compact(encrypted, generate(kind), algorithms=allowed)

    resp = flow.client.get(discovery["userinfo_endpoint"], timeout=HTTP_TIMEOUT_S)
    assert resp.status_code == 200, describe(resp)
    assert resp.headers.get("Content-Type") == "application/jwt", describe(resp)
    inner = jwe.decrypt_compact(resp.text, key, algorithms=allowed)
    assert inner.protected["cty"] == "JWT", inner.protected
    signed = jwt.decode(inner.plaintext.decode(), KeySet.import_key_set(jwks), algorithms=["RS256"])
    info = signed.claims
    assert (info["sub"], info["aud"], info["iss"]) == (claims["sub"], client_id, discovery["issuer"]), info
    assert info["email"] == ALICE_CLAIMS["email"], info
