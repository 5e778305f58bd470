"""The fast paths taken for speed give the same answers as the plain definitions they replace."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import patchtx
from patchtx.errors import NotARegularFileError, PatchtxError
from patchtx.matching import LineIndex, Locator
from patchtx.model import Chunk, Patch
from patchtx.parser import parse
from patchtx.textfile import TextFile

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


def test_bulk_body_lines_keep_crlf_patches_and_markers() -> None:
    patch = ("*** Begin Patch\r\n*** Update File: a.txt\r\n@@\r\n a\r\n-b\r\n+c\r\n"
             "*** Update File: b.txt\r\n@@ top\r\n x\r\n+y\r\n*** End of File\r\n*** End Patch")
    first, second = parse(patch).hunks
    assert first.chunks[0].lines == ((" ", "a"), ("-", "b"), ("+", "c"))
    assert second.chunks[0].anchors == ("top",) and second.chunks[0].is_end_of_file
    assert second.chunks[0].lines == ((" ", "x"), ("+", "y"))


def test_a_failed_patch_forgets_the_folders_its_adds_implied(tmp_path: Path) -> None:
    with patchtx.Transaction(tmp_path) as tx:
        with pytest.raises(PatchtxError):
            tx.apply_patch("*** Begin Patch\n*** Add File: d/inner.txt\n+x\n"
                           "*** Delete File: missing.txt\n*** End Patch")
        # Nothing of the failed patch is staged, so 'd' may now be a file.
        tx.write_text("d", "a file\n")
    assert (tmp_path / "d").read_text() == "a file\n"


def test_a_staged_file_inside_a_folder_still_blocks_a_file_of_that_name(tmp_path: Path) -> None:
    with patchtx.Transaction(tmp_path) as tx:
        tx.write_text("d/inner.txt", "x\n")
        with pytest.raises(NotARegularFileError, match="inside a folder named"):
            tx.apply_patch("*** Begin Patch\n*** Add File: d\n+y\n*** End Patch")
        tx.delete("d/inner.txt")
        tx.apply_patch("*** Begin Patch\n*** Add File: d\n+y\n*** End Patch")
    assert (tmp_path / "d").read_text() == "y\n"


def test_links_are_resolved_in_every_path_sharing_a_checked_folder(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "real/a.txt").write_text("a\n")
    (tmp_path / "real/sub").mkdir()
    (tmp_path / "real/sub/b.txt").write_text("b\n")
    (tmp_path / "alias").symlink_to("real")
    result = patchtx.apply_patch(
        "*** Begin Patch\n*** Update File: real/a.txt\n@@\n-a\n+A\n"
        "*** Update File: alias/sub/b.txt\n@@\n-b\n+B\n*** End Patch", tmp_path)
    assert [c.path for c in result.plan.changes] == ["real/a.txt", "real/sub/b.txt"]
    assert (tmp_path / "real/sub/b.txt").read_text() == "B\n"


def test_python_strips_exactly_rusts_whitespace_plus_four_separators() -> None:
    from patchtx.normalise import PYTHON_ONLY_WHITESPACE as _PYTHON_ONLY_WHITESPACE
    from patchtx.normalise import WHITESPACE

    python_space = {chr(c) for c in range(0x110000) if chr(c).strip() == ""} - {""}
    assert python_space - set(WHITESPACE) == set(_PYTHON_ONLY_WHITESPACE)
    assert set(WHITESPACE) <= python_space


@pytest.mark.parametrize("separator", ["", "\x1c", "\x1f"])
@given(lines=st.lists(st.text(alphabet=" \t\u3000\x1c\x1d\x1e\x1fab", max_size=6), min_size=1,
                      max_size=8))
def test_fuzzy_keys_trim_rusts_whitespace_only(separator: str, lines: list[str]) -> None:
    from patchtx.matching import LineIndex
    from patchtx.normalise import WHITESPACE

    texts = [*lines, f"z{separator}"]  # with a separator somewhere the slow, exact path is taken
    index = LineIndex(texts)
    assert index.keys(1) == [t.rstrip(WHITESPACE) for t in texts]
    assert index.keys(2) == [t.strip(WHITESPACE) for t in texts]


def _readers(root: Path) -> list[Callable[[str], bytes]]:
    """The two whole-file readers: the planner's Workspace.read and the commit's read_file."""
    from patchtx.txn.fsops import FileSystemOps
    from patchtx.workspace import Workspace

    fs = FileSystemOps()

    def read_file(name: str) -> bytes:
        fd = fs.open_root(str(root))
        try:
            return fs.read_file(fd, name).data
        finally:
            fs.close(fd)

    return [Workspace(root).read, read_file]


@pytest.mark.parametrize("size", [0, 1, 4095, (1 << 16) - 1, 1 << 16, (1 << 16) + 1, 300_000])
def test_whole_file_reads_take_one_read_call_and_return_every_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    real_read = os.read
    calls: list[int] = []

    def counting_read(fd: int, n: int) -> bytes:
        calls.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "read", counting_read)
    for read in _readers(tmp_path):
        calls.clear()
        assert read("f") == data
        assert len(calls) == 1, "a file read at its fstat size needs no read(2) that returns 0"


@pytest.mark.parametrize(("size", "reported"), [
    (100, 99),           # grew by a byte between fstat and read
    (100_000, 10),       # grew past the first read's 64 KiB
    (70_000, 0),         # a size-0 file with content, as /proc reports
    (100, 200),          # shrank
    (0, 5),              # shrank to nothing
])
def test_whole_file_reads_go_on_to_eof_when_fstat_size_is_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: int, reported: int) -> None:
    data = os.urandom(size)
    (tmp_path / "f").write_bytes(data)
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                               st.st_gid, reported, st.st_atime, st.st_mtime, st.st_ctime))

    monkeypatch.setattr(os, "fstat", stale_fstat)
    for read in _readers(tmp_path):
        assert read("f") == data


def _tree_with_links(root: Path) -> list[str]:
    (root / "a.txt").write_text("a\n")
    (root / "dir/sub").mkdir(parents=True)
    (root / "dir/b.txt").write_text("b\n")
    (root / "fifo").mkdir()
    (root / "link.txt").symlink_to("a.txt")
    (root / "alias").symlink_to("dir")
    (root / "dangling").symlink_to("nowhere/x")
    return ["a.txt", "dir", "dir/b.txt", "dir/sub", "missing", "missing/deeper/x", "a.txt/x",
            "a.txt/x/y", "link.txt", "alias", "alias/b.txt", "alias/sub/none", "dangling",
            "dangling/z", "./dir//b.txt", "dir/./sub/"]


def test_info_after_resolve_answers_as_a_fresh_workspace_does(tmp_path: Path) -> None:
    from patchtx.workspace import Workspace

    spelled_paths = _tree_with_links(tmp_path)
    fresh = Workspace(tmp_path)
    expected = {s: fresh.info(fresh.resolve(s).rel) for s in spelled_paths}
    workspace = Workspace(tmp_path)
    for s in spelled_paths:
        assert workspace.info(workspace.resolve(s).rel) == expected[s], s
    rel = workspace.resolve("a.txt").rel
    os.unlink(tmp_path / "a.txt")
    assert workspace.info(rel) is None  # the view keeps no answer of its own


@given(st.text(alphabet="a/.", max_size=6))
def test_display_joins_as_os_path_join(rel: str) -> None:
    from patchtx.workspace import Workspace

    for workspace in (Workspace("/"), Workspace(os.path.dirname(__file__))):
        expected = os.path.join(workspace.root, rel) if rel else workspace.root
        assert workspace.display(rel) == expected


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
    from patchtx.matching import Placement
    from patchtx.rewrite import rewrite

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


class _CheckEverywhere:
    """The plain uniqueness check: every pattern searched again over its whole window."""

    @staticmethod
    def index(texts: list[str]) -> LineIndex:
        index = LineIndex(texts)
        index.matches_again = lambda *_args: True  # type: ignore[method-assign]
        return index


_FILE_LINES = st.sampled_from(["a", "a ", " a", "b", "b\t", "c", "", "a\u2013b", "a-b"])


@st.composite
def _chunks(draw: st.DrawFn) -> list[Chunk]:
    chunks = []
    for number in range(draw(st.integers(1, 3))):
        anchors = tuple(draw(st.lists(_FILE_LINES, max_size=2)))
        lines = tuple(draw(st.lists(st.tuples(st.sampled_from([" ", "-", "+"]), _FILE_LINES),
                                    min_size=1, max_size=3)))
        chunks.append(Chunk(anchors, lines, draw(st.booleans()) and number == 2, number + 1))
    return chunks


def _placed(texts: list[str], chunks: list[Chunk], index: LineIndex | None) -> object:
    try:
        return Locator(texts, "f", index=index).place(chunks)
    except PatchtxError as error:
        return type(error), error.message, error.details


@settings(max_examples=600)
@given(st.lists(_FILE_LINES, max_size=14), _chunks())
@example(["b", "b"], [Chunk((), ((" ", "b\t"),))])  # twice in the second pass only
@example(["a-b", "x", "a-b", "x"], [Chunk(("a\u2013b",), ((" ", "x"),))])  # in the fourth
def test_uniqueness_checks_scan_after_the_match_as_a_full_search_would(
        texts: list[str], chunks: list[Chunk]) -> None:
    assert _placed(texts, chunks, None) == _placed(texts, chunks, _CheckEverywhere.index(texts))


def _parse_line_by_line(text: str) -> Patch:
    """The plain definition of parse: every line, less one more CR at its end (Codex trims
    twice), through the state machine's feed."""
    from patchtx.parser import _patch_error, _StreamParser, unwrap

    lines = unwrap(text)
    parser = _StreamParser()
    for index in range(1, len(lines)):
        line = lines[index][:-1] if lines[index].endswith("\r") else lines[index]
        parser.feed(line, index + 1, index == len(lines) - 1)
    if parser.state != "ended":
        raise _patch_error("The last line of the patch must be '*** End Patch'")
    return Patch(tuple(parser.hunks), "\n".join(lines), parser.environment_id)


