"""The one definition of a lazy placeholder line (``patchtx.plan.placeholders``) and the guard's rule:
the wordings vendors' prompts ask for and models write are recognised; Python's Ellipsis, prose
ellipses, comments that only mention such words, and a file's own placeholders are not taken for
one (issue 37 item 13, issue 44 item 2)."""

from __future__ import annotations

import pytest

from patchtx.plan.placeholders import extension_of, find_placeholder, is_elision, is_placeholder

PLACEHOLDERS = [
    # Cursor, Morph (edit_file's code_edit): the file's comment syntax
    ("// ... existing code ...", "ts"), ("    // ... existing code ...", "js"),
    ("# ... existing code ...", "py"), ("{/* ... existing code ... */}", "tsx"),
    ("<!-- ... existing code ... -->", "html"), ("-- ... existing code ...", "sql"),
    # Relace's prompt
    ("// ... rest of code ...", "js"), ("// ... keep existing code ...", "js"),
    ("// ... code remains the same", "go"),
    # the common wordings models write
    ("# ... rest of the function unchanged ...", "py"), ("// ... other methods ...", "java"),
    ("# ... (rest of the function remains the same)", "py"), ("# ...existing code...", "py"),
    ("# existing code ...", "py"), ("# rest of the file...", "py"), ("/* ... */", "c"),
    ("# ...", "py"), ("// …", "go"), ("# Rest of the code remains unchanged", "py"),
    ("// existing code here", "js"), ("// Existing code remains the same.", "js"),
    ("# (unchanged code)", "py"), ("// [existing code]", "js"), ("// existing code", "ts"),
    ("<!-- ... existing content ... -->", "md"),
    # aider's laziness benchmark
    ("# ...add logic here...", "py"), ("# ...include the original method body...", "py"),
    # a bare ellipsis where the language has no such statement
    ("...", "js"), ("    ...", "rs"), ("  ...", "json"), ("...", "c"),
]

NOT_PLACEHOLDERS = [
    # Python's Ellipsis: a stub's body, an expression
    ("...", "py"), ("    ...", "pyi"), ("def f(): ...", "py"), ("x = arr[..., 0]", "py"),
    ("print('...')", "py"), ("x = y  # ... existing code ...", "py"),
    # prose: Markdown, text, YAML, an unknown language
    ("...", "md"), ("Read more...", "md"), ("# ... existing code ...", "md"), ("# ...", "md"),
    ("// ... existing code ...", "txt"), ("...", "yaml"), ("...", ""),
    # comments that mention such words, or end in an ellipsis of their own
    ("# retry the rest of the batch...", "py"), ("# Loading...", "py"),
    ("// TODO: handle this...", "js"), ("# ...and then we compute x", "py"),
    ("# ... otherwise check consistency of bases", "py"),
    ("# Keep the existing behaviour for old clients", "py"), ("// other code paths call this", "js"),
    ("// rest of line is ignored", "c"), ("# Other helper functions", "py"),
    ("/* Other helper functions */", "c"), ("// Other methods.", "java"),
    ("# rest of the text in this class", "py"), ("# Existing code paths must keep working", "py"),
    # code
    ("--verbose", "sh"), ("--x;", "c"), ("#include <stdio.h>", "c"), ("#[derive(Debug)]", "rs"),
    ("#define MAX(a, b) ...", "c"), ("const { a, ...rest } = obj;", "js"), ("...rest", "js"),
    ("f(...args)", "js"),
]


@pytest.mark.parametrize(("line", "extension"), PLACEHOLDERS)
def test_a_placeholder_is_recognised(line: str, extension: str) -> None:
    assert is_placeholder(line, extension)


@pytest.mark.parametrize(("line", "extension"), NOT_PLACEHOLDERS)
def test_what_is_no_placeholder(line: str, extension: str) -> None:
    assert not is_placeholder(line, extension)


def test_an_extension_is_read_from_the_name() -> None:
    assert [extension_of(p) for p in ("src/App.TSX", "a.b/c", ".bashrc", "x.tar.gz", "Makefile")] == [
        "tsx", "", "", "gz", ""]


def guard(new: list[str], removed: tuple[str, ...] = (), file: tuple[str, ...] = (),
          extension: str = "py", added: list[bool] | None = None) -> str | None:
    return find_placeholder(new, added or [True] * len(new), removed, file, extension)


def test_the_guard_names_an_added_placeholder() -> None:
    assert guard(["def f():", "    # ... existing code ...", "    return 2"]) == "    # ... existing code ..."


def test_a_placeholder_kept_or_replaced_is_the_files_own() -> None:
    new = ["def f():", "    # ... existing code ...", "    return 2"]
    assert guard(new, added=[False, False, True]) is None  # (a context line: the file has it)
    assert guard(new, removed=("    # ...",)) is None  # (it replaces a placeholder)
    assert guard(new, file=("x = 1", "# ... rest of the tutorial ...")) is None  # (the file uses them)


def test_a_placeholder_inside_a_comment_is_text() -> None:
    example = ["# Example:", "#   >>> run()", "#   ...", "#   done"]
    assert guard(example) is None
    assert guard(["/* usage:", "   f(a)", "   ...", "*/"], extension="c") is None
    assert guard(["int printf(const char *format,", "           ...", "           );"],
                 extension="c") is None
    # (at a hunk's edge, or beside code, it stands where code goes)
    assert guard(["# ...", "x = 1"]) == "# ..."


def test_aiders_elision_mark() -> None:
    assert is_elision("...") and is_elision("   …  ") and not is_elision("# ...")
