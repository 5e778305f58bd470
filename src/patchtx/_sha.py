"""SHA-256 from CPython's built-in module for small inputs, from ``hashlib`` (OpenSSL) for large ones.

Importing ``hashlib`` loads OpenSSL, which costs a small edit more than hashing its few files with
the built-in module (same algorithm, several times slower per byte), while for large inputs
OpenSSL's speed repays the import many times over. So the choice is made by the size of the work
at hand (one blob, or all the blobs a caller is about to hash), and ``hashlib`` is used for
everything once something has loaded it.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _hashlib import HASH
    from collections.abc import Callable
    from hashlib import sha256 as _builtin_sha256
else:
    try:  # the module's name by version: a failed import is not free either
        if sys.version_info >= (3, 12):
            from _sha2 import sha256 as _builtin_sha256
        else:
            from _sha256 import sha256 as _builtin_sha256
    except ImportError:  # a CPython built without its own SHA-256 (as some distributions do)
        from hashlib import sha256 as _builtin_sha256

OPENSSL_FROM_BYTES = 1 << 20
"""From this size on, hashing with OpenSSL saves more than importing hashlib costs (the crossover
that ``benchmarks/sha256_crossover.py`` measures)."""


def sha256_for(size: int) -> Callable[[bytes], HASH]:
    """The SHA-256 constructor to hash ``size`` bytes in all with."""
    if size < OPENSSL_FROM_BYTES and "_hashlib" not in sys.modules:
        return _builtin_sha256
    from hashlib import sha256

    return sha256


def hexdigest(data: bytes) -> str:
    """The SHA-256 of ``data`` in hex."""
    digest: str = sha256_for(len(data))(data).hexdigest()
    return digest


_BLOCK = 64
_INNER_PAD = bytes(x ^ 0x36 for x in range(256))
_OUTER_PAD = bytes(x ^ 0x5C for x in range(256))


def hmac_sha256_hex(key: bytes, message: bytes) -> str:
    """HMAC-SHA256 (RFC 2104) in hex: exactly ``hmac.new(key, message, "sha256").hexdigest()``
    (tests compare them), written out because the ``hmac`` module imports hashlib."""
    new = sha256_for(len(key) + len(message))
    if len(key) > _BLOCK:
        key = new(key).digest()
    key = key.ljust(_BLOCK, b"\0")
    inner = new(key.translate(_INNER_PAD))
    inner.update(message)
    outer = new(key.translate(_OUTER_PAD))
    outer.update(inner.digest())
    digest: str = outer.hexdigest()
    return digest