_HEADERS = st.sampled_from(["*** Update File: a.txt", "*** Add File: b.txt", "*** Delete File: c.txt"])
_BODY_LINES = st.sampled_from([
    " context", "-removed", "+added", "+", "-", " ", "@@", "@@", "@@ anchor", "", "+x\r", " y\r",
    "@@\r", "@@ ", "@@@", " @@", "*** End of File", "*** Move to: d.txt", "*** End Patch",
    "  *** End Patch", "plain", "+*** Add File: e.txt", "\t tab", "*** Add File: f.txt"])


@st.composite
def _patch_bodies(draw: st.DrawFn) -> list[str]:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 3))):
        lines.append(draw(_HEADERS))
        lines.extend(draw(st.lists(_BODY_LINES, max_size=8)))
    return lines


@settings(max_examples=1000)
@given(_patch_bodies(), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", " \n", "\n\t"]),
       st.booleans())
def test_parse_takes_body_lines_in_bulk_as_feed_would_line_by_line(
        body: list[str], separator: str, around: str, heredoc: bool) -> None:
    lines = ["*** Begin Patch", *body, "*** End Patch"]
    if heredoc:
        lines = ["<<'EOF'", *lines, "EOF"]
    text = around + separator.join(lines) + around

    def outcome(parse_function: Callable[[str], Patch]) -> object:
        try:
            return parse_function(text)
        except PatchtxError as error:
            return type(error), error.message, error.line, error.hint

    assert outcome(parse) == outcome(_parse_line_by_line)


