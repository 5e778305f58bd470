"""The differential tests never skip themselves into green.

- The Codex binary is found (``PATCHTX_CODEX_APPLY_PATCH`` or the cache folder): they run.
- ``PATCHTX_NO_CODEX=1``: every test of this folder is deselected, explicitly (pytest counts them
  as deselected and the header says why).
- ``PATCHTX_CODEX_INSTALLING=<folder>`` (set by scripts/test.sh, which installs the reference in
  the background while the other tests run; they run first, these last): each test waits for the
  install (codex_binary.find_codex_apply_patch). If it failed (no npm, no network), each test is
  skipped saying why, which the summary shows; under ``CI=true`` each fails instead.
- Otherwise collecting them is a usage error that says how to install the binary.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from .codex_binary import (
    ENV_DISABLE,
    ENV_INSTALLING,
    INSTALL_SCRIPT,
    CodexNotFound,
    InstallFailed,
    find_codex_apply_patch,
    install_done,
)

HERE = Path(__file__).resolve().parent


def _disabled() -> bool:
    return os.environ.get(ENV_DISABLE) == "1"


def _ours(item: pytest.Item) -> bool:
    return HERE in Path(str(item.path)).resolve().parents


def pytest_report_header(config: pytest.Config) -> str:
    if _disabled():
        return f"differential tests vs Codex: deselected ({ENV_DISABLE}=1)"
    if not install_done():
        return f"differential tests vs Codex: {INSTALL_SCRIPT} is installing it; they wait for it, last"
    try:
        return f"differential tests vs Codex: {find_codex_apply_patch()}"
    except CodexNotFound as exc:
        return f"differential tests vs Codex: NOT FOUND ({str(exc)[:200]})"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    ours = [item for item in items if _ours(item)]
    if not ours:
        return
    if _disabled():
        config.hook.pytest_deselected(items=ours)
        items[:] = [item for item in items if not _ours(item)]
        return
    if os.environ.get(ENV_INSTALLING):
        return  # (each test waits for the install: the _reference fixture)
    try:
        find_codex_apply_patch()
    except CodexNotFound as exc:
        raise pytest.UsageError(f"tests/differential: {exc}") from None


@pytest.fixture(autouse=True, scope="session")
def _reference() -> None:
    """The reference, installed (waiting for scripts/test.sh's install if it is still going)."""
    try:
        find_codex_apply_patch()
    except InstallFailed as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"the Codex reference could not be installed: {exc}", pytrace=False)
        pytest.skip(f"the Codex reference could not be installed: {exc}")
