"""Line endings: the dominant ending, lines encoded back to bytes, the final newline a rewrite
moves, and patch lines split with their carriage returns."""

from __future__ import annotations

import itertools
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from patchtx.place.textfile import TextFile

from ..examples import examples

ENDINGS = st.sampled_from(["\n", "\r\n", "\r"])


@given(st.lists(st.tuples(st.text(alphabet="ab \t", max_size=4), ENDINGS), max_size=12),
       st.sampled_from(["", "\n", "\r\n", "\r"]))
def test_dominant_ending_and_encode_agree_with_their_definitions(
        lines: list[tuple[str, str]], last: str) -> None:
    texts = [t for t, _ in lines] + (["end"] if last == "" else [])
    endings = [e for _, e in lines] + ([""] if last == "" else [])
    doc = TextFile(texts, endings)
    # Definition: the most common ending, ties to the one seen first, LF when there is none.
    seen = [e for e in endings if e]
    expected = max(seen, key=lambda e: (seen.count(e), -seen.index(e))) if seen else "\n"
    assert doc.dominant_ending == expected
    assert doc.encode() == "".join(t + e for t, e in zip(texts, endings, strict=True)).encode()


def test_encode_refuses_mismatched_lists() -> None:
    with pytest.raises(ValueError):
        TextFile(["a", "b"], ["\n"]).encode()


def _every_ending_list(max_lines: int) -> list[list[str]]:
    out: list[list[str]] = [[]]
    for size in range(1, max_lines + 1):
        for combo in itertools.product(["\n", "\r\n", "\r"], repeat=size):
            out.append(list(combo))
            out.append([*combo[:-1], ""])  # the same lines with the last one unterminated
    return out


def test_dominant_ending_shortcut_agrees_on_every_small_file() -> None:
    for endings in _every_ending_list(6):
        seen = [e for e in endings if e]
        expected = max(seen, key=lambda e: (seen.count(e), -seen.index(e))) if seen else "\n"
        assert TextFile(["x"] * len(endings), endings).dominant_ending == expected, endings


@pytest.mark.parametrize("endings", _every_ending_list(3))
def test_rewrite_moves_the_missing_final_newline_as_its_definition_says(endings: list[str]) -> None:
    from patchtx.place.matching import Placement
    from patchtx.place.rewrite import rewrite

    texts = [f"l{i}" for i in range(len(endings))]
    original = TextFile(texts, endings)
    dominant = original.dominant_ending
    for at in range(len(texts) + 1):
        for removed in range(len(texts) - at + 1):
            lines = (*[("-", t) for t in texts[at : at + removed]], ("+", "new"))
            out, _ = rewrite(original, [Placement(0, at, removed, lines)])  # type: ignore[arg-type]
            # Definition: every line keeps its ending, added lines take the dominant one; a line
            # left without one that is no longer last gets the dominant ending; the last line
            # ends as the original's last line did (terminated or not).
            pairs = [(t, e) for t, e in zip(texts, endings, strict=True)]
            pairs[at : at + removed] = [("new", dominant)]
            want = [e or dominant for _, e in pairs]
            if not original.ends_with_newline:
                want[-1] = ""
            assert out.texts == [t for t, _ in pairs]
            assert out.endings == want, (endings, at, removed)


@given(st.text(alphabet="a\r\n", max_size=12))
def test_split_lines_drops_one_carriage_return_before_each_line_feed(text: str) -> None:
    from patchtx.formats.codex import split_lines

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert split_lines(text) == [line[:-1] if line.endswith("\r") else line for line in lines]


@pytest.mark.parametrize("endings", [e for e in _every_ending_list(3) if "\r" not in e])
def test_a_rewrite_reads_back_as_its_lines_a_blank_last_line_included(endings: list[str]) -> None:
    # A file without a final newline whose new last line is blank ends with its line break:
    # without it the blank line would be no line at all (a `+` blank line at the end lost).
    from patchtx.place.matching import Placement
    from patchtx.place.rewrite import rewrite
    from patchtx.place.textfile import decode

    texts = [f"l{i}" for i in range(len(endings))]
    original = TextFile(texts, endings)
    for at in range(len(texts) + 1):
        for removed in range(len(texts) - at + 1):
            for added in ((), ("",), ("new", ""), ("", "new")):
                lines = (*[("-", t) for t in texts[at : at + removed]], *[("+", t) for t in added])
                out, _ = rewrite(original, [Placement(0, at, removed, lines)])  # type: ignore[arg-type]
                assert decode(out.encode(), "f").texts == out.texts, (endings, at, removed, added)
                if out.texts and out.texts[-1]:  # (the state is kept whenever it can be)
                    assert out.ends_with_newline == original.ends_with_newline


