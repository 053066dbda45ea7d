"""A single admin password (scrypt hash in config) and API tokens; sessions are in app/web/sessions.py."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os


def hash_password(password: str, n: int = 2**14, r: int = 8, p: int = 1) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=n, r=r, p=p, dklen=32)
    b64 = base64.b64encode
    return f"scrypt${n}${r}${p}${b64(salt).decode()}${b64(digest).decode()}"


def verify_password(password: str, encoded: str) -> bool:
    try:
        scheme, n, r, p, salt, digest = encoded.split("$")
        if scheme != "scrypt":
            return False
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p),
                             dklen=len(base64.b64decode(digest)))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(digest))


def is_loopback(listen: str) -> bool:
    return listen in ("127.0.0.1", "::1", "localhost") or listen.startswith("127.")


def make_token() -> tuple[str, str]:
    """A random API token and the hash to put in the config."""
    token = base64.urlsafe_b64encode(os.urandom(24)).decode().rstrip("=")
    return token, token_hash(token)


def token_hash(token: str) -> str:
    # A long random token needs no slow hash: sha256 keeps API calls fast.
    return "sha256$" + hashlib.sha256(token.encode()).hexdigest()


def check_token(header: str | None, expected_hash: str | None) -> bool:
    if not header or not expected_hash or not header.startswith("Bearer "):
        return False
    return hmac.compare_digest(token_hash(header[7:].strip()), expected_hash)
