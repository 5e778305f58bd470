"""The library's types as a Python caller passes them (issue 42 item 8): a patch as bytes is read
as the command line reads a patch file, a Path or a file name is told to pass the text, a dict is
no edit list, and a missing root is named in the library's words."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.cli.commands import main
from patchtx.errors import ArgumentTypeError, FilesystemError, ParseError

DIFF = "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-one\n+two\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\n")
    return tmp_path


def test_a_patch_as_bytes_is_applied(root: Path) -> None:
    patchtx.apply_patch(DIFF.encode(), root, durable=False)
    assert (root / "a.txt").read_text() == "two\n"
    patchtx.apply_patch([DIFF.encode()], root, durable=False, reverse=True)
    assert (root / "a.txt").read_text() == "one\n"
    with patchtx.Transaction(root, durable=False) as tx:
        tx.apply_patch(DIFF.encode())
    assert (root / "a.txt").read_text() == "two\n"


def test_bytes_that_are_not_utf8_are_read_as_the_cli_reads_a_patch_file(root: Path, capsys:
                                                                        pytest.CaptureFixture[str]) -> None:
    """One reading of a patch's bytes on every surface (``api.patch_text``): a unified diff's lines
    are the file's bytes, whatever the encoding (as git apply), so a latin-1 diff applies byte
    for byte; a Codex patch is text, and its byte that is not UTF-8 is refused, named."""
    latin1 = DIFF.replace("two", "tw\u00e9").encode("latin-1")
    patchtx.apply_patch(latin1, root, durable=False)
    assert (root / "a.txt").read_bytes() == b"tw\xe9\n"
    with patchtx.Transaction(root, durable=False) as tx:
        tx.apply_patch(latin1, reverse=True)
    assert (root / "a.txt").read_bytes() == b"one\n"
    (root / "fix.diff").write_bytes(latin1)
    assert main(["apply", "--no-fsync", "-q", "--root", str(root), str(root / "fix.diff")]) == 0
    assert (root / "a.txt").read_bytes() == b"tw\xe9\n"
    codex = "*** Begin Patch\n*** Update File: a.txt\n@@\n-tw\u00e9\n+three\n*** End Patch\n".encode("latin-1")
    with pytest.raises(ParseError) as raised:
        patchtx.apply_patch(codex, root)
    assert "0xE9" in raised.value.hint and raised.value.kind == "parse_error"
    capsys.readouterr()
    (root / "fix.patch").write_bytes(codex)
    assert main(["apply", "--root", str(root), str(root / "fix.patch")]) == 1
    assert "[parse_error]" in capsys.readouterr().err
    assert (root / "a.txt").read_bytes() == b"tw\xe9\n"


def test_a_path_is_told_to_pass_its_text(root: Path) -> None:
    (root / "fix.diff").write_text(DIFF)
    with pytest.raises(TypeError) as raised:
        patchtx.apply_patch(root / "fix.diff", root)
    assert isinstance(raised.value, ArgumentTypeError) and raised.value.kind == "invalid_arguments"
    assert "path.read_text()" in str(raised.value)
    with pytest.raises(TypeError) as raised:
        patchtx.apply_patch([DIFF, root / "fix.diff"], root)
    assert "path.read_text()" in str(raised.value)
    with pytest.raises(ArgumentTypeError) as raised, patchtx.Transaction(root) as tx:
        tx.apply_patch(root / "fix.diff")  # type: ignore[arg-type]
    assert "path.read_text()" in str(raised.value)
    assert (root / "a.txt").read_text() == "one\n"


def test_a_file_name_as_the_patch_is_told_it_looks_like_one(root: Path) -> None:
    (root / "fix.diff").write_text(DIFF)
    with pytest.raises(ParseError) as raised:
        patchtx.apply_patch(str(root / "fix.diff"), root)
    assert "looks like a file name, not a patch" in str(raised.value)
    with pytest.raises(ParseError) as raised:
        patchtx.plan_patch("fix.diff", root)  # relative to the root
    assert "looks like a file name" in str(raised.value) and "Path('fix.diff').read_text()" in str(raised.value)
    with pytest.raises(ParseError) as raised, patchtx.Transaction(root) as tx:
        tx.apply_patch("fix.diff")
    assert "looks like a file name" in str(raised.value)
    with pytest.raises(ParseError) as raised:  # a text that names no file: no such hint
        patchtx.apply_patch("no-such-file.diff", root)
    assert "file name" not in str(raised.value)
    assert (root / "a.txt").read_text() == "one\n"


def test_a_dict_is_no_edit_list(root: Path) -> None:
    edit = {"path": "a.txt", "old_string": "one", "new_string": "two"}
    with pytest.raises(ArgumentTypeError) as raised:
        patchtx.apply_edits(edit, root)  # type: ignore[arg-type]
    assert raised.value.kind == "invalid_arguments" and "not an object (a dict)" in str(raised.value)
    with pytest.raises(ArgumentTypeError), patchtx.Transaction(root) as tx:
        tx.apply_edits(edit)  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "one\n"


def test_a_missing_root_is_named_in_the_library_s_words(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "gone"
    for call in (lambda: patchtx.apply_patch(DIFF, missing), lambda: patchtx.Transaction(missing)):
        with pytest.raises(FilesystemError) as raised:
            call()
        assert "the `root` argument" in str(raised.value) and "--root" not in str(raised.value)
    (tmp_path / "fix.diff").write_text(DIFF)
    assert main(["apply", "--root", str(missing), str(tmp_path / "fix.diff")]) == 1
    err = capsys.readouterr().err
    assert "Pass an existing directory with --root." in err and "`root` argument" not in err
