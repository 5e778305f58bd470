"""Everyday surfaces of the command line (issue 18): version, ``python -m``, missing extras."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import patchtx

BIN = Path(sys.executable).parent


def run(argv: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=60)


def test_version_everywhere(tmp_path: Path) -> None:
    expected = f"patchtx {patchtx.__version__}\n"
    for argv in ([str(BIN / "patchtx"), "--version"], [str(BIN / "patchtx"), "-V"],
                 [sys.executable, "-m", "patchtx", "--version"]):
        done = run(argv, tmp_path)
        assert (done.returncode, done.stdout, done.stderr) == (0, expected, ""), argv
    done = run([str(BIN / "apply_patch"), "--version"], tmp_path)
    assert (done.returncode, done.stdout) == (0, f"apply_patch {patchtx.__version__}\n")
    assert list(tmp_path.iterdir()) == []


def test_installed_metadata_has_the_one_version() -> None:
    from importlib.metadata import version

    assert version("patchtx") == patchtx.__version__


def test_python_dash_m_runs_the_command(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\n")
    patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
    done = run([sys.executable, "-m", "patchtx", "apply", "-"], tmp_path, stdin=patch)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Applied: A 0, M 1, D 0, R 0\n")
    assert (tmp_path / "a.txt").read_text() == "ONE\n"


_WITHOUT = "import sys; sys.modules[{module!r}] = None; from patchtx.cli.commands import main; sys.exit(main({argv!r}))"


def test_mcp_without_its_extra_is_one_line_naming_it(tmp_path: Path) -> None:
    done = run([sys.executable, "-c", _WITHOUT.format(module="mcp", argv=["mcp", "--root", "."])], tmp_path)
    assert done.returncode == 3
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert "pip install 'patchtx[mcp]'" in done.stderr


def test_the_module_form_of_the_mcp_server_without_its_extra_is_one_line_too(tmp_path: Path) -> None:
    code = ("import sys, runpy; sys.modules['mcp'] = None; sys.argv = ['mcp_server', '--root', '.']\n"
            "runpy.run_module('patchtx.agents.mcp_server', run_name='__main__')\n")
    done = run([sys.executable, "-c", code], tmp_path)
    assert (done.returncode, done.stdout) == (3, "")
    assert done.stderr == ("patchtx: The MCP server needs the 'mcp' package, which is not installed: "
                           "pip install 'patchtx[mcp]'.\n")
    imported = run([sys.executable, "-c", "import sys; sys.modules['mcp'] = None\n"
                    "try:\n    import patchtx.agents.mcp_server\n"
                    "except ImportError as exc:\n    print(exc.kind)"], tmp_path)
    assert imported.stdout == "missing_dependency\n"  # an ImportError and a PatchtxError


def test_shell_recognition_without_tree_sitter_names_the_extra(tmp_path: Path) -> None:
    code = ("import sys; sys.modules['tree_sitter'] = None\n"
            "from patchtx.agents.shell import parse_invocation\n"
            "from patchtx.errors import MissingExtraError\n"
            "try:\n    parse_invocation(['bash', '-lc', 'echo hi'], '.')\n"
            "except MissingExtraError as exc:\n    print(exc.kind, exc.message)\n")
    done = run([sys.executable, "-c", code], tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("missing_dependency ")
    assert "pip install 'patchtx[shell]'" in done.stdout


def test_readme_first_command_installs_only_the_package() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    first = readme.split("```bash\n", 1)[1].split("```", 1)[0]
    assert "pip install -q -e . &&" in first and "[test" not in first
    assert "pipx install ." in readme
