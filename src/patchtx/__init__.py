"""patchtx: apply Codex-format patches to a tree as one crash-safe transaction."""

from __future__ import annotations

__version__ = "0.1.0"
