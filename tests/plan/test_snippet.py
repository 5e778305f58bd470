"""Lazy edit snippets merged only when the text decides (issue 44, ``patchtx.plan.snippet``):
each of the seven rules, a refusal naming the context to add and where, and conformance cases
written from each vendor's documented snippet rules (Cursor's ``edit_file``, Morph's fast apply,
Relace's instant apply)."""

from __future__ import annotations

import pytest

from patchtx.errors import PatchtxError
from patchtx.plan.snippet import merge_snippet, split_snippet

PY = """import os


def load(path):
    with open(path) as handle:
        data = handle.read()
    return data


def save(path, data):
    with open(path, "w") as handle:
        handle.write(data)


def main():
    save("out.txt", load("in.txt"))
""".split("\n")[:-1]

JS = """import { a } from './a.js';

export function total(items) {
  let count = 0;
  for (const item of items) {
    count += item;
  }
  return count;
}

export function mean(items) {
  return total(items) / items.length;
}
""".split("\n")[:-1]


def merged(texts: list[str], snippet: str, extension: str = "py") -> list[str]:
    return merge_snippet(texts, snippet, extension, "file")


def refused(texts: list[str], snippet: str, extension: str = "py") -> PatchtxError:
    with pytest.raises(PatchtxError) as info:
        merge_snippet(texts, snippet, extension, "file")
    return info.value


def test_placeholders_cut_the_snippet_into_parts() -> None:
    parts, held = split_snippet("# ... existing code ...\n\ndef f():\n    x = 1\n\n"
                                "# ... rest unchanged ...\n", "py")
    assert [part.lines for part in parts] == [("def f():", "    x = 1")]
    assert (parts[0].open_before, parts[0].open_after, parts[0].first) == (True, True, 3)
    assert held == ["# ... existing code ...", "# ... rest unchanged ..."]


def test_a_body_change_between_unchanged_lines_is_merged() -> None:
    out = merged(PY, "# ... existing code ...\ndef load(path):\n    with open(path) as handle:\n"
                     "        data = handle.read().strip()\n    return data\n# ... existing code ...\n")
    assert out == [line.replace("handle.read()", "handle.read().strip()") for line in PY]


def test_two_distant_places_a_deletion_and_an_addition() -> None:
    snippet = ("// ... existing code ...\nexport function total(items) {\n  let count = 0;\n"
               "  for (const item of items) {\n    count += item * 2;\n  }\n  return count;\n}\n\n"
               "export function mean(items) {\n  return total(items) / Math.max(1, items.length);\n}\n")
    out = merged(JS, snippet, "js")
    assert "    count += item * 2;" in out and out[-2] == "  return total(items) / Math.max(1, items.length);"
    assert len(out) == len(JS)
    deleted = merged(PY, "# ... existing code ...\n    return data\n\n\ndef main():\n"
                         "# ... existing code ...\n")
    assert "def save(path, data):" not in deleted and deleted[-1] == PY[-1]
    added = merged(PY, "# ... existing code ...\n        handle.write(data)\n\n\ndef close():\n"
                       "    pass\n\n\ndef main():\n# ... existing code ...\n")
    assert added[added.index("def close():") - 3] == "        handle.write(data)"


def test_an_import_at_the_files_start_without_a_placeholder_there() -> None:
    out = merged(PY, "import os\nimport sys\n\n\ndef load(path):\n# ... existing code ...\n")
    assert out[:2] == ["import os", "import sys"] and out[2:] == PY[1:]


# -- the rules --------------------------------------------------------------------------------------
def test_rule_1_a_placeholder_the_file_holds_itself_is_refused() -> None:
    texts = ["def f():", "    # ... existing code ...", "    return 1", "", "def g():", "    return 2"]
    error = refused(texts, "def f():\n    # ... existing code ...\n    return 3\n\ndef g():\n"
                           "# ... existing code ...\n")
    assert error.kind == "placeholder" and "the file holds that line itself (line 2)" in error.message


def test_rule_1_a_bare_ellipsis_is_code_in_python() -> None:
    error = refused(PY, "def load(path):\n    ...\n    return data\n\n\ndef save(path, data):\n...\n")
    assert error.kind == "placeholder" and "line of code" in error.message
    # In JavaScript it is a placeholder.
    out = merged(JS, "...\nexport function mean(items) {\n  return 0;\n}\n", "js")
    assert out[-2] == "  return 0;"


def test_rule_2_equal_readings_that_write_different_files_are_refused() -> None:
    texts = ["def a():", "    x = 1", "    y = 2", "", "def b():", "    x = 1", "    y = 2", "", "print('once')"]
    error = refused(texts, "# ... existing code ...\n    x = 1\n    z = 0\n    y = 2\n# ... existing code ...\n")
    assert error.kind == "ambiguous_context" and "starting at line 2 and at line 6" in error.message
    assert error.details["candidate_lines"] == [2, 6]