# -- a unified diff's own line endings (issue 37, item 7) ----------------------------------------
# (file bytes, diff bytes, the bytes written: git apply's and GNU patch's where they apply it)
DIFF_ENDINGS = {
    "lf-to-crlf-line": (b"a\nz\n", b"@@ -1,2 +1,2 @@\n-a\n+b\r\n z\n", b"b\r\nz\n"),
    "crlf-to-lf-line": (b"a\r\nz\r\n", b"@@ -1,2 +1,2 @@\n-a\r\n+a\n z\r\n", b"a\nz\r\n"),
    "crlf-to-lf-file": (b"a\r\nz\r\n", b"@@ -1,2 +1,2 @@\n-a\r\n-z\r\n+a\n+z\n", b"a\nz\n"),
    "lf-to-crlf-file": (b"a\nz\n", b"@@ -1,2 +1,2 @@\n-a\n-z\n+a\r\n+z\r\n", b"a\r\nz\r\n"),
    "added-cr-at-the-end": (b"a\nz", b"@@ -1,2 +1,2 @@\n a\n-z\n\\ No newline at end of file\n"
                            b"+z\r\n\\ No newline at end of file\n", b"a\nz\r"),
    "cr-taken-at-the-end": (b"a\nz\r", b"@@ -1,2 +1,2 @@\n a\n-z\r\n\\ No newline at end of file\n"
                            b"+z\n\\ No newline at end of file\n", b"a\nz"),
    "kept-cr-at-the-end": (b"a\r\nz\r", b"@@ -1,2 +1,2 @@\n-a\r\n+a\n z\r\n"
                           b"\\ No newline at end of file\n", b"a\nz\r"),
    # (an added line with a kept line after it is not the last line, though the hunk ends the file)
    "added-before-the-unterminated-end": (b"a\r\nz", b"@@ -1,2 +1,3 @@\n a\r\n+b\r\n z\n"
                                          b"\\ No newline at end of file\n", b"a\r\nb\r\nz"),
    "changed-before-the-unterminated-end": (b"a\nz", b"@@ -1,2 +1,2 @@\n-a\n+a\r\n z\n"
                                            b"\\ No newline at end of file\n", b"a\r\nz"),
}
# Old lines that do not carry the file's endings (line endings are not compared): the file's kept.
FILE_ENDINGS = {
    "lf-diff-on-crlf-file": (b"a\r\nz\r\n", b"@@ -1,2 +1,2 @@\n-a\n+b\n z\n", b"b\r\nz\r\n"),
    "crlf-diff-on-lf-file": (b"a\nz\n", b"@@ -1,2 +1,2 @@\r\n-a\r\n+b\r\n z\r\n", b"b\nz\n"),
    "one-old-line-differs": (b"a\r\nz\n", b"@@ -1,2 +1,2 @@\n-a\r\n+b\r\n z\r\n", b"b\r\nz\n"),
    "insertion-alone": (b"a\r\nz\r\n", b"@@ -1,0 +2 @@\n+b\n", b"a\r\nb\r\nz\r\n"),
}


def _applied(tmp_path: Path, before: bytes, body: bytes) -> bytes:
    import patchtx

    (tmp_path / "f").write_bytes(before)
    patchtx.apply_patch((b"--- a/f\n+++ b/f\n" + body).decode(), tmp_path, durable=False)
    return (tmp_path / "f").read_bytes()


@pytest.mark.parametrize("name", DIFF_ENDINGS)
def test_a_diff_made_from_the_files_bytes_writes_its_own_line_endings(name: str, tmp_path: Path) -> None:
    before, body, after = DIFF_ENDINGS[name]
    assert _applied(tmp_path, before, body) == after


