"""The syntax guard's tests. ``need_grammars`` is how a test that needs the tree-sitter grammars
(the ``syntax`` extra, which the ``test`` extra includes) says so."""

from __future__ import annotations

import importlib.util
import os

import pytest


def need_grammars(*, module: bool = False) -> None:
    """Skip the calling test (``module``: the calling module) when tree-sitter-language-pack is not
    installed, saying so; under ``CI=true`` fail instead, since CI installs it with the test
    extras: a test of the grammars never skips itself into green there."""
    if importlib.util.find_spec("tree_sitter_language_pack") is not None:
        return
    why = "tree-sitter-language-pack (the syntax extra, in the test extras) is not installed"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why}; under CI=true that is a failure, not a skip", pytrace=False)
    pytest.skip(why, allow_module_level=module)
