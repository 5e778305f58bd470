"""Fuzzing: arbitrary patch text against arbitrary trees. Only patchtx's own errors may escape.

The number of examples comes from PATCHTX_FUZZ_EXAMPLES, else from ``tests/examples.py``
(10,000 through the planner in a full run, a tenth of that by default, every one of which also goes
through the parser);
trees live in memory behind the planner's read-only FileView, so no example touches the disk.
"""

from __future__ import annotations

import os
import posixpath

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from patchtx.errors import PatchtxError
from patchtx.formats.codex import parse
from patchtx.options import PlanOptions
from patchtx.plan.planner import plan
from patchtx.workspace.paths import FileInfo, Workspace

from ..examples import examples

EXAMPLES = int(os.environ.get("PATCHTX_FUZZ_EXAMPLES") or examples(10_000))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MARKERS = ["*** Begin Patch", "*** End Patch", "*** Add File: ", "*** Delete File: ",
           "*** Update File: ", "*** Move to: ", "*** End of File", "@@", "@@ ", "*** Environment ID:",
           "<<EOF", "<<'EOF'", "EOF", " ", "+", "-", "\\ No newline at end of file", ""]
NAMES = ["a.txt", "b.txt", "dir/c.txt", "dir", "../x", "/abs", "a.txt/child", "é.txt", ".git/x", ""]
LINES = ["one", "two", "  one", "one ", "\tone", "t\u2013wo", "", "x" * 3, "\u00a0one", "\r"]


def _line() -> st.SearchStrategy[str]:
    marker = st.sampled_from(MARKERS)
    return st.one_of(
        st.tuples(marker, st.sampled_from(NAMES + LINES)).map("".join),
        st.tuples(st.sampled_from(["+", "-", " ", ""]), st.sampled_from(LINES)).map("".join),
        st.text(max_size=12),
    )


patch_texts = st.one_of(
    st.text(max_size=200),
    st.lists(_line(), max_size=14).map(lambda ls: "\n".join(["*** Begin Patch", *ls, "*** End Patch"])),
    st.lists(_line(), max_size=14).map("\n".join),
)

file_bytes = st.one_of(
    st.lists(st.sampled_from(LINES), max_size=8).map(lambda ls: "\n".join(ls).encode()),
    st.binary(max_size=40),
    st.lists(st.sampled_from(LINES), max_size=6).map(lambda ls: "\r\n".join(ls).encode("utf-8")),
)
trees = st.dictionaries(st.sampled_from(["a.txt", "b.txt", "dir/c.txt", "dir/d.txt"]), file_bytes,
                        max_size=4)


class MemoryWorkspace(Workspace):
    """A workspace whose files are a dict: the planner cannot tell it from a disk."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.root = self.given_root = "/fuzz-root"
        self.files = files
        self.dirs = {posixpath.dirname(p) for p in files} - {""}

    def info(self, rel: str) -> FileInfo | None:
        if rel in self.files:
            return FileInfo("file", 0o644)
        if rel in self.dirs:
            return FileInfo("dir", 0o755)
        return None

    def read(self, rel: str) -> bytes:
        return self.files[rel]

    def list_dir(self, rel: str) -> list[str]:
        prefix = rel + "/"
        return sorted({p[len(prefix):].split("/")[0] for p in self.files if p.startswith(prefix)})

    def _follow_links(self, parts: list[str], spelled: str, line: int | None) -> tuple[list[str], bool]:
        return parts, False


@settings(FUZZ, max_examples=max(EXAMPLES // 5, 100))
@given(patch_texts)
@example("diff --cc ")  # a merge diff: unsupported_change
def test_parser_raises_only_its_own_errors(text: str) -> None:
    try:
        parsed = parse(text)
    except PatchtxError as error:
        # A text that reads as a unified diff may be one patchtx refuses to apply (a merge diff,
        # a binary patch): refused as unsupported_change, also before anything is read.
        assert error.kind in ("parse_error", "unsupported_change")
        assert "Nothing was changed." in error.message
        return
    assert parsed.text.splitlines()[0].strip() == "*** Begin Patch"


@FUZZ
@given(patch_texts, trees, st.booleans(), st.booleans())
def test_planner_raises_only_its_own_errors(text: str, files: dict[str, bytes], overwrite: bool,
                                            first_match: bool) -> None:
    workspace = MemoryWorkspace(dict(files))
    try:
        planned = plan(parse(text), workspace, PlanOptions(allow_overwrite=overwrite, first_match=first_match))
    except PatchtxError as error:
        assert error.message and error.kind
        return
    for target in planned.targets:
        assert not target.path.startswith(("/", "../")) and ".." not in target.path.split("/")
        assert target.before == files.get(target.path)
    assert files == workspace.files, "planning never changes the tree"
