"""Recognising apply_patch inside the commands agents ask hosts to run (Codex's invocation forms)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from patchtx.agents.shell import (
    IMPLICIT_INVOCATION_MESSAGE,
    ApplyPatchInvocation,
    ImplicitInvocation,
    NotApplyPatch,
    extract_heredoc_call,
    parse_invocation,
)
from patchtx.agents.tool_call import apply_patch_call

PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello, world!\n*** End Patch"
CWD = "/work/repo"


def heredoc(delimiter: str = "'EOF'", body: str = PATCH, end: str = "EOF", prefix: str = "") -> str:
    return f"{prefix}apply_patch <<{delimiter}\n{body}\n{end}\n"


ACCEPTED = {
    "literal apply_patch": (["apply_patch", PATCH], PATCH, CWD),
    "literal applypatch": (["applypatch", PATCH], PATCH, CWD),
    "bash -lc": (["bash", "-lc", heredoc()], PATCH, CWD),
    "bash -c": (["bash", "-c", heredoc()], PATCH, CWD),
    "zsh -lc": (["zsh", "-lc", heredoc()], PATCH, CWD),
    "sh -c": (["sh", "-c", heredoc()], PATCH, CWD),
    "/bin/bash path": (["/bin/bash", "-lc", heredoc()], PATCH, CWD),
    "applypatch in a heredoc": (["bash", "-lc", heredoc().replace("apply_patch", "applypatch")],
                                PATCH, CWD),
    "unquoted delimiter": (["bash", "-lc", heredoc("EOF")], PATCH, CWD),
    "double-quoted delimiter": (["bash", "-lc", heredoc('"EOF"')], PATCH, CWD),
    "backslash-quoted delimiter": (["bash", "-lc", heredoc("\\EOF")], PATCH, CWD),
    "any delimiter word": (["bash", "-lc", heredoc("'PATCH'", end="PATCH")], PATCH, CWD),
    "space after <<": (["bash", "-lc", heredoc(" 'EOF'")], PATCH, CWD),
    "no final newline": (["bash", "-lc", heredoc().rstrip("\n")], PATCH, CWD),
    "trailing blank lines": (["bash", "-lc", heredoc() + "\n\n"], PATCH, CWD),
    "cd bare word": (["bash", "-lc", heredoc(prefix="cd sub/dir && ")], PATCH, CWD + "/sub/dir"),
    "cd single-quoted": (["bash", "-lc", heredoc(prefix="cd 'foo bar' && ")], PATCH, CWD + "/foo bar"),
    "cd double-quoted": (["bash", "-lc", heredoc(prefix='cd "foo bar" && ')], PATCH, CWD + "/foo bar"),
    "cd absolute": (["bash", "-lc", heredoc(prefix="cd /srv/app && ")], PATCH, "/srv/app"),
    "cd parent": (["bash", "-lc", heredoc(prefix="cd .. && ")], PATCH, "/work"),
    "cd then newline": (["bash", "-lc", heredoc(prefix="cd sub &&\n  ")], PATCH, CWD + "/sub"),
    "powershell -Command": (["powershell", "-Command", heredoc()], PATCH, CWD),
    "powershell.exe -NoProfile -Command": (["powershell.exe", "-NoProfile", "-Command", heredoc()],
                                           PATCH, CWD),
    "pwsh, flags in other case": (["pwsh", "-noprofile", "-COMMAND", heredoc()], PATCH, CWD),
    "PWSH.EXE": (["PWSH.EXE", "-Command", heredoc()], PATCH, CWD),
    "cmd /c with cd": (["cmd", "/c", heredoc(prefix="cd foo && ")], PATCH, CWD + "/foo"),
    "cmd.exe /C": (["cmd.exe", "/C", heredoc()], PATCH, CWD),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_forms(name: str) -> None:
    argv, patch, workdir = ACCEPTED[name]
    assert parse_invocation(argv, CWD) == ApplyPatchInvocation(patch, workdir)


def test_a_windows_shell_path_is_recognised_in_a_windows_cwd() -> None:
    argv = ["C:\\Program Files\\PowerShell\\7\\pwsh.exe", "-Command", heredoc(prefix="cd src && ")]
    assert parse_invocation(argv, "C:\\repo") == ApplyPatchInvocation(PATCH, "C:\\repo\\src")
    # With a POSIX cwd the same string is one odd file name, not pwsh (Codex's rule too).
    assert parse_invocation(argv, CWD) == NotApplyPatch()


REJECTED = {
    # codex-behavior.md §7.1
    "cd then ;": "cd foo; apply_patch <<'EOF'\n{patch}\nEOF\n",
    "cd ||": "cd foo || apply_patch <<'EOF'\n{patch}\nEOF\n",
    "cd |": "cd foo | apply_patch <<'EOF'\n{patch}\nEOF\n",
    "echo &&": "echo hi && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "apply_patch with an argument": "apply_patch foo <<'EOF'\n{patch}\nEOF\n",
    "two cds": "cd a && cd b && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "cd with two arguments": "cd a b && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "a command after": "apply_patch <<'EOF'\n{patch}\nEOF\necho done\n",
    "&& after the call": "cd a && apply_patch <<'EOF' && echo done\n{patch}\nEOF\n",
    "echo then cd &&": "echo x; cd y && apply_patch <<'EOF'\n{patch}\nEOF\n",
    # further near-misses
    "; after the delimiter": "apply_patch <<'EOF'; echo ok\n{patch}\nEOF\n",
    "a command before": "set -e\napply_patch <<'EOF'\n{patch}\nEOF\n",
    "a comment before": "# edit\napply_patch <<'EOF'\n{patch}\nEOF\n",
    "here-string": "apply_patch <<< '{patch}'",
    "stdin from a file": "apply_patch < change.patch",
    "an output redirect too": "apply_patch <<'EOF' > log.txt\n{patch}\nEOF\n",
    "a path to apply_patch": "./apply_patch <<'EOF'\n{patch}\nEOF\n",
    "apply-patch spelling": "apply-patch <<'EOF'\n{patch}\nEOF\n",
    "an environment assignment": "FOO=1 apply_patch <<'EOF'\n{patch}\nEOF\n",
    "a subshell": "(apply_patch <<'EOF'\n{patch}\nEOF\n)",
    "cd with an expansion": "cd $HOME && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "cd with a tilde": "cd ~/repo && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "cd into an expanded string": 'cd "$HOME/x" && apply_patch <<\'EOF\'\n{patch}\nEOF\n',
    "pushd instead of cd": "pushd a && apply_patch <<'EOF'\n{patch}\nEOF\n",
    "no delimiter line": "apply_patch <<'EOF'\n{patch}\n",
    "delimiter with trailing space only": "apply_patch <<'EOF'\n{patch}\nEOF \n",
    "cat, not apply_patch": "cat <<'EOF'\n{patch}\nEOF\n",
    "two heredocs": "apply_patch <<'EOF' <<'END'\n{patch}\nEOF\nx\nEND\n",
}


@pytest.mark.parametrize("name", sorted(REJECTED))
def test_near_misses_are_not_apply_patch(name: str) -> None:
    script = REJECTED[name].replace("{patch}", PATCH)
    assert parse_invocation(["bash", "-lc", script], CWD) == NotApplyPatch()


@pytest.mark.parametrize("argv", [
    ["bash", "-l", "-c", heredoc()],
    ["bash", "-cl", heredoc()],
    ["bash", "-LC", heredoc()],
    ["fish", "-c", heredoc()],
    ["bash", heredoc()],
    ["pwsh", "-NoProfile", heredoc()],
    ["pwsh", "-Command", "-NoProfile", heredoc()],
    ["cmd", "/k", heredoc()],
    ["apply_patch"],
    ["apply_patch", PATCH, "extra"],
    ["/usr/bin/apply_patch", PATCH],
    ["apply-patch", PATCH],
    ["git", "apply", "change.patch"],
    [],
])
def test_other_commands_are_not_apply_patch(argv: list[str]) -> None:
    assert parse_invocation(argv, CWD) == NotApplyPatch()


@pytest.mark.parametrize("argv", [
    [PATCH],
    ["<<'EOF'\n" + PATCH + "\nEOF"],
    ["bash", "-lc", PATCH],
    ["bash", "-lc", "\n" + PATCH + "\n"],
    ["pwsh", "-NoProfile", "-Command", PATCH],
])
def test_a_bare_patch_as_the_command_is_an_implicit_invocation(argv: list[str]) -> None:
    result = parse_invocation(argv, CWD)
    assert result == ImplicitInvocation()
    assert result.message == ('patch detected without explicit call to apply_patch. '
                              'Rerun as ["apply_patch", "<patch>"]') == IMPLICIT_INVOCATION_MESSAGE


# -- the heredoc body: bash's rule, not tree-sitter's -------------------------------------------

SCRIPT_WITH_HEREDOC = ("*** Begin Patch\n*** Update File: deploy.sh\n@@\n cat <<EOF\n hello\n-EOF\n"
                       "+  EOF\n+EOF\n  EOF\n*** End Patch")


def test_an_indented_delimiter_inside_the_patch_does_not_end_it() -> None:
    """A patch editing a shell script with its own heredoc: lines ' EOF' and '  EOF' are content."""
    script = heredoc("EOF", body=SCRIPT_WITH_HEREDOC)
    assert parse_invocation(["bash", "-lc", script], CWD) == ApplyPatchInvocation(SCRIPT_WITH_HEREDOC, CWD)


def test_lines_that_contain_the_delimiter_are_content() -> None:
    body = PATCH.replace("+Hello, world!", "+EOF is a word\n+x EOF\n+EOFX")
    assert extract_heredoc_call(heredoc(body=body)) == (body, None)


def test_dash_heredoc_strips_leading_tabs() -> None:
    tabbed = "\n".join("\t" + line for line in PATCH.splitlines())
    script = f"apply_patch <<-'EOF'\n{tabbed}\n\t\tEOF\n"
    assert extract_heredoc_call(script) == (PATCH, None)
    # Without the dash the tabs stay, and a tab-indented delimiter does not end the heredoc.
    assert extract_heredoc_call(f"apply_patch <<'EOF'\n{tabbed}\n\tEOF\n") is None


def test_the_body_is_taken_raw_even_under_an_unquoted_delimiter() -> None:
    body = PATCH.replace("Hello, world!", "price: $5 `date` \\n ${HOME}")
    assert extract_heredoc_call(heredoc("EOF", body=body)) == (body, None)


def test_blank_lines_inside_the_body_are_kept_and_trailing_ones_dropped() -> None:
    body = "*** Begin Patch\n*** Update File: a\n@@\n one\n\n-two\n*** End Patch"
    assert extract_heredoc_call(heredoc(body=body + "\n\n\n")) == (body, None)


def test_non_ascii_text_survives() -> None:
    body = PATCH.replace("Hello, world!", "naïve café — ✓")
    assert extract_heredoc_call(heredoc(prefix="cd 'répertoire' && ", body=body)) == (body, "répertoire")


def test_an_intercepted_command_applies_in_its_cd_directory(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "util.py").write_text("VALUE = 1\n")
    script = heredoc(prefix="cd pkg && ", body=("*** Begin Patch\n*** Update File: util.py\n-VALUE = 1\n"
                                                "+VALUE = 2\n*** End Patch"))
    invocation = parse_invocation(["bash", "-lc", script], str(tmp_path))
    assert isinstance(invocation, ApplyPatchInvocation)
    outcome = apply_patch_call(invocation.patch, str(tmp_path), workspace_root=invocation.workdir)
    assert outcome.payload["files"][0]["path"] == "pkg/util.py"
    assert (tmp_path / "pkg" / "util.py").read_text() == "VALUE = 2\n"


# -- import cost: tree-sitter only when a shell script must be read ----------------------------

def _loaded_after(code: str) -> bool:
    probe = f"import sys\n{code}\nprint('tree_sitter' in sys.modules)"
    run = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return run.stdout.strip() == "True"


def test_tree_sitter_is_imported_only_for_shell_scripts() -> None:
    setup = f"from patchtx.agents.shell import parse_invocation\nP = {PATCH!r}\n"
    assert not _loaded_after(setup)
    assert not _loaded_after(setup + "parse_invocation(['apply_patch', P], '/')\n"
                             "parse_invocation(['git', 'status'], '/')")
    assert _loaded_after(setup + "parse_invocation(['bash', '-lc', 'apply_patch <<EOF\\nx\\nEOF'], '/')")