def test_rule_3_a_change_next_to_a_placeholder_says_which_lines_to_add() -> None:
    error = refused(PY, "# ... existing code ...\ndef load(path):\n    with open(path, 'rb') as handle:\n"
                        "# ... existing code ...\n")
    assert error.kind == "context_not_found"
    assert "End the part with 2 unchanged lines that follow the change in the file (after line 4 " \
           "`def load(path):` the file has line 5 `with open(path) as handle:`; line 6 `data = " \
           "handle.read()`; line 7 `return data`: start with the first one the change keeps)" in error.message
    # One retry with those lines succeeds.
    out = merged(PY, "# ... existing code ...\ndef load(path):\n    with open(path, 'rb') as handle:\n"
                     "        data = handle.read()\n    return data\n# ... existing code ...\n")
    assert out[4] == "    with open(path, 'rb') as handle:" and len(out) == len(PY)
    error = refused(PY, "# ... existing code ...\n        data = handle.read()\n    return data or ''\n"
                        "# ... existing code ...\n")
    assert error.kind == "context_not_found" and "after line 6 `data = handle.read()`" in error.message


def test_rule_3_a_deletion_up_to_a_line_that_stands_elsewhere_is_refused() -> None:
    # The closing brace could be the new function's own: the placeholder would keep what it deletes.
    texts = ["function a() {", "  return 1;", "}", "", "function b() {", "  return 2;", "}", "",
             "function c() {", "  return 3;", "}"]
    error = refused(texts, "// ... existing code ...\n  return 1;\n}\n\nfunction added() {\n  return 0;\n}\n"
                           "// ... existing code ...\n", "js")
    assert error.kind == "ambiguous_context"


def test_rule_4_no_deletion_at_the_files_end_without_a_placeholder() -> None:
    error = refused(PY, "# ... existing code ...\ndef main():\n    run()\n")
    assert error.kind == "ambiguous_context" and "no placeholder at its end" in error.message
    assert error.details["closest_line"] == len(PY)
    error = refused(PY, "def load(path):\n    with open(path) as handle:\n        data = handle.read(1)\n"
                        "    return data\n# ... existing code ...\n")
    assert error.kind == "ambiguous_context" and "no placeholder at its start" in error.message


def test_rule_5_a_reading_that_changes_nothing_is_refused() -> None:
    error = refused(PY, "# ... existing code ...\ndef save(path, data):\n    with open(path, \"w\") as handle:\n"
                        "# ... existing code ...\n")
    assert error.kind == "no_change"
    assert refused(PY, "# ... existing code ...\n").kind == "no_change"


def test_rule_6_a_changed_part_keeps_a_line_found_once() -> None:
    texts = ["a = [", "    1,", "    9,", "]", "b = [", "    1,", "]", "end"]
    error = refused(texts, "# ... existing code ...\n    1,\n    8,\n]\n# ... existing code ...\n")
    assert error.kind == "ambiguous_context" and "no line that stands once in the file" in error.message


def test_a_line_written_twice_is_refused() -> None:
    # The fewest-edit reading inserts what the model showed as context (meaning to delete between).
    texts = ["def a():", "    return 1", "", "def gone():", "    return 0", "", "def b():", "    return 2"]
    snippet = "# ... existing code ...\ndef a():\n    return 10\n\ndef b():\n# ... existing code ...\n"
    assert merged(texts, snippet) == ["def a():", "    return 10", "", "def b():", "    return 2"]
    error = refused(["x = 1", "def a():", "    return 1", "", "y = 2", "z = 3", "", "def b():", "    return 2"],
                    "# ... existing code ...\ndef a():\n    return 1\n\ndef b():\n    return 3\n\ny = 2\n"
                    "# ... existing code ...\n")
    assert error.kind in ("ambiguous_context", "context_not_found")


# -- conformance: each vendor's documented snippet shape --------------------------------------------
CURSOR = """// ... existing code ...
export function total(items) {
  let count = 0;
  for (const item of items) {
    if (item > 0) count += item;
  }
  return count;
}
// ... existing code ...
"""
"""Cursor's edit_file: 'represent all unchanged code using the comment of the language you're
editing in - example: // ... existing code ...'."""
MORPH = """// ... existing code ...
  for (const item of items) {
    count += item;
  }
  return count;
}

export function max(items) {
  return Math.max(...items);
}
// ... existing code ...
"""
"""Morph's fast apply: the update with '// ... existing code ...' for unchanged code, new code where
it goes."""
RELACE = """import { a } from './a.js';
import { b } from './b.js';

// ... keep existing code
"""
"""Relace's instant apply: '// ... keep existing code' markers; the snippet starts at the file's
start."""


def test_cursors_shape_is_merged() -> None:
    out = merged(JS, CURSOR, "js")
    assert "    if (item > 0) count += item;" in out and len(out) == len(JS)


