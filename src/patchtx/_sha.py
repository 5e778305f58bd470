"""SHA-256 without importing hashlib, whose OpenSSL binding costs ~5 ms at start-up.

CPython builds its own SHA-256 as a built-in module (``_sha2`` from 3.12, ``_sha256`` before):
same algorithm and API. hashlib is the fallback where a build leaves it out.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha2 import sha256
    except ImportError:
        try:
            from _sha256 import sha256
        except ImportError:  # a CPython built without its own SHA-256
            from hashlib import sha256

__all__ = ["sha256"]
