"""The placement rule (docs/format.md, "Where a hunk goes"): apply when exactly one placement of a
file's hunks exists (in file order, each after its anchors); an anchor narrows, never chooses;
stacks may restate a parent above the cursor. The byte search space and the line search space
run the same rule: their results are compared on generated files."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import patchtx
from patchtx.errors import AmbiguousContextError, ContextNotFoundError
from patchtx.model import Chunk
from patchtx.place.exact import ByteIndex
from patchtx.place.matching import LineIndex, Missing, NotExact, place

from ..examples import examples


def apply(root: Path, body: str, **options: bool) -> str:
    patchtx.apply_patch(f"*** Begin Patch\n*** Update File: f.py\n{body}\n*** End Patch", root, **options)
    return (root / "f.py").read_text()


CLASSES = ("class T:\n    def a(self):\n        return 1\n\n    def b(self):\n        return 1\n\n"
           "class U:\n    def a(self):\n        return 1\n")


def test_a_stack_may_restate_its_parent_above_the_cursor(tmp_path: Path) -> None:
    # The natural way to edit two methods of one class: each hunk names the class again.
    source = CLASSES.replace("b(self):\n        return 1", "b(self):\n        return 5")
    (tmp_path / "f.py").write_text(source)
    body = ("@@ class T:\n@@     def a(self):\n-        return 1\n+        return 2\n"
            "@@ class T:\n@@     def b(self):\n-        return 5\n+        return 3")
    assert apply(tmp_path, body) == source.replace("return 1", "return 2", 1).replace("return 5", "return 3")


def test_a_unique_anchor_whose_block_holds_one_candidate_settles_it(tmp_path: Path) -> None:
    # After 'def b', 'return 1' is in T.b and in U.a; 'def b(self):' occurs once and opens a block
    # (by indentation) that holds only the first: the block rule takes it.
    (tmp_path / "f.py").write_text(CLASSES)
    body = ("@@ class T:\n@@     def a(self):\n-        return 1\n+        return 2\n"
            "@@ class T:\n@@     def b(self):\n-        return 1\n+        return 3")
    assert apply(tmp_path, body) == CLASSES.replace("return 1", "return 2", 1).replace(
        "b(self):\n        return 1", "b(self):\n        return 3")


def test_a_block_by_brackets(tmp_path: Path) -> None:
    source = "impl A {\n    fn f() {\n        x();\n    }\n}\n\nimpl B {\n    fn g() {\n        x();\n    }\n}\n"
    (tmp_path / "f.py").write_text(source)
    assert apply(tmp_path, "@@ impl A {\n-        x();\n+        y();") == source.replace("x()", "y()", 1)
    (tmp_path / "f.py").write_text("impl A {\n    x();\n    x();\n}\n")
    with pytest.raises(AmbiguousContextError):  # the block holds both: still refused
        apply(tmp_path, "@@ impl A {\n-    x();\n+    y();")


def test_the_block_rule_needs_an_anchor_that_occurs_once(tmp_path: Path) -> None:
    source = "def f():\n    x = 1\n    x = 1\ndef f():\n    x = 1\n"
    (tmp_path / "f.py").write_text(source)
    with pytest.raises(AmbiguousContextError) as info:
        apply(tmp_path, "@@ def f():\n-    x = 1\n+    x = 2")
    assert info.value.details["candidate_lines"] == [2, 3, 5]


def test_a_repeated_anchor_line_does_not_refuse_a_hunk_unique_after_it(tmp_path: Path) -> None:
    lock = "[[package]]\nname = \"a\"\ndependencies = [\n \"x\",\n]\n\n[[package]]\nname = \"b\"\n" \
           "dependencies = [\n \"y\",\n]\n"
    (tmp_path / "f.py").write_text(lock)
    assert apply(tmp_path, "@@ dependencies = [\n- \"y\",\n+ \"z\",") == lock.replace('"y"', '"z"')


def test_an_anchor_never_chooses_between_two_matches_after_it(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CLASSES)
    with pytest.raises(AmbiguousContextError) as info:
        apply(tmp_path, "@@ class T:\n-        return 1\n+        return 2")
    assert info.value.details["candidate_lines"] == [3, 6, 10]
    assert (tmp_path / "f.py").read_text() == CLASSES
    # Codex's first match, for those who ask
    assert apply(tmp_path, "@@ class T:\n-        return 1\n+        return 2", first_match=True) == \
        CLASSES.replace("return 1", "return 2", 1)


def test_a_later_hunk_can_settle_an_earlier_one(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x\nw\nx\n")
    assert apply(tmp_path, "@@\n-x\n+X\n@@\n-w\n+W") == "X\nW\nx\n"


def test_nfd_in_the_file_matches_nfc_in_the_patch_and_the_file_text_is_kept(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("name = 'Zoe\u0308'\nx = 1\n")  # NFD: e + combining diaeresis
    assert apply(tmp_path, " name = 'Zo\u00eb'\n-x = 1\n+x = 2") == "name = 'Zoe\u0308'\nx = 2\n"


def test_a_miss_on_invisible_differences_names_the_code_points(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a = '\u0430'\n")  # Cyrillic a
    with pytest.raises(ContextNotFoundError) as info:
        apply(tmp_path, "-a = 'a'\n+a = 'b'")
    assert "the file has U+0430 where the patch has U+0061" in info.value.message


def test_range_headers_read_as_bare_markers(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("a\nb\nc\n")
    assert apply(tmp_path, "@@ -1,2 +1,2 @@\n a\n-b\n+B") == "a\nB\nc\n"


def test_a_bare_marker_may_close_an_anchor_stack(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text(CLASSES)
    assert apply(tmp_path, "@@ class U:\n@@     def a(self):\n@@\n-        return 1\n+        return 9") == \
        CLASSES[: CLASSES.rindex("return 1")] + "return 9\n"


# -- one rule over two search spaces --------------------------------------------------------------
LINES = st.lists(st.sampled_from(["a", "b", "c", "def f():", "", "x = 1"]), max_size=14)


@st.composite
def chunks(draw: st.DrawFn) -> list[Chunk]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        anchors = tuple(draw(st.lists(st.sampled_from(["def f():", "c", "a"]), max_size=2)))
        old = draw(st.lists(st.sampled_from(["a", "b", "c", "", "x = 1"]), max_size=3))
        lines = tuple((draw(st.sampled_from([" ", "-"])), text) for text in old)
        lines += tuple(("+", text) for text in draw(st.lists(st.sampled_from(["N", "M"]), max_size=2)))
        if lines:
            out.append(Chunk(anchors, lines, draw(st.booleans()) and bool(old)))
    return out or [Chunk((), (("+", "N"),))]


@settings(max_examples=examples(3000), deadline=None)
@given(LINES, chunks(), st.booleans())
def test_the_byte_space_places_exactly_as_the_line_space(texts: list[str], hunks: list[Chunk],
                                                         first_match: bool) -> None:
    """Wherever the byte space decides, the line space decides the same; where the line space
    refuses, the byte space never places (it hands the file over)."""
    body = "".join(t + "\n" for t in texts).encode()
    try:
        by_lines = [(n, s, e - s) for n, s, e, _ in place(LineIndex(texts), hunks, first_match=first_match)]
    except (Missing, Exception) as exc:  # Missing or Ambiguous
        by_lines = type(exc).__name__  # type: ignore[assignment]
    try:
        index = ByteIndex(body)
        placed = place(index, hunks, first_match=first_match)
    except NotExact:
        return
    starts = index.line_of([s for _, s, _, _ in placed])
    by_bytes = [(n, line, sum(k != "+" for k, _ in lines))
                for (n, _, _, lines), line in zip(placed, starts, strict=True)]
    assert by_bytes == by_lines


def test_a_chunk_repeating_its_anchor_line_edits_that_class_not_the_next(tmp_path: Path) -> None:
    # The hunk's lines occur in both classes below 'class A:'; 'class A:' occurs once and its
    # block (by indentation) holds one of them: the block rule takes that one.
    (tmp_path / "m.py").write_text("class A:\n    def f(self):\n        return 1\n\n"
                                   "class B:\n    def f(self):\n        return 1\n")
    patchtx.apply_patch("*** Begin Patch\n*** Update File: m.py\n@@ class A:\n@@     def f(self):\n"
                        "     def f(self):\n-        return 1\n+        return 2\n*** End Patch", tmp_path)
    assert (tmp_path / "m.py").read_text().split("class B:")[0].count("return 2") == 1
    assert (tmp_path / "m.py").read_text().endswith("class B:\n    def f(self):\n        return 1\n")


def test_a_hunk_whose_first_line_only_loosely_repeats_its_anchor_is_still_determined(
        tmp_path: Path) -> None:
    # "a" equals the anchor "  a" only with whitespace ignored, so it is no occurrence of the
    # anchor (found exactly): the first hunk cannot take line 2, whose anchor would then be
    # missing. One placement exists; it used to be refused as ambiguous.
    (tmp_path / "f.py").write_text("  a\n  a\na\n")
    assert apply(tmp_path, "@@\n   a\n+N\n@@   a\n a\n+M\n*** End of File") == "  a\nN\n  a\na\nM\n"


@pytest.mark.parametrize(("source", "body"), [
    # A "}" in a string would close the block early by a bare count of brackets, leaving one
    # of foo's two "x = 1;" lines outside it.
    ("fn foo() {\n    x = 1;\n    let s = \"}\";\n    x = 1;\n}\nfn bar() {\n    x = 1;\n}\n",
     "@@ fn foo() {\n-    x = 1;\n+    x = 2;"),
    # An unindented line of a multi-line string would end class T early by indentation alone,
    # leaving T.g's "return 1" outside it.
    ('class T:\n    def f(self):\n        return 1\n    s = """\nx\n"""\n    def g(self):\n'
     '        return 1\nclass U:\n    def g(self):\n        return 1\n',
     "@@ class T:\n-        return 1\n+        return 2"),
])
def test_the_block_rule_never_settles_on_a_block_that_strings_cut_short(
        tmp_path: Path, source: str, body: str) -> None:
    (tmp_path / "f.py").write_text(source)
    with pytest.raises(AmbiguousContextError):
        apply(tmp_path, body)
    assert (tmp_path / "f.py").read_text() == source


@pytest.mark.parametrize(("source", "body", "after"), [
    ("def f():\n    a = 1\n    return x\ndef g():\n    a = 1\n    return x  \n",
     "@@\n-    a = 1\n+    a = 2\n@@\n-    return x\n+    return y",
     "def f():\n    a = 2\n    return y\ndef g():\n    a = 1\n    return x  \n"),
    # One hunk: below the second "def run(self):" only the trailing-whitespace pass finds it.
    ("class A:\n    def run(self):\n        go()\nclass B:\n    def run(self):\n        go()  \n",
     "@@     def run(self):\n-        go()\n+        stop()",
     "class A:\n    def run(self):\n        stop()\nclass B:\n    def run(self):\n        go()  \n"),
])
def test_an_exact_match_is_preferred_to_places_only_a_looser_pass_finds(
        tmp_path: Path, source: str, body: str, after: str) -> None:
    # A section's pass is the first that finds it from its earliest place; matches that only a
    # looser pass finds are no candidates (as in Codex): docs/format.md, "Where a hunk goes".
    (tmp_path / "f.py").write_text(source)
    assert apply(tmp_path, body) == after


def test_an_anchor_found_only_loosely_counts_when_the_exact_one_leaves_no_place(tmp_path: Path) -> None:
    # (Real history, issue 25.) The anchor stands exactly once below the hunk and, with trailing
    # white space, once above it, where the hunk is: the looser pass's occurrence counts too.
    source = "def f(): \n    x = 1\n    return x\n\n\ndef g():\n    pass\n\n\ndef f():\n    y = 2\n"
    (tmp_path / "f.py").write_text(source)
    assert apply(tmp_path, "@@ def f():\n-    x = 1\n+    x = 2") == source.replace("x = 1", "x = 2")


def test_a_loose_anchor_still_never_chooses_between_two_matches(tmp_path: Path) -> None:
    source = "def f(): \n    x = 1\n\ndef h():\n    x = 1\n\ndef f():\n    y = 2\n"
    (tmp_path / "f.py").write_text(source)
    with pytest.raises(AmbiguousContextError):
        apply(tmp_path, "@@ def f():\n-    x = 1\n+    x = 2")
    assert (tmp_path / "f.py").read_text() == source


@pytest.mark.parametrize("anchors", ["@@ def f(self):", "@@ class A:\n@@ def f(self):"],
                         ids=["one-anchor", "stacked-under-the-class"])
def test_a_hunk_matching_loosely_below_its_exact_anchor_and_closely_below_a_loose_one_is_refused(
        tmp_path: Path, anchors: str) -> None:
    # (Found by the generated hunt.) The anchor, written without its indentation, equals the
    # module-level `def f(self):` and, white space aside, the method `    def f(self):` above it,
    # whose body holds the hunk's lines as written. Taking the exact anchor edited the module
    # function's body, matched only loosely, with the method's indentation (even under
    # `@@ class A:`). Each reading has the anchor: refused, both places listed.
    source = ("class A:\n    def f(self):\n        x = 1\n        return x\n\n"
              "def f(self):\n    x = 1\n    return x\n")
    (tmp_path / "f.py").write_text(source)
    with pytest.raises(AmbiguousContextError) as info:
        apply(tmp_path, f"{anchors}\n-        x = 1\n+        x = 10\n         return x")
    assert info.value.details["candidate_lines"] == [3, 7]
    assert "file line 6 in the pass that first finds it, and file line 2 in a looser one" in info.value.message
    assert (tmp_path / "f.py").read_text() == source
    # Codex's rule (--first-match, here with Codex's grammar: --strict) takes the anchor's first
    # pass, as before.
    assert apply(tmp_path, f"{anchors}\n-        x = 1\n+        x = 10\n         return x",
                 first_match=True, strict=True) == source.replace("    x = 1\n    return x\n",
                                                                  "        x = 10\n    return x\n")
    (tmp_path / "f.py").write_text(source)
    # Written as the file has it, the method's hunk is determined.
    assert apply(tmp_path, "@@     def f(self):\n-        x = 1\n+        x = 2\n         return x") == (
        source.replace("        x = 1", "        x = 2"))