def test_morphs_shape_is_refused_then_one_retry_merges() -> None:
    # The new function's closing brace next to the placeholder: inserted after total(), or
    # replacing mean()? The refusal asks for the lines that follow; with them, one reading.
    error = refused(JS, MORPH, "js")
    assert error.kind == "ambiguous_context" and "ending at line 9 or at line 13" in error.message
    retry = MORPH.replace("}\n// ... existing code ...\n", "}\n\nexport function mean(items) {\n"
                                                            "// ... existing code ...\n")
    out = merged(JS, retry, "js")
    assert out[out.index("export function max(items) {") - 2] == "}" and out[-3:] == JS[-3:]


def test_relaces_shape_is_refused_then_one_retry_merges() -> None:
    error = refused(JS, RELACE, "js")
    assert error.kind == "context_not_found"
    assert "after line 1 `import { a } from './a.js';` the file has line 3 `export function total(items) {`" \
        in error.message
    out = merged(JS, RELACE.replace("// ... keep", "export function total(items) {\n// ... keep"), "js")
    assert out[:2] == ["import { a } from './a.js';", "import { b } from './b.js';"] and out[2:] == JS[1:]


def test_a_refusal_states_that_nothing_changed_and_the_rule() -> None:
    error = refused(PY, "# ... existing code ...\n    return data.upper()\n# ... existing code ...\n")
    assert "Nothing was changed." in error.message and "a placeholder stands only for unchanged lines" in error.message


def test_new_lines_that_all_stand_in_the_file_are_refused() -> None:
    # Found by the hunt (rust-lang/log): a block deleted, its attribute kept; shown with one line
    # of context, the fewest-edit reading inserts a copy of the attribute before the next item.
    texts = ["mod a {", "    fn f() {}", "}", "", '#[cfg(feature = "std")]', "mod b {", "    fn g() {}", "}",
             "", "/// A visitor.", "pub struct Visitor;", "", '#[cfg(feature = "std")]', "fn h() {}"]
    snippet = ('// ... existing code ...\n}\n\n#[cfg(feature = "std")]\n/// A visitor.\npub struct Visitor;\n'
               "// ... existing code ...\n")
    error = refused(texts, snippet, "rs")
    assert error.kind == "ambiguous_context" and "which the file already holds (line 5)" in error.message


ATTACKED = "def f(a):\n    b = a + 1\n    c = b * 2\n    d = c - 3\n    return d\n\n\ndef g():\n    return 1\n"


@pytest.mark.parametrize("wording", [
    "# rest unchanged", "# same as before", "# (unchanged)", "# keep existing code", "# rest of the function",
    "# --- existing code ---", "# other statements unchanged", "# code omitted for brevity",
    "# existing code omitted for brevity", "# no changes below", "# etc.", "# [...]"])
def test_a_comment_in_place_of_deleted_code_is_refused_whatever_its_words(wording: str) -> None:
    """Found by an attack on the merger: a placeholder in words the recogniser does not know, in
    place of lines the model left out, read as code deleted and the comment written (the lines
    lost, exit 0). A change that adds a comment the file lacks while deleting more code than it
    writes is refused, whatever the comment says; the change shown between kept lines merges."""
    lines = ATTACKED.split("\n")[:-1]
    snippet = f"def f(a):\n    b = a + 10\n    {wording}\n    return d\n# ... existing code ...\n"
    with pytest.raises(PatchtxError) as refused:
        merge_snippet(lines, snippet, "py", "a.py")
    assert refused.value.kind == "placeholder" and wording in refused.value.message
    shown = "def f(a):\n    b = a + 10\n    c = b * 2\n# ... existing code ...\n"  # (the change between kept lines)
    assert merge_snippet(lines, shown, "py", "a.py") == ATTACKED.replace("a + 1\n", "a + 10\n").split("\n")[:-1]


def test_a_markdown_comment_in_place_of_deleted_text_is_refused() -> None:
    md = "# Title\n\nIntro line.\n\n## Usage\n\nRun it.\nMore text.\n\n## License\n\nMIT\n".split("\n")[:-1]
    snippet = ("<!-- ... existing content ... -->\n## Usage\n\nRun it now.\n"
               "<!-- rest of the section unchanged -->\n\n## License\n<!-- ... -->\n")
    with pytest.raises(PatchtxError) as refused:
        merge_snippet(md, snippet, "md", "README.md")
    assert refused.value.kind == "placeholder"


def test_a_comment_added_with_its_code_still_merges() -> None:
    """Not every new comment is a placeholder: one that comes with as much code as the change
    deletes (a line replaced, its reason above it) is merged."""
    lines = ATTACKED.split("\n")[:-1]
    snippet = "def f(a):\n    # one more than before\n    b = a + 10\n    c = b * 2\n# ... existing code ...\n"
    assert merge_snippet(lines, snippet, "py", "a.py") == \
        ATTACKED.replace("    b = a + 1\n", "    # one more than before\n    b = a + 10\n").split("\n")[:-1]
