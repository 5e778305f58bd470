"""Issue 37, item 6: a patch sent twice. A hunk whose new side already stands where its old side
is found, overlapping it, is already applied (docs/format.md, "A patch sent again"): an insertion
written as a replacement (``-    return y`` / ``+    log(y)`` / ``+    return y``) finds its old
line again once applied, and was applied again on every send, ``--skip-applied`` or not."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError

FILE = b"def f(x):\n    y = x\n    return y\n"
ONCE = b"def f(x):\n    y = x\n    log(y)\n    return y\n"
BODY = "-    return y\n+    log(y)\n+    return y\n"
SHAPES = [pytest.param(header, id=name) for name, header in
          (("anchor", "@@ def f(x):\n"), ("bare", "@@\n"), ("no-header", ""))]


def patch(header: str) -> str:
    return f"*** Begin Patch\n*** Update File: a.py\n{header}{BODY}*** End Patch\n"


def apply(root: Path, text: str, **options: object) -> patchtx.Result | PatchtxError:
    try:
        return patchtx.apply_patch(text, root, durable=False, **options)
    except PatchtxError as error:
        return error


@pytest.mark.parametrize("header", SHAPES)
def test_an_insertion_written_as_a_replacement_sent_again_is_already_applied(header: str, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(FILE)
    first = apply(tmp_path, patch(header))
    assert not isinstance(first, PatchtxError), first.message
    assert (tmp_path / "a.py").read_bytes() == ONCE
    again = apply(tmp_path, patch(header))
    assert isinstance(again, PatchtxError) and again.kind == "already_applied", again
    skipped = apply(tmp_path, patch(header), skip_applied=True)
    assert not isinstance(skipped, PatchtxError) and not skipped.plan.targets, skipped
    assert (tmp_path / "a.py").read_bytes() == ONCE


@pytest.mark.parametrize("header", SHAPES)
def test_the_command_line_with_skip_applied_changes_nothing_the_second_time(header: str, tmp_path: Path) -> None:
    (tmp_path / "a.py").write_bytes(FILE)
    (tmp_path / "fix.patch").write_text(patch(header))
    env = {**os.environ, "PYTHONPATH": str(Path(patchtx.__file__).parents[1])}
    for _ in range(2):
        done = subprocess.run([sys.executable, "-m", "patchtx", "apply", "--skip-applied", "fix.patch"],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert (tmp_path / "a.py").read_bytes() == ONCE
    assert done.stdout.startswith("Applied: A 0, M 0, D 0, R 0"), done.stdout


def test_the_trade_off_a_first_application_whose_new_side_stands_already(tmp_path: Path) -> None:
    # The price (docs/format.md, "A patch sent again"): a file that already holds the new side
    # over the old one is taken for the patch's work, even when it was not.
    (tmp_path / "a.py").write_bytes(ONCE)
    outcome = apply(tmp_path, patch("@@\n"))
    assert isinstance(outcome, PatchtxError) and outcome.kind == "already_applied", outcome
    assert (tmp_path / "a.py").read_bytes() == ONCE


def test_a_replacement_whose_new_side_stands_elsewhere_still_applies(tmp_path: Path) -> None:
    # Not overlapping the old line: another function's 'log(y)' / 'return y' says nothing.
    before = b"def g(y):\n    log(y)\n    return y\n\n\ndef f(x):\n    y = x\n    return y\n"
    (tmp_path / "a.py").write_bytes(before)
    result = apply(tmp_path, patch("@@ def f(x):\n"))
    assert not isinstance(result, PatchtxError), result.message
    assert (tmp_path / "a.py").read_bytes() == before.replace(b"y = x\n", b"y = x\n    log(y)\n")


# -- a file edited by several Update sections in turn ---------------------------------------------
SEVEN = b"a\nb\nc\nd\ne\nf\ng\n"
IN_TURN = {
    # The second section edits what the first wrote: sent again, the first section's old lines
    # are gone and its new ones changed, so asked alone it missed (context_not_found).
    "edits-what-the-first-wrote": ("@@\n a\n-b\n+B\n c\n", "@@\n a\n-B\n+BB\n c\n"),
    "keeps-what-the-first-wrote": ("@@\n a\n-b\n+B\n c\n", "@@\n B\n-c\n+C\n d\n"),
    "inserts-after-an-insertion": ("@@\n a\n+x\n b\n", "@@\n x\n+y\n b\n"),
}


def sections(first: str, second: str) -> str:
    return (f"*** Begin Patch\n*** Update File: a.txt\n{first}*** Update File: a.txt\n{second}"
            "*** End Patch\n")


@pytest.mark.parametrize("name", IN_TURN)
def test_update_sections_of_one_file_in_turn_sent_again_are_already_applied(name: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(SEVEN)
    text = sections(*IN_TURN[name])
    first = apply(tmp_path, text)
    assert not isinstance(first, PatchtxError), first.message
    once = (tmp_path / "a.txt").read_bytes()
    again = apply(tmp_path, text)
    assert isinstance(again, PatchtxError) and again.kind == "already_applied", again
    skipped = apply(tmp_path, text, skip_applied=True)
    assert not isinstance(skipped, PatchtxError), skipped.message
    assert (tmp_path / "a.txt").read_bytes() == once


def test_update_sections_in_turn_whose_first_misses_for_another_reason_still_miss(tmp_path: Path) -> None:
    # The file was never edited so: undone from the last section, the first does not undo.
    (tmp_path / "a.txt").write_bytes(SEVEN.replace(b"b\n", b"q\n"))
    outcome = apply(tmp_path, sections(*IN_TURN["edits-what-the-first-wrote"]))
    assert isinstance(outcome, PatchtxError) and outcome.kind == "context_not_found", outcome
    assert (tmp_path / "a.txt").read_bytes() == SEVEN.replace(b"b\n", b"q\n")


def test_update_sections_in_turn_half_applied_are_not_already_applied(tmp_path: Path) -> None:
    # Only the first section applied (the file holds B, not BB): the first misses, and the
    # sections do not undo together; the miss stands.
    (tmp_path / "a.txt").write_bytes(SEVEN.replace(b"b\n", b"B\n"))
    outcome = apply(tmp_path, sections(*IN_TURN["edits-what-the-first-wrote"]))
    assert isinstance(outcome, PatchtxError) and outcome.kind != "already_applied", outcome
    assert (tmp_path / "a.txt").read_bytes() == SEVEN.replace(b"b\n", b"B\n")