@pytest.mark.parametrize("name", FILE_ENDINGS)
def test_a_diff_whose_old_lines_have_other_endings_keeps_the_files(name: str, tmp_path: Path) -> None:
    before, body, after = FILE_ENDINGS[name]
    assert _applied(tmp_path, before, body) == after


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("name", DIFF_ENDINGS)
def test_git_apply_writes_the_same_line_endings(name: str, tmp_path: Path) -> None:
    before, body, after = DIFF_ENDINGS[name]
    (tmp_path / "f").write_bytes(before)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "core.autocrlf=false", "apply", "--whitespace=nowarn", "-"],
                   cwd=tmp_path, input=b"--- a/f\n+++ b/f\n" + body, check=True, capture_output=True)
    assert (tmp_path / "f").read_bytes() == after


_LINE = st.tuples(st.sampled_from(["a", "b", "x", "", " y"]), st.sampled_from(["\n", "\r\n"]))


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(before=st.lists(_LINE, min_size=1, max_size=10), after=st.lists(_LINE, max_size=10),
       open_ends=st.tuples(st.booleans(), st.booleans()), context=st.integers(1, 3))
# (Was refused as already_applied: '-a' '-a' '+a\r' on 'a' 'a', its new side's text standing in
# the file without its CRLF.)
@example(before=[("a", "\n"), ("a", "\n")], after=[("a", "\r\n")], open_ends=(False, False), context=1)
def test_a_git_diff_of_any_two_files_with_mixed_endings_writes_the_second(
        tmp_path_factory: pytest.TempPathFactory, before: list[tuple[str, str]],
        after: list[tuple[str, str]], open_ends: tuple[bool, bool], context: int) -> None:
    """The diff git makes between two files (their line endings mixed, either one ending without
    a newline) applies to the first to give the second byte for byte: its kept and removed lines
    carry the file's endings, so its added lines are written with their own. (A CRLF line added
    before a last line without a newline was written with a lone CR, joining the two lines.)"""
    def joined(lines: list[tuple[str, str]], unterminated: bool) -> bytes:
        text = "".join(t + e for t, e in lines)
        return (text[: -len(lines[-1][1])] if unterminated and lines else text).encode()

    old, new = joined(before, open_ends[0]), joined(after, open_ends[1])
    root = tmp_path_factory.mktemp("t")
    (root / "a").mkdir()
    (root / "b").mkdir()
    (root / "a" / "f").write_bytes(old)
    (root / "b" / "f").write_bytes(new)
    diff = subprocess.run(["git", "diff", "--no-index", "--no-prefix", f"-U{context}", "a/f", "b/f"],
                          cwd=root, capture_output=True, check=False).stdout
    if not diff:
        return
    (root / "f").write_bytes(old)
    import patchtx

    patchtx.apply_patch(diff.decode(), root, durable=False)
    assert (root / "f").read_bytes() == new


ENDINGS_ONLY = ["crlf-to-lf-line", "crlf-to-lf-file", "lf-to-crlf-file", "cr-taken-at-the-end",
                "kept-cr-at-the-end", "changed-before-the-unterminated-end"]
"""The cases above whose hunks change line endings alone (their lines' texts stay)."""


@pytest.mark.parametrize("name", ENDINGS_ONLY)
def test_a_diff_that_changes_line_endings_alone_sent_again_is_already_applied(name: str, tmp_path: Path) -> None:
    # Sent again, its lines match the file (endings are not compared) and its old endings are not
    # the file's, so the file's are kept and nothing would change: it was refused as no_change,
    # and with skip_applied a CI re-run failed.
    import patchtx
    from patchtx.errors import PatchtxError

    before, body, after = DIFF_ENDINGS[name]
    assert _applied(tmp_path, before, body) == after
    diff = (b"--- a/f\n+++ b/f\n" + body).decode()
    with pytest.raises(PatchtxError) as again:
        patchtx.apply_patch(diff, tmp_path, durable=False)
    assert again.value.kind == "already_applied", again.value.message
    patchtx.apply_patch(diff, tmp_path, durable=False, skip_applied=True)
    assert (tmp_path / "f").read_bytes() == after
