"""A unified diff's lines are the file's bytes: a diff of a file in any encoding (latin-1,
cp1252, Shift-JIS, bytes that are no encoding) applies byte for byte, as ``git apply`` applies
it; the patch is read with Python's surrogate escape (the CLI reads a patch file so), and so is
the file it updates. Every other format stays UTF-8 only (``not_utf8``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import EncodingPatchError, ParseError

from .gitmade import git_apply, git_diff, needs_git, read, write

pytestmark = needs_git

CASES = {
    "latin-1": ("caf\u00e9\nna\u00efve\nend\n".encode("latin-1"),
                "caf\u00e9\nna\u00efvet\u00e9\nend\n".encode("latin-1")),
    "cp1252": ("\u201cquoted\u201d\nline \u20ac\n".encode("cp1252"),
               "\u201cquoted\u201d\nline \u20ac 2\nmore \u2013\n".encode("cp1252")),
    "shift-jis": ("\u65e5\u672c\u8a9e\n\u8868\n".encode("shift_jis"),
                  "\u65e5\u672c\u8a9e\n\u8868\u793a\n".encode("shift_jis")),
    "invalid utf-8": (b"a\xff\xfe\nb\xc3\n\xed\xa0\x80c\n", b"a\xff\xfe\nB\xc3\xc3\n\xed\xa0\x80c\n"),
}


def _text(patch: bytes) -> str:
    return patch.decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("encoding", CASES)
def test_a_git_diff_of_a_file_in_any_encoding_applies_byte_for_byte(tmp_path: Path, encoding: str) -> None:
    old, new = CASES[encoding]
    patch = git_diff(tmp_path, {"f.txt": old, "keep.txt": old}, {"f.txt": new, "keep.txt": old})
    assert git_apply(tmp_path, {"f.txt": old, "keep.txt": old}, patch) == {"f.txt": new, "keep.txt": old}
    root = tmp_path / "root"
    root.mkdir()
    write(root, {"f.txt": old, "keep.txt": old})
    patchtx.apply_patch(_text(patch), root)
    assert read(root) == {"f.txt": new, "keep.txt": old}
    patchtx.apply_patch(_text(patch), root, reverse=True)  # (-R: back, byte for byte)
    assert read(root) == {"f.txt": old, "keep.txt": old}
    patchtx.apply_patch(_text(patch), root)
    patchtx.history.undo(root)  # (the undo history keeps the bytes)
    assert read(root) == {"f.txt": old, "keep.txt": old}


def test_a_non_utf8_file_added_deleted_and_renamed(tmp_path: Path) -> None:
    latin = "\u00e9t\u00e9\n".encode("latin-1")
    patch = git_diff(tmp_path, {"gone.txt": latin, "old.txt": latin + b"x\n"},
                     {"new.txt": latin + b"\xff\n", "moved.txt": latin + b"x\n"}, "-M")
    root = tmp_path / "root"
    root.mkdir()
    write(root, {"gone.txt": latin, "old.txt": latin + b"x\n"})
    patchtx.apply_patch(_text(patch), root)
    assert read(root) == {"new.txt": latin + b"\xff\n", "moved.txt": latin + b"x\n"}


def test_the_command_line_reads_a_patch_file_as_bytes(tmp_path: Path) -> None:
    old, new = CASES["latin-1"]
    patch = git_diff(tmp_path, {"f.txt": old}, {"f.txt": new})
    (tmp_path / "p.diff").write_bytes(patch)
    root = tmp_path / "root"
    root.mkdir()
    write(root, {"f.txt": old})
    done = subprocess.run([sys.executable, "-m", "patchtx", "apply", str(tmp_path / "p.diff")],
                          cwd=root, capture_output=True)
    assert done.returncode == 0, done.stderr
    assert read(root) == {"f.txt": new}


def test_a_diff_whose_context_is_other_bytes_does_not_apply(tmp_path: Path) -> None:
    old, new = CASES["latin-1"]
    patch = git_diff(tmp_path, {"f.txt": old}, {"f.txt": new})
    root = tmp_path / "root"
    root.mkdir()
    utf8 = old.decode("latin-1").encode("utf-8")  # (the same text, other bytes)
    write(root, {"f.txt": utf8})
    with pytest.raises(patchtx.PatchtxError) as caught:
        patchtx.apply_patch(_text(patch), root)
    assert caught.value.kind == "context_not_found"
    assert read(root) == {"f.txt": utf8}


def test_codex_patches_stay_utf8_only(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(CASES["latin-1"][0])
    with pytest.raises(EncodingPatchError):
        patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n@@\n-end\n+END\n*** End Patch\n",
                            tmp_path)
    escaped = "*** Begin Patch\n*** Update File: f.txt\n@@\n-caf\udce9\n+x\n*** End Patch\n"
    with pytest.raises(ParseError, match="not valid Unicode") as caught:
        patchtx.apply_patch(escaped, tmp_path)
    assert "the byte 0xE9, which is not UTF-8" in caught.value.hint
    assert (tmp_path / "f.txt").read_bytes() == CASES["latin-1"][0]


def test_a_surrogate_that_stands_for_no_byte_is_refused(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\n")
    with pytest.raises(ParseError, match="not valid Unicode") as caught:
        patchtx.apply_patch("--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+\ud800\n", tmp_path)
    assert "stands for no byte" in caught.value.hint
    assert (tmp_path / "f.txt").read_bytes() == b"a\n"
