"""git's binary patches (``GIT binary patch``) as ``git diff --binary`` writes them: literal and
delta hunks applied byte for byte, both ways (``-R`` takes the reverse hunk), checked against the
index line's blob ids before anything is written, kept byte for byte in the undo history, and
shown again as a binary patch ``git apply`` takes."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError
from patchtx.formats.gitbinary import apply_delta, binary_diff, blob_id
from patchtx.render import diff_texts

from .gitmade import git_apply, git_diff, needs_git, read, write

pytestmark = needs_git


def _bytes(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)


BIG = _bytes(5000, 1)
BEFORE = {"delta.bin": BIG, "literal.bin": b"\0\1\2" * 10, "gone.bin": b"old\0bytes",
          "text.txt": b"one\ntwo\n"}
AFTER = {"delta.bin": BIG[:2000] + b"inserted" + BIG[2100:], "literal.bin": _bytes(300, 2),
         "new.bin": b"\x89PNG\r\n\x1a\n\0" + _bytes(100, 3), "text.txt": b"one\nTWO\n"}


def _text(patch: bytes) -> str:
    return patch.decode("utf-8", "surrogateescape")


@pytest.fixture
def made(tmp_path: Path) -> tuple[Path, bytes]:
    patch = git_diff(tmp_path, BEFORE, AFTER, "--binary")
    assert b"\ndelta " in patch and b"\nliteral " in patch  # (both kinds of hunk)
    assert git_apply(tmp_path, BEFORE, patch) == AFTER
    root = tmp_path / "root"
    root.mkdir()
    write(root, BEFORE)
    return root, patch


def test_literal_and_delta_hunks_apply_both_ways_and_undo(made: tuple[Path, bytes]) -> None:
    root, patch = made
    result = patchtx.apply_patch(_text(patch), root)
    assert read(root) == AFTER
    assert result.summary == "A 1, M 3, D 1, R 0"
    patchtx.apply_patch(_text(patch), root, reverse=True)  # (the reverse hunks)
    assert read(root) == BEFORE
    patchtx.apply_patch(_text(patch), root)
    patchtx.history.undo(root)  # (the journal keeps the binary images)
    assert read(root) == BEFORE
    patchtx.history.redo(root)
    assert read(root) == AFTER


def test_a_patch_sent_again_is_already_applied(made: tuple[Path, bytes]) -> None:
    root, patch = made
    patchtx.apply_patch(_text(patch), root)
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(_text(patch), root)
    assert caught.value.kind == "already_applied"
    assert read(root) == AFTER


def test_a_file_other_than_the_index_lines_blob_is_refused_before_any_write(
        made: tuple[Path, bytes]) -> None:
    root, patch = made
    changed = BIG[:-1] + b"!"
    (root / "delta.bin").write_bytes(changed)
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(_text(patch), root)
    error = caught.value
    assert error.kind == "context_not_found" and error.path == "delta.bin"
    assert blob_id(changed)[:12] in error.message and "Nothing was changed." in error.message
    assert read(root) == {**BEFORE, "delta.bin": changed}


def test_a_deleted_binary_file_must_be_the_blob(made: tuple[Path, bytes]) -> None:
    root, patch = made
    (root / "gone.bin").write_bytes(b"other\0bytes")
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(_text(patch), root)
    assert caught.value.kind == "context_not_found" and caught.value.path == "gone.bin"
    assert (root / "literal.bin").read_bytes() == BEFORE["literal.bin"]


def test_short_ids_and_binary_files_differ_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    write(root, BEFORE)
    short = git_diff(tmp_path, BEFORE, AFTER, "--binary", "--abbrev=7")
    full_ids = git_diff(tmp_path, BEFORE, AFTER, "--binary")
    if short != full_ids:  # (git may write full ids whatever --abbrev says)
        with pytest.raises(PatchtxError) as caught:
            patchtx.apply_patch(_text(short), root)
        assert caught.value.kind == "binary_file" and "full blob ids" in caught.value.message
    shortened = _text(full_ids).replace(blob_id(BIG), blob_id(BIG)[:7])
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(shortened, root)
    assert caught.value.kind == "binary_file" and caught.value.path == "delta.bin"
    bare = git_diff(tmp_path, BEFORE, AFTER)  # (without --binary: no bytes)
    assert b"Binary files " in bare
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(_text(bare), root)
    assert caught.value.kind == "binary_file" and "--binary" in caught.value.hint
    assert read(root) == BEFORE


def test_a_corrupt_hunk_is_a_parse_error(made: tuple[Path, bytes]) -> None:
    root, patch = made
    lines = _text(patch).split("\n")
    at = lines.index(next(line for line in lines if line.startswith("literal "))) + 1
    lines[at] = lines[at][:-3] + "~~~"  # (another deflate stream: it no longer inflates)
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch("\n".join(lines), root)
    assert caught.value.kind == "parse_error" and "binary patch" in caught.value.message
    assert read(root) == BEFORE


def test_a_renamed_binary_file_and_a_copy(tmp_path: Path) -> None:
    before = {"a.bin": BIG}
    after = {"b.bin": BIG[:4000] + b"x" + BIG[4001:], "c.bin": BIG}
    patch = git_diff(tmp_path, before, after, "--binary", "-M", "-C", "--find-copies-harder")
    assert git_apply(tmp_path, before, patch) == after
    root = tmp_path / "root"
    root.mkdir()
    write(root, before)
    patchtx.apply_patch(_text(patch), root)
    assert read(root) == after


def test_the_diff_shown_is_a_binary_patch_git_applies(made: tuple[Path, bytes], tmp_path: Path) -> None:
    root, patch = made
    shown = "".join(diff_texts(patchtx.plan_patch(_text(patch), root)))
    assert "GIT binary patch" in shown
    assert git_apply(tmp_path, BEFORE, shown.encode("utf-8", "surrogateescape")) == AFTER


def test_the_rendered_hunks_read_back() -> None:
    data = os.urandom(200)
    text = binary_diff(None, data)
    assert text.startswith(f"index {'0' * 40}..{blob_id(data)}\nGIT binary patch\nliteral 200\n")


def test_git_delta_copy_and_insert() -> None:
    base = bytes(range(256)) * 300  # (76,800 bytes: a copy of 0x10000 is spelled with size 0)
    # header: base size, result size (varints); copy 0x10000 from 0 (size bytes all zero: opcode
    # 0x80 with no offset or size byte); insert b"xy"
    size = len(base)
    varint = bytes([size & 0x7F | 0x80, size >> 7 & 0x7F | 0x80, size >> 14])
    result = 0x10002
    delta = varint + bytes([result & 0x7F | 0x80, result >> 7 & 0x7F | 0x80, result >> 14]) + b"\x80" + b"\x02xy"
    assert apply_delta(base, delta) == base[:0x10000] + b"xy"
    with pytest.raises(ValueError):
        apply_delta(base[:-1], delta)


def test_a_crash_at_every_call_leaves_the_binary_files_as_before_or_after(tmp_path: Path) -> None:
    """A binary patch (and a latin-1 text diff beside it) goes through the same crash-safe commit:
    a crash at any filesystem call, then recovery, leaves every byte as before or as after."""
    from patchtx.api import plan_patch

    from ..txn.helpers import crash_at_every_call

    before_tree = {**BEFORE, "latin.txt": "caf\u00e9\n".encode("latin-1")}
    after_tree = {**AFTER, "latin.txt": "caf\u00e9s\n".encode("latin-1")}
    patch = _text(git_diff(tmp_path, before_tree, after_tree, "--binary"))

    def fresh(root: Path):  # type: ignore[no-untyped-def]
        root.mkdir()
        write(root, before_tree)
        return plan_patch(patch, root)

    _before, after = crash_at_every_call(fresh, tmp_path)
    assert read(tmp_path / "reference") == after_tree


def test_stat_and_numstat_are_git_applys(made: tuple[Path, bytes], tmp_path: Path) -> None:
    import subprocess

    from patchtx.render import diffstat, numstat

    root, patch = made
    plan = patchtx.plan_patch(_text(patch), root)
    (tmp_path / "p.diff").write_bytes(patch)
    for option, ours in (("--stat", diffstat(plan)), ("--numstat", numstat(plan))):
        theirs = subprocess.run(["git", "apply", option, str(tmp_path / "p.diff")], cwd=root,
                                capture_output=True, check=True).stdout.decode()
        assert ours == theirs
    assert " |  Bin" in diffstat(plan) and "-\t-\tdelta.bin\n" in numstat(plan)
