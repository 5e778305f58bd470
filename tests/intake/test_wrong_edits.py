"""The review of main at 03:50 (findings 2, 3, 4, 7 and 12): repairs that made wrong edits, each
with the reviewer's reproduction. The rule they break (docs/format.md, "Repairs"): a repair is made
only when the repaired patch has exactly one meaning and is placed by the same placement rule as
any other patch; a repaired patch goes through every check an unrepaired one does."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError
from patchtx.options import OPTIONS

from .test_shapes import contents, tree


def apply(root: Path, patch: str, **options: object) -> patchtx.Result | PatchtxError:
    try:
        return patchtx.apply_patch(patch, root, durable=False, **options)
    except PatchtxError as error:
        return error


# -- finding 2: a repaired patch is asked the already-applied question ----------------------------
SENT_AGAIN = [
    pytest.param({"a.py": b"def f():\n    return 1\n"},
                 "*** Begin Patch\n*** Update File: a.py\n@@\n 2:     return 1\n+3: x = 2\n"
                 "*** End Patch\n",
                 {"a.py": b"def f():\n    return 1\nx = 2\n"}, "line_number_prefixes",
                 id="line_number_prefixes"),
    pytest.param({"a.txt": b"aaa\nbbb\nccc\n"},
                 "*** Begin Patch\n*** Update File: a.txt\n@@\n ccc\n+C1\n@@\n aaa\n+A1\n"
                 "*** End Patch\n",
                 {"a.txt": b"aaa\nA1\nbbb\nccc\nC1\n"}, "hunks_reordered", id="hunks_reordered"),
]


@pytest.mark.parametrize(("files", "patch", "once", "kind"), SENT_AGAIN)
def test_a_repaired_patch_sent_again_is_already_applied(
        files: dict[str, bytes], patch: str, once: dict[str, bytes], kind: str,
        tmp_path: Path) -> None:
    tree(tmp_path, files)
    first = apply(tmp_path, patch)
    assert not isinstance(first, PatchtxError), first.message
    assert [repair.kind for repair in first.plan.repairs] == [kind]
    assert contents(tmp_path) == once
    again = apply(tmp_path, patch)
    assert isinstance(again, PatchtxError) and again.kind == "already_applied", again
    assert contents(tmp_path) == once
    skipped = apply(tmp_path, patch, skip_applied=True)
    assert not isinstance(skipped, PatchtxError), skipped.message
    assert contents(tmp_path) == once


# -- finding 3: a hunk is applied only where its new side stands where the hunk goes -------------
STALE = {"a.py": b"def f():\n    x = 3\n\ndef g():\n    x = 2\n    y = 1\n"}
STALE_PATCH = ("*** Begin Patch\n*** Update File: a.py\n@@ def f():\n-    x = 1\n+    x = 2\n"
               "@@ def g():\n-    y = 1\n+    y = 5\n*** End Patch\n")


def test_a_new_line_standing_elsewhere_is_no_applied_hunk(tmp_path: Path) -> None:
    tree(tmp_path, STALE)
    outcome = apply(tmp_path, STALE_PATCH)
    assert isinstance(outcome, PatchtxError), [r.kind for r in outcome.plan.repairs]
    assert outcome.kind == "context_not_found"
    assert "already applied" not in outcome.message
    assert contents(tmp_path) == STALE


def test_strict_does_not_call_a_stale_hunk_already_applied(tmp_path: Path) -> None:
    tree(tmp_path, STALE)
    outcome = apply(tmp_path, STALE_PATCH, strict=True)
    assert isinstance(outcome, PatchtxError)
    assert "already applied" not in outcome.message, outcome.message
    assert contents(tmp_path) == STALE


def test_a_hunk_in_place_beside_a_new_one_is_still_skipped(tmp_path: Path) -> None:
    # (The repair the finding must not lose: f's hunk stands where it goes, g's applies.)
    files = {"a.py": b"def f():\n    x = 2\n\ndef g():\n    x = 2\n    y = 1\n"}
    tree(tmp_path, files)
    outcome = apply(tmp_path, STALE_PATCH)
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert [r.kind for r in outcome.plan.repairs] == ["applied_hunk_skipped"]
    assert contents(tmp_path) == {"a.py": b"def f():\n    x = 2\n\ndef g():\n    x = 2\n    y = 5\n"}


# -- finding 4: a shell command around the patch in a JSON wrapper is refused, saying why ----------
DIFF = "--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-a\n+b\n"
SHELL_WRAPPED = [
    pytest.param(["bash", "-lc", f"cd sub && git apply <<'EOF'\n{DIFF}EOF"], id="cd"),
    pytest.param(["bash", "-lc", "patch -p0 <<'EOF'\n" + DIFF.replace("a/x.txt", "src/x.txt")
                  .replace("b/x.txt", "src/x.txt") + "EOF"], id="patch-p0"),
    pytest.param(["bash", "-lc", f"git -C sub apply <<'EOF'\n{DIFF}EOF"], id="git-C"),
    pytest.param(["bash", "-lc", f"git apply <<'EOF'\n{DIFF}EOF"], id="git-apply"),
    pytest.param(["sh", "-c", f"echo first\n{DIFF}"], id="text-before"),
    pytest.param(["git", "apply", "-p0", DIFF], id="options-beside"),
]


@pytest.mark.parametrize("command", SHELL_WRAPPED)
def test_a_shell_command_around_the_patch_is_refused(command: list[str], tmp_path: Path) -> None:
    files = {"x.txt": b"a\n", "sub/x.txt": b"a\n", "src/x.txt": b"a\n"}
    tree(tmp_path, files)
    outcome = apply(tmp_path, json.dumps({"command": command}))
    assert isinstance(outcome, PatchtxError), [r.kind for r in outcome.plan.repairs]
    assert "Nothing was changed" in outcome.message
    assert "shell command" in outcome.message or "command line" in outcome.message, outcome.message
    assert contents(tmp_path) == files


def test_the_apply_patch_command_and_heredoc_are_still_unwrapped(tmp_path: Path) -> None:
    patch = "*** Begin Patch\n*** Update File: x.txt\n@@\n-a\n+b\n*** End Patch\n"
    for command in (["apply_patch", patch], ["bash", "-lc", f"apply_patch <<'EOF'\n{patch}EOF"]):
        tree(tmp_path, {"x.txt": b"a\n"})
        outcome = apply(tmp_path, json.dumps({"command": command}))
        assert not isinstance(outcome, PatchtxError), outcome.message
        assert contents(tmp_path) == {"x.txt": b"b\n"}


# -- finding 7: a patch cut off is not taken as whole ----------------------------------------------
CFG = b'TIMEOUT = 30\nRETRIES = 3\nHOSTS = ["a"]\nDEBUG = False\n'
MAIN = b'print("v1")\n'
WHOLE = ('*** Begin Patch\n*** Update File: cfg.py\n@@\n-TIMEOUT = 30\n+TIMEOUT = 60\n RETRIES = 3\n'
         '-HOSTS = ["a"]\n+HOSTS = ["a", "b"]\n DEBUG = False\n*** Update File: main.py\n@@\n'
         '-print("v1")\n+print("v2")\n*** End Patch\n')


def test_a_patch_cut_after_a_context_line_is_refused_naming_the_cut(tmp_path: Path) -> None:
    cut = WHOLE[: WHOLE.index(" RETRIES = 3\n") + len(" RETRIES = 3\n")]
    tree(tmp_path, {"cfg.py": CFG, "main.py": MAIN})
    outcome = apply(tmp_path, cut)
    assert isinstance(outcome, PatchtxError), [r.kind for r in outcome.plan.repairs]
    assert "cut off" in outcome.message and "RETRIES = 3" in outcome.message, outcome.message
    assert contents(tmp_path) == {"cfg.py": CFG, "main.py": MAIN}


WRAPPERS = [
    pytest.param(lambda text: f"```\n{text}```\n", id="code_fence"),
    pytest.param(lambda text: f"```diff\n{text}```", id="code_fence_diff"),
    pytest.param(lambda text: json.dumps({"input": text}), id="json_wrapper"),
    pytest.param(lambda text: json.dumps(text.rstrip("\n")), id="json_string"),
    pytest.param(lambda text: json.dumps({"command": ["bash", "-lc", f"apply_patch <<'EOF'\n{text}EOF"]}),
                 id="heredoc_in_json"),
]


@pytest.mark.parametrize("wrap", WRAPPERS)
def test_a_patch_closed_by_its_wrapper_after_an_unchanged_line_is_whole(wrap: object,
                                                                        tmp_path: Path) -> None:
    # Its last line is a context line, which the file must have where its section goes: a cut
    # inside it leaves another line (refused), so what is there is whole.
    tree(tmp_path, {"cfg.py": CFG, "main.py": MAIN})
    whole = WHOLE.replace('+print("v2")\n', '+print("v2")\n print("v1 done")\n')
    (tmp_path / "main.py").write_bytes(MAIN + b'print("v1 done")\n')
    outcome = apply(tmp_path, wrap(whole.replace("*** End Patch\n", "")))  # type: ignore[operator]
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert "missing_end_marker" in [r.kind for r in outcome.plan.repairs]
    assert contents(tmp_path) == {"cfg.py": b'TIMEOUT = 60\nRETRIES = 3\nHOSTS = ["a", "b"]\n'
                                            b'DEBUG = False\n', "main.py": b'print("v2")\nprint("v1 done")\n'}


@pytest.mark.parametrize("wrap", WRAPPERS)
@pytest.mark.parametrize("cut", ['+print("v2")\n', '+print("v', '-print("v1")\n'],
                         ids=["after-an-added-line", "inside-an-added-line", "after-a-removed-line"])
def test_a_patch_without_its_end_line_ending_in_a_change_is_refused_whatever_wrapper_closes_it(
        wrap: object, cut: str, tmp_path: Path) -> None:
    # Issue 37, item 4: '```diff' / Begin / Update / '@@' / '-keep' / '+kee' / '```' wrote 'kee':
    # a wrapper closed around a cut text (a client completing a cut tool call) shows nothing.
    tree(tmp_path, {"cfg.py": CFG, "main.py": MAIN})
    text = WHOLE[: WHOLE.index(cut) + len(cut)].rstrip("\n") + "\n"
    outcome = apply(tmp_path, wrap(text))  # type: ignore[operator]
    assert isinstance(outcome, PatchtxError), [r.kind for r in outcome.plan.repairs]
    assert outcome.kind == "parse_error" and "cut off" in outcome.message, outcome.message
    assert contents(tmp_path) == {"cfg.py": CFG, "main.py": MAIN}


def test_the_issues_cut_patch_in_a_fence_is_refused(tmp_path: Path) -> None:
    tree(tmp_path, {"k.txt": b"keep\n"})
    outcome = apply(tmp_path, "```diff\n*** Begin Patch\n*** Update File: k.txt\n@@\n-keep\n+kee\n```\n")
    assert isinstance(outcome, PatchtxError) and "may have been cut off after patch line 5" in outcome.message
    assert contents(tmp_path) == {"k.txt": b"keep\n"}


@pytest.mark.parametrize("wrap", [lambda text: text, lambda text: f"```diff\n{text}```\n"],
                         ids=["bare", "code_fence"])
def test_a_unified_hunk_without_counts_ending_the_text_in_a_change_is_refused(
        wrap: object, tmp_path: Path) -> None:
    # A unified diff has no End line: a hunk with counts shows a cut (it disagrees with them);
    # one without ('@@ ... @@') must end with an unchanged line, or prose after it.
    tree(tmp_path, {"k.txt": b"keep\nx\n"})
    cut = "--- a/k.txt\n+++ b/k.txt\n@@ ... @@\n-keep\n+kee\n"
    outcome = apply(tmp_path, wrap(cut))  # type: ignore[operator]
    assert isinstance(outcome, PatchtxError) and "may have been cut off" in outcome.message
    assert contents(tmp_path) == {"k.txt": b"keep\nx\n"}
    for whole in (cut + " x\n", cut + "\nThat is the fix.\n"):
        assert not isinstance(apply(tmp_path, wrap(whole)), PatchtxError)  # type: ignore[operator]
        assert contents(tmp_path) == {"k.txt": b"kee\nx\n"}
        tree(tmp_path, {"k.txt": b"keep\nx\n"})


# -- finding 12: one true sentence about patches partly applied -----------------------------------
def test_partly_applied_within_one_file_and_across_files_as_documented(tmp_path: Path) -> None:
    tree(tmp_path, {"a.txt": b"one\ntwo\nthree\nfour\nfive\nsix\n", "b.txt": b"B\n"})
    within = ("*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n@@\n five\n-six\n"
              "+SIX\n*** End Patch\n")
    assert not isinstance(apply(tmp_path, within.replace("@@\n five\n-six\n+SIX\n", "")), PatchtxError)
    skipped = apply(tmp_path, within)
    assert not isinstance(skipped, PatchtxError), skipped.message
    assert [r.kind for r in skipped.plan.repairs] == ["applied_hunk_skipped"]
    assert isinstance(apply(tmp_path, within, strict=True), PatchtxError)
    across = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-TWO\n+2\n*** Update File: b.txt\n@@\n"
              "-B\n+C\n*** End Patch\n")
    assert not isinstance(apply(tmp_path, across.split("*** Update File: b.txt")[0]
                                + "*** End Patch\n"), PatchtxError)
    refused = apply(tmp_path, across)
    assert isinstance(refused, PatchtxError) and refused.kind == "partly_applied"
    option = next(declared.option for declared in OPTIONS if declared.name == "skip_applied")
    described = str(option.tool)
    assert "applied_hunk_skipped" in described and "partly_applied" in described, described
    table = (Path(__file__).resolve().parents[2] / "docs" / "format.md").read_text(encoding="utf-8")
    row = next(line for line in table.splitlines() if line.startswith("| a diff that is already applied"))
    assert "applied_hunk_skipped" in row, row
