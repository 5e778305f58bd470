"""Untouched bytes stay untouched, on real files through a real commit: endings, BOM, final
newline, mode bits, owner; files that are not UTF-8 text are refused by name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import BinaryFileError, EncodingPatchError


def update(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch"


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (b"one\r\ntwo\r\nthree\r\n", b"one\r\nTWO\r\nthree\r\n"),
        # A replaced line is an added line: it takes the dominant ending (CRLF here), as in Codex.
        (b"one\r\ntwo\rthree\nfour\r\n", b"one\r\nTWO\r\nthree\nfour\r\n"),
        (b"one\rtwo\rthree\r", b"one\rTWO\rthree\r"),
        (b"\xef\xbb\xbfone\ntwo\n", b"\xef\xbb\xbfone\nTWO\n"),
        (b"one\ntwo", b"one\nTWO"),
        (b"one\r\ntwo", b"one\r\nTWO"),
    ],
    ids=["crlf", "mixed", "lone-cr", "bom", "no-final-newline", "crlf-no-final-newline"],
)
def test_only_the_changed_line_changes(tmp_path: Path, before: bytes, after: bytes) -> None:
    (tmp_path / "f.txt").write_bytes(before)
    patchtx.apply_patch(update("f.txt", "two", "TWO"), tmp_path)
    assert (tmp_path / "f.txt").read_bytes() == after


def test_added_lines_take_the_dominant_ending(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"a\r\nb\r\nc\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n@@\n a\n+new\n b\n*** End Patch", tmp_path)
    assert (tmp_path / "f.txt").read_bytes() == b"a\r\nnew\r\nb\r\nc\n"


def test_executable_bit_survives_update_and_move(tmp_path: Path) -> None:
    script = tmp_path / "run.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    os.chmod(script, 0o750)
    patchtx.apply_patch(update("run.sh", "echo hi", "echo hello"), tmp_path)
    assert script.stat().st_mode & 0o777 == 0o750
    patchtx.apply_patch("*** Begin Patch\n*** Update File: run.sh\n*** Move to: bin/run.sh\n@@\n #!/bin/sh\n"
                        "*** End Patch", tmp_path)
    moved = tmp_path / "bin/run.sh"
    assert moved.stat().st_mode & 0o777 == 0o750
    assert moved.read_text() == "#!/bin/sh\necho hello\n" and not script.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_survives_update_when_run_as_root(tmp_path: Path) -> None:
    target = tmp_path / "owned.txt"
    target.write_text("two\n")
    os.chown(target, 4321, 4322)
    patchtx.apply_patch(update("owned.txt", "two", "TWO"), tmp_path)
    assert (target.stat().st_uid, target.stat().st_gid) == (4321, 4322)
    assert target.read_text() == "TWO\n"


def test_latin1_file_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "latin.txt").write_bytes("caf\xe9\ntwo\n".encode("latin-1"))
    with pytest.raises(EncodingPatchError) as caught:
        patchtx.apply_patch(update("latin.txt", "two", "TWO"), tmp_path)
    assert "latin.txt" in caught.value.message and "not valid UTF-8 (line 1)" in caught.value.message
    assert (tmp_path / "latin.txt").read_bytes() == "caf\xe9\ntwo\n".encode("latin-1")


def test_file_with_nul_bytes_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"two\n\x00\x01\x02")
    with pytest.raises(BinaryFileError) as caught:
        patchtx.apply_patch(update("blob.bin", "two", "TWO"), tmp_path)
    assert "blob.bin" in caught.value.message and "binary" in caught.value.message
    assert (tmp_path / "blob.bin").read_bytes() == b"two\n\x00\x01\x02"