@given(st.text(alphabet="a\r\n", max_size=12))
def test_split_lines_drops_one_carriage_return_before_each_line_feed(text: str) -> None:
    from patchtx.parser import split_lines

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    assert split_lines(text) == [line[:-1] if line.endswith("\r") else line for line in lines]


_TREE_PATHS = ["a", "a/b", "a/b/c", "a/bc", "a/b/d", "ab/x", "a-b/y", "a/b-c/z", "a/b/e/f", "q/r/s"]


@given(st.dictionaries(st.sampled_from(_TREE_PATHS), st.booleans(), max_size=7),
       st.sets(st.sampled_from(_TREE_PATHS)))
def test_emptied_folders_found_by_bisection_as_by_scanning_every_kept_path(
        effects: dict[str, bool], on_disk: set[str]) -> None:
    from patchtx.model import PathTarget
    from patchtx.options import PlanOptions
    from patchtx.planner import Stager

    class View:
        def list_dir(self, rel: str) -> list[str]:
            prefix = rel + "/"
            return sorted({p[len(prefix):].split("/")[0] for p in on_disk if p.startswith(prefix)})

    # A path kept (True: written, maybe added, so not listed on disk) or removed (False), in any
    # order.
    targets = [PathTarget(p, b"x", b"y" if kept else None) for p, kept in effects.items()]
    stager = Stager(View(), PlanOptions())  # type: ignore[arg-type]
    # Definition: a folder holding a removed path is emptied when no kept path lies inside it
    # and every entry it lists is removed or an emptied folder (deepest first).
    removed = {t.path for t in targets if t.after is None}
    kept = [t.path for t in targets if t.after is not None]
    folders = {"/".join(p.split("/")[:d]) for p in removed for d in range(1, p.count("/") + 1)}
    emptied: set[str] = set()
    for folder in sorted(folders, key=lambda d: d.count("/"), reverse=True):
        prefix = folder + "/"
        if not any(p.startswith(prefix) for p in kept) and all(
                prefix + e in removed or prefix + e in emptied for e in View().list_dir(folder)):
            emptied.add(folder)
    assert stager.emptied_dirs(targets) == sorted(emptied, key=lambda d: (-d.count("/"), d))


