"""The syntax guard (issue 27): which errors count, the modes, the refusal paragraph, what is not
checked, and the defaults of each surface."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import patchtx
from patchtx.agents.tool_call import apply_patch_call
from patchtx.errors import InvalidArgumentsError, PolicyError, SyntaxGuardError
from patchtx.plan.syntax import MAX_BYTES, check_file
from patchtx.render import result_schema

PATCHTX = str(Path(sys.executable).parent / "patchtx")
APP = "def total(price):\n    return round(price * 2,\n                 2)\n"
BREAK = """*** Begin Patch
*** Update File: app.py
@@
     return round(price * 2,
-                 2)
+                 2
*** End Patch
"""
FINE = """*** Begin Patch
*** Update File: app.py
@@
-    return round(price * 2,
+    return round(price * 3,
*** End Patch
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "app.py").write_text(APP)
    return tmp_path


def validate(payload: dict[str, object]) -> None:
    jsonschema.Draft202012Validator(result_schema()).validate(payload)


def test_refuse_names_the_file_line_and_column_and_shows_the_lines(tree: Path) -> None:
    with pytest.raises(SyntaxGuardError) as refused:
        patchtx.apply_patch(BREAK, tree, syntax="refuse")
    assert (tree / "app.py").read_text() == APP
    assert refused.value.message == (
        "Refusing the patch: it would leave app.py with a Python syntax error at line 2, column 17:"
        " '(' was never closed. Nothing was changed. The file as the patch would leave it:\n"
        "  1 | def total(price):\n"
        "> 2 |     return round(price * 2,\n"
        "    |                 ^\n"
        "  3 |                  2\n"
        "Fix the patch so that the file still parses, and send it again.")
    assert refused.value.kind == "syntax_error" and refused.value.path == "app.py"


def test_warn_applies_and_reports(tree: Path) -> None:
    result = patchtx.apply_patch(BREAK, tree, syntax="warn")
    assert (tree / "app.py").read_text() != APP
    payload = result.to_json()
    validate(payload)
    (entry,) = payload["syntax"]["files"]
    assert entry["status"] == "errors" and entry["errors"][0]["line"] == 2
    assert payload["syntax"]["mode"] == "warn"


def test_off_parses_nothing(tree: Path) -> None:
    result = patchtx.apply_patch(BREAK, tree)  # the library's default
    assert result.plan.syntax is None and result.to_json()["syntax"] is None


def test_a_clean_patch_is_reported_checked(tree: Path) -> None:
    result = patchtx.apply_patch(FINE, tree, syntax="refuse")
    assert result.plan.syntax is not None
    assert [(f.path, f.status, f.language) for f in result.plan.syntax.files] == [("app.py", "ok", "python")]


def test_only_errors_the_patch_introduces_count() -> None:
    broken = b"def f(:\n    pass\n\nx = 1\n"
    # An already broken file: an edit elsewhere adds no error -> not refused.
    assert check_file("a.py", broken, broken.replace(b"x = 1", b"x = 2")).status == "unchanged_errors"
    # ... an edit that breaks another line it writes is.
    assert check_file("a.py", broken, broken.replace(b"x = 1", b"x = (1")).status == "unchanged_errors"
    fixed_first = b"def f():\n    pass\n\nx = (1\n"
    result = check_file("a.py", broken, fixed_first)
    assert result.status == "errors" and result.errors[0].line == 4
    # tree-sitter languages list every error: a second error in a broken file is new (unless the
    # parser's recovery from the first one swallows it: what a broken region hides is unseen).
    js = b"const a = 1;\nconst b = 2;\nfunction f( {\n}\n"
    assert check_file("a.js", js, js.replace(b"b = 2", b"b = 3")).status == "unchanged_errors"
    result = check_file("a.js", js, js.replace(b"a = 1;", b"a = (1;"))
    assert result.status == "errors" and result.errors[0].line == 1


def test_what_is_not_checked_says_why() -> None:
    assert check_file("notes.md", None, b"# (").reason == "no parser for this kind of file"
    big = b"x = 1\n" * (MAX_BYTES // 6 + 1)
    assert check_file("big.py", None, big).status == "not_checked"
    assert "too large" in (check_file("big.py", None, big).reason or "")
    assert check_file("Makefile", None, b"all:\n").status == "not_checked"


@pytest.mark.parametrize(("path", "data"), [
    ("big.json", b"[" + b"1" * 5000 + b"]\n"),  # (int's 4,300-digit limit)
    ("big.toml", b"x = " + b"1" * 5000 + b"\n"),
    ("deep.json", b"[" * 100_000 + b"]" * 100_000),
    ("deep.toml", b"x = " + b"[" * 100_000 + b"]" * 100_000 + b"\n"),
    ("terms.py", b"x = " + b"+".join([b"1"] * 200_000) + b"\n"),
    ("minus.py", b"x = " + b"-" * 100_000 + b"1\n"),
])
def test_valid_text_past_a_parsers_limits_is_not_checked(path: str, data: bytes, tree: Path) -> None:
    result = check_file(path, None, data)
    assert result.status == "not_checked" and "beyond the parser's limits" in (result.reason or "")
    # and a call that refuses what breaks syntax applies it, saying so, instead of failing
    patch = f"*** Begin Patch\n*** Add File: {path}\n+{data.decode().rstrip()}\n*** End Patch\n"
    applied = patchtx.apply_patch(patch, tree, syntax="refuse", durable=False)
    assert [f.status for f in applied.plan.syntax.files] == ["not_checked"]


def test_stdlib_languages() -> None:
    assert check_file("a.json", b'{"a": 1}\n', b'{"a": 1,}\n').status == "errors"
    assert check_file("a.toml", b"[a]\nb = 1\n", b"[a]\nb = \n").status == "errors"
    assert check_file("a.py", None, b"print('x')\n").status == "ok"
    assert check_file("a.json", None, b"\xef\xbb\xbf{}\n").status == "ok"  # a BOM


def test_a_warning_of_the_compiler_is_not_an_error_nor_output(tmp_path: Path) -> None:
    import warnings

    patch = "*** Begin Patch\n*** Add File: a.py\n+x = '\\d' is 'a'\n*** End Patch\n"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        plan = patchtx.plan_patch(patch, tmp_path, syntax="refuse")
    assert plan.syntax is not None and plan.syntax.files[0].status == "ok"
    assert caught == []


def test_a_moved_file_is_compared_with_its_source(tmp_path: Path) -> None:
    (tmp_path / "old.py").write_text("def f(:\n    pass\n")
    patch = ("*** Begin Patch\n*** Update File: old.py\n*** Move to: new.py\n@@\n-    pass\n+    return 1\n"
             "*** End Patch\n")
    result = patchtx.apply_patch(patch, tmp_path, syntax="refuse")  # broken before: no new error
    assert result.plan.syntax is not None
    assert {f.path: f.status for f in result.plan.syntax.files} == {"new.py": "unchanged_errors"}


def test_the_workspace_may_only_tighten(tree: Path) -> None:
    (tree / ".patchtx.toml").write_text('syntax = "refuse"\n')
    with pytest.raises(SyntaxGuardError):
        patchtx.apply_patch(BREAK, tree)  # the library's off, tightened to refuse
    with pytest.raises(SyntaxGuardError):
        patchtx.apply_patch(BREAK, tree, syntax="off")  # the host's off cannot loosen it
    (tree / ".patchtx.toml").write_text('syntax = "sometimes"\n')
    with pytest.raises(PolicyError, match="must be one of off, warn, refuse"):
        patchtx.apply_patch(FINE, tree)
    with pytest.raises(InvalidArgumentsError):
        patchtx.apply_patch(FINE, tree, syntax="yes")


def test_the_agent_surfaces_refuse_by_default(tree: Path) -> None:
    outcome = apply_patch_call(BREAK, str(tree))
    assert not outcome.ok and outcome.payload["error"]["kind"] == "syntax_error"
    validate(outcome.payload)
    assert outcome.payload["syntax"]["files"][0]["status"] == "errors"
    assert "> 2 |     return round(price * 2," in outcome.text
    assert (tree / "app.py").read_text() == APP
    # The host can turn it down.
    assert apply_patch_call(BREAK, str(tree), host={"syntax": "warn"}).ok


def test_the_drop_in_keeps_codex_behaviour(tree: Path) -> None:
    done = subprocess.run([str(Path(sys.executable).parent / "apply_patch"), BREAK], cwd=tree,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and (tree / "app.py").read_text() != APP


def test_check_shows_what_the_guard_would_say(tree: Path) -> None:
    (tree / "p.patch").write_text(BREAK)
    done = subprocess.run([PATCHTX, "check", "--no-diff", "p.patch"], cwd=tree, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0
    assert "Syntax: app.py: the patch leaves 1 error(s), the first at line 2, column 17" in done.stdout
    done = subprocess.run([PATCHTX, "check", "--json", "--syntax", "refuse", "p.patch"], cwd=tree,
                          capture_output=True, text=True, timeout=60)
    payload = json.loads(done.stdout)
    validate(payload)
    assert done.returncode == 1 and payload["error"]["kind"] == "syntax_error" and payload["dry_run"] is True
    done = subprocess.run([PATCHTX, "apply", "p.patch"], cwd=tree, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Syntax: app.py" in done.stdout  # apply warns too (issue 42 item 4)
