"""patchtx: apply Codex-format patches to a tree as one crash-safe transaction.

The public names are loaded on first use, so that ``apply_patch`` (which imports this package)
starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._version import __version__ as __version__

_EXPORTS = {
    "parse": "patchtx.formats.codex",
    "plan_patch": "patchtx.api",
    "apply_patch": "patchtx.api",
    "apply_plan": "patchtx.api",
    "PatchtxError": "patchtx.errors",
    "Patch": "patchtx.model",
    "Plan": "patchtx.model",
    "Result": "patchtx.result",
    "recover": "patchtx.txn",
    "Transaction": "patchtx.transaction",
    "extract_patch": "patchtx.intake.extract",
    "apply_edits": "patchtx.api",
    "TextEditor": "patchtx.agents.editor",
    "edit_file": "patchtx.agents.snippet_tool",
}
# Submodules reachable as attributes without an explicit import (``patchtx.history.undo(...)``).
_SUBMODULES = frozenset({"history"})
__all__ = [
    "Patch",
    "PatchtxError",
    "Plan",
    "Result",
    "TextEditor",
    "Transaction",
    "apply_edits",
    "apply_patch",
    "apply_plan",
    "edit_file",
    "extract_patch",
    "history",
    "parse",
    "plan_patch",
    "recover",
]

if TYPE_CHECKING:
    from typing import Any

    from . import history
    from .agents.editor import TextEditor
    from .agents.snippet_tool import edit_file
    from .api import apply_edits, apply_patch, apply_plan, plan_patch
    from .errors import PatchtxError
    from .formats.codex import parse
    from .intake.extract import extract_patch
    from .model import Patch, Plan
    from .result import Result
    from .transaction import Transaction
    from .txn import recover


def __dir__() -> list[str]:
    """The public names (loaded lazily, so not yet in the module's namespace) for dir() and
    completion, with the module's own attributes."""
    return sorted({*(name for name in globals() if name.startswith("__")), *__all__})


def __getattr__(name: str) -> Any:
    import importlib  # (the lazy loader of the names above: the one late import by design)

    if name in _SUBMODULES:
        return importlib.import_module(f"patchtx.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'patchtx' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
