"""The differential tests never skip themselves into green.

- The Codex binary is found (``PATCHTX_CODEX_APPLY_PATCH`` or the cache folder): they run.
- ``PATCHTX_NO_CODEX=1``: every test of this folder is deselected, explicitly (pytest counts them
  as deselected and the header says why).
- ``PATCHTX_CODEX_UNAVAILABLE=<why>`` (set by scripts/test.sh when installing the reference failed
  outside CI: no npm, no network): every test of this folder is skipped with that reason, which the
  summary shows.
- Otherwise collecting them is a usage error that says how to install the binary.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .codex_binary import ENV_DISABLE, ENV_UNAVAILABLE, CodexNotFound, find_codex_apply_patch

HERE = Path(__file__).resolve().parent


def _disabled() -> bool:
    return os.environ.get(ENV_DISABLE) == "1"


def _ours(item: pytest.Item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_report_header(config: pytest.Config) -> str:
    if _disabled():
        return f"differential tests vs Codex: deselected ({ENV_DISABLE}=1)"
    try:
        return f"differential tests vs Codex: {find_codex_apply_patch()}"
    except CodexNotFound:
        why = os.environ.get(ENV_UNAVAILABLE)
        return "differential tests vs Codex: " + (f"skipped, {why}" if why else "binary NOT FOUND")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if _ours(item)]
    if not ours:
        return
    if _disabled():
        config.hook.pytest_deselected(items=ours)
        items[:] = [item for item in items if not _ours(item)]
        return
    try:
        find_codex_apply_patch()
    except CodexNotFound as exc:
        why = os.environ.get(ENV_UNAVAILABLE)
        if not why:
            raise pytest.UsageError(f"tests/differential: {exc}") from None
        skip = pytest.mark.skip(reason=f"the Codex reference could not be installed: {why}")
        for item in ours:
            item.add_marker(skip)
