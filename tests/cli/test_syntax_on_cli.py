"""The syntax guard heard on the command line (issue 42 item 4): `patchtx apply` warns when a patch
leaves a file that does not parse (the guard's `warn` is the command line's default, the library's
stays `off`), a file in a language whose grammar is not installed says so on the terminal, and a
patch to a file with no grammar loads no parser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.cli.commands import main
from patchtx.plan import syntax

PATCHTX = str(Path(sys.executable).parent / "patchtx")
BREAK_PY = "*** Begin Patch\n*** Update File: m.py\n@@\n-    return a + b\n+    return (a + b\n*** End Patch\n"
BREAK_TS = "*** Begin Patch\n*** Update File: a.ts\n@@\n-let x = 1;\n+let x = (1;\n*** End Patch\n"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "m.py").write_text("def f(a, b):\n    return a + b\n")
    (tmp_path / "a.ts").write_text("let x = 1;\n")
    (tmp_path / "notes.txt").write_text("one\n")
    return tmp_path


def test_apply_warns_of_a_syntax_error_it_leaves(tree: Path) -> None:
    (tree / "break.patch").write_text(BREAK_PY)
    for quiet in ([], ["-q"], ["--stat", "--apply"]):
        done = subprocess.run([PATCHTX, "apply", *quiet, "break.patch"], cwd=tree, capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "Syntax: m.py: the patch leaves 1 error(s), the first at line 2" in done.stdout, (quiet, done.stdout)
        assert (tree / "m.py").read_text().endswith("return (a + b\n")
        (tree / "m.py").write_text("def f(a, b):\n    return a + b\n")
    done = subprocess.run([PATCHTX, "apply", "--json", "break.patch"], cwd=tree, capture_output=True, text=True,
                          timeout=60)
    assert json.loads(done.stdout)["syntax"]["mode"] == "warn"
    (tree / "m.py").write_text("def f(a, b):\n    return a + b\n")
    quiet_run = subprocess.run([PATCHTX, "apply", "--syntax", "off", "break.patch"], cwd=tree,
                               capture_output=True, text=True, timeout=60)
    assert quiet_run.returncode == 0 and "Syntax" not in quiet_run.stdout
    # The library's default stays off: a host chooses its guard.
    (tree / "m.py").write_text("def f(a, b):\n    return a + b\n")
    assert patchtx.apply_patch(BREAK_PY, tree, durable=False).plan.syntax is None


def test_refuse_with_no_grammar_installed_says_so(tree: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(syntax, "_grammars_installed", lambda: False)
    (tree / "ts.patch").write_text(BREAK_TS)
    assert main(["apply", "--root", str(tree), "--syntax", "refuse", str(tree / "ts.patch")]) == 0
    out = capsys.readouterr().out
    assert ("Syntax: not checked: a.ts (no TypeScript grammar installed (pip install 'patchtx[syntax]'))."
            in out), out
    assert (tree / "a.ts").read_text() == "let x = (1;\n"  # written, as the docs say, and said so


def test_a_file_with_no_grammar_loads_no_parser(tree: Path) -> None:
    """The guard on by default costs a text file's edit no parser: ast, tomllib and the grammar
    process are imported by the first file that needs them."""
    (tree / "txt.patch").write_text("*** Begin Patch\n*** Update File: notes.txt\n@@\n-one\n+two\n*** End Patch\n")
    (tree / "py.patch").write_text("*** Begin Patch\n*** Update File: m.py\n@@\n-    return a + b\n+    return b + a\n"
                                   "*** End Patch\n")
    probe = ("import sys\nfrom patchtx.cli.commands import main\ncode = main(['apply', '-q', sys.argv[1]])\n"
             "parsers = ('ast', 'tomllib', 'patchtx.plan.isolated', 'tree_sitter')\n"
             "print(sorted(m for m in parsers if m in sys.modules))\n"
             "sys.exit(code)\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    loaded = {}
    for name in ("txt.patch", "py.patch"):
        done = subprocess.run([sys.executable, "-c", probe, name], cwd=tree, capture_output=True, text=True,
                              timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        loaded[name] = done.stdout.strip().splitlines()[-1]
    assert loaded["txt.patch"] == "[]"
    assert loaded["py.patch"] == "['ast']"