@given(st.lists(_FILE_LINES, max_size=10), st.lists(_FILE_LINES, min_size=1, max_size=3),
       st.booleans())
def test_exact_pass_searches_the_lines_themselves_whatever_sequences_it_is_given(
        texts: list[str], pattern: list[str], eof: bool) -> None:
    wanted = list(pattern)
    results = {
        (type(lines), type(asked)): LineIndex(lines).search(asked, 0, len(texts), eof=eof, limit=30)
        for lines in (list(texts), tuple(texts)) for asked in (list(pattern), tuple(pattern))
    }
    assert len(set(map(repr, results.values()))) == 1, results
    index = LineIndex(texts)
    index.search(pattern, 0, len(texts))
    assert index.keys(0) == texts and pattern == wanted


@given(st.lists(st.sampled_from(["a", "b", "ab", ""]), max_size=150),
       st.lists(st.sampled_from(["a", "b", "ab", ""]), min_size=1, max_size=3),
       st.integers(0, 160), st.integers(0, 160), st.integers(1, 4))
def test_line_matches_are_every_start_where_the_whole_pattern_fits(
        keys: list[str], wanted: list[str], lower: int, upper: int, limit: int) -> None:
    from patchtx.matching import _matches

    m = len(wanted)
    every = [s for s in range(lower, min(upper, len(keys)) - m + 1) if keys[s : s + m] == wanted]
    assert _matches(keys, wanted, lower, upper, limit) == every[:limit]


_BLOCK = 1 << 20


@pytest.mark.parametrize(("on_disk", "expected"), [
    pytest.param(b"a" * (3 * _BLOCK + 5), b"a" * (3 * _BLOCK + 5), id="as expected"),
    pytest.param(b"a" * (2 * _BLOCK + 5), b"a" * (2 * _BLOCK) + b"b" * 5, id="differs in the last block"),
    pytest.param(b"b" + b"a" * (2 * _BLOCK), b"a" * (2 * _BLOCK + 1), id="differs at the first byte"),
    pytest.param(b"a" * (2 * _BLOCK + 1), b"a" * (2 * _BLOCK), id="longer"),
    pytest.param(b"a" * (2 * _BLOCK), b"a" * (2 * _BLOCK + 1), id="shorter"),
    pytest.param(b"x" * 10, b"x" * 10, id="small"),
])
@pytest.mark.parametrize("stale_size", [False, True])
def test_reads_compared_with_what_is_expected_return_the_file_as_it_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: bytes, expected: bytes,
        stale_size: bool) -> None:
    from patchtx._fd import read_compared

    (tmp_path / "f").write_bytes(on_disk)
    if stale_size:  # fstat said the expected size (the file changed after it)
        real_fstat = os.fstat

        def stale_fstat(fd: int) -> os.stat_result:
            st = real_fstat(fd)
            return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid,
                                   st.st_gid, len(expected), st.st_atime, st.st_mtime, st.st_ctime))

        monkeypatch.setattr(os, "fstat", stale_fstat)
    fd = os.open(tmp_path / "f", os.O_RDONLY)
    try:
        data = read_compared(fd, os.fstat(fd).st_size, expected)
    finally:
        os.close(fd)
    assert data == on_disk
    if len(on_disk) > _BLOCK and on_disk == expected:
        assert data is expected  # no buffer the size of the file was made


def test_the_commit_check_reads_large_files_in_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The commit's check of an unchanged 3 MiB file reads it into one reused 1 MiB buffer."""
    import patchtx

    data = b"line\n" * (3 * _BLOCK // 5)
    (tmp_path / "f.txt").write_bytes(data)
    sizes: list[int] = []
    real_readv = os.readv

    def recording_readv(fd: int, buffers: list[bytearray]) -> int:
        sizes.append(len(buffers[0]))
        return real_readv(fd, buffers)

    monkeypatch.setattr(os, "readv", recording_readv)
    patchtx.apply_patch("*** Begin Patch\n*** Update File: f.txt\n@@\n line\n+new\n*** End Patch", str(tmp_path),
                        first_match=True, durable=False)
    assert sizes and set(sizes) == {_BLOCK}
    assert (tmp_path / "f.txt").read_bytes() == b"line\nnew\n" + data[5:]
