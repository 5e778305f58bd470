"""SHA-256 without importing hashlib up front, whose OpenSSL binding costs ~4 ms at start-up.

CPython builds its own SHA-256 as a built-in module (``_sha2`` from 3.12, ``_sha256`` before):
same algorithm and API, but about 8 times slower than OpenSSL's (58 ms against 7 ms for 7.6 MB
here). ``hexdigest`` therefore starts with the built-in one, which is all a small edit needs, and
switches to hashlib once a process has hashed enough for the import to pay for itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _hashlib import HASH
    from collections.abc import Callable
    from hashlib import sha256
else:
    import sys

    try:  # (a failed import costs ~0.1 ms: try this version's name first)
        if sys.version_info >= (3, 12):
            from _sha2 import sha256
        else:
            from _sha256 import sha256
    except ImportError:  # a CPython built without its own SHA-256
        from hashlib import sha256

__all__ = ["hexdigest", "sha256"]

_BUILTIN_BYTES = 256 * 1024
"""Bytes hashed with the built-in SHA-256 (~2 ms) before hashlib's import (~4 ms) is worth it."""
_hashed = [0]
_fast: list[Callable[[bytes], HASH]] = []


def hexdigest(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex, from whichever implementation is cheaper by now."""
    if _fast:
        digest: str = _fast[0](data).hexdigest()
        return digest
    _hashed[0] += len(data)
    if _hashed[0] > _BUILTIN_BYTES:
        try:
            from hashlib import sha256 as openssl_sha256
        except ImportError:  # pragma: no cover - a Python without hashlib
            openssl_sha256 = sha256
        _fast.append(openssl_sha256)
        return openssl_sha256(data).hexdigest()
    return sha256(data).hexdigest()
