from __future__ import annotations

from ..txn.conftest import scratch

__all__ = ["scratch"]
