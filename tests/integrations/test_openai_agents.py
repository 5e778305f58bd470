"""PatchtxEditor under the OpenAI Agents SDK, run offline with the SDK's own ScriptedModel.

Each scripted model turn emits real ``apply_patch_call`` items; the SDK's runner executes them
through the editor and feeds ``apply_patch_call_output`` items back to the next model call, which
is where these tests read what the model was told.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, ApplyPatchOperation, ApplyPatchTool, RunConfig, RunContextWrapper, Runner
from agents.result import RunResult
from agents.testing import ScriptedModel, assistant_message
from openai.types.responses import ResponseApplyPatchToolCall
from openai.types.responses.response_apply_patch_tool_call import (
    OperationCreateFile,
    OperationDeleteFile,
    OperationUpdateFile,
)

from patchtx.agents.openai_agents import PatchtxEditor
from patchtx.model import Plan
from patchtx.plan.approval import ApprovalPolicy, Decision, Verdict

APPROVE_EVERYTHING = ApprovalPolicy(ask_on_delete=False, ask_on_move=False)
OFFLINE = RunConfig(tracing_disabled=True)


def tree_files(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` except patchtx's own state folder."""
    files = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".patchtx"]
        for name in filenames:
            path = Path(dirpath, name)
            files[path.relative_to(root).as_posix()] = path.read_bytes()
    return files


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src/app.py").write_text("def main():\n    return 1\n")
    (root / "notes.txt").write_text("keep me\n")
    (root / "gone.txt").write_text("old\n")
    return root


def create(path: str, diff: str) -> OperationCreateFile:
    return OperationCreateFile(type="create_file", path=path, diff=diff)


def update(path: str, diff: str) -> OperationUpdateFile:
    return OperationUpdateFile(type="update_file", path=path, diff=diff)


def delete(path: str) -> OperationDeleteFile:
    return OperationDeleteFile(type="delete_file", path=path)


class Session:
    """An agent whose model emits the given turns of apply_patch operations, then says done."""

    def __init__(self, tool: ApplyPatchTool, *turns: Sequence[Any]) -> None:
        self.calls = 0
        steps: list[Any] = [[self._call(op) for op in turn] for turn in turns]
        self.model = ScriptedModel([*steps, [assistant_message("done")]])
        self.agent = Agent(name="coder", model=self.model, tools=[tool])

    def _call(self, operation: Any) -> ResponseApplyPatchToolCall:
        self.calls += 1
        return ResponseApplyPatchToolCall(id=f"apc_{self.calls}", call_id=f"call_{self.calls}",
                                          operation=operation, status="completed", type="apply_patch_call")

    def run(self, context: Any = None) -> RunResult:
        return Runner.run_sync(self.agent, "edit the files", context=context, run_config=OFFLINE)

    def resume(self, result: RunResult, *, approve: bool) -> RunResult:
        state = result.to_state()
        for item in result.interruptions:
            state.approve(item) if approve else state.reject(item)
        return Runner.run_sync(self.agent, state, run_config=OFFLINE)

    def outputs(self) -> dict[str, tuple[str, str]]:
        """call_id → (status, output) of every apply_patch result the model was last sent."""
        last = self.model.last_call
        assert last is not None
        return {item["call_id"]: (item["status"], item.get("output", ""))
                for item in last.input
                if isinstance(item, dict) and item.get("type") == "apply_patch_call_output"}


def test_agent_run_creates_updates_and_deletes(workspace: Path) -> None:
    before = tree_files(workspace)
    session = Session(PatchtxEditor(workspace, approval=APPROVE_EVERYTHING).tool(), [
        create("docs/notes.md", "+# Notes\n+\n+- first\n"),
        update("src/app.py", "@@ def main():\n-    return 1\n+    return 2\n"),
        delete("gone.txt"),
    ])
    result = session.run()

    assert result.final_output == "done" and not result.interruptions
    session.model.assert_complete()
    expected = dict(before)
    del expected["gone.txt"]
    expected["docs/notes.md"] = b"# Notes\n\n- first\n"  # every added line ends with a newline, as in Codex
    expected["src/app.py"] = b"def main():\n    return 2\n"
    assert tree_files(workspace) == expected
    assert session.outputs() == {
        "call_1": ("completed", "Success. Updated the following files:\nA docs/notes.md\n"),
        "call_2": ("completed", "Success. Updated the following files:\nM src/app.py\n"),
        "call_3": ("completed", "Success. Updated the following files:\nD gone.txt\n"),
    }


def test_failing_update_changes_nothing_and_the_model_can_retry(workspace: Path) -> None:
    before = tree_files(workspace)
    session = Session(PatchtxEditor(workspace).tool(),
                      [update("src/app.py", "@@ def main():\n-    return 100\n+    return 2\n")])
    session.run()
    status, output = session.outputs()["call_1"]

    assert tree_files(workspace) == before
    assert status == "failed"
    assert output.startswith("Failed to find expected lines in ")
    assert "Nothing was changed." in output
    # The hint that lets the model fix the diff in one try: the file's real line.
    assert 'line 2: "    return 1" (the patch has "    return 100")' in output
    assert "(Patch line 3 is the first line of this operation's diff.)" in output

    retry = Session(PatchtxEditor(workspace).tool(),
                    [update("src/app.py", "@@ def main():\n-    return 100\n+    return 2\n")],
                    [update("src/app.py", "@@ def main():\n-    return 1\n+    return 2\n")])
    retry.run()
    assert retry.outputs()["call_2"][0] == "completed"
    assert (workspace / "src/app.py").read_text() == "def main():\n    return 2\n"


def test_an_edit_that_breaks_the_syntax_is_refused_as_on_every_agent_surface(workspace: Path) -> None:
    before = tree_files(workspace)
    session = Session(PatchtxEditor(workspace).tool(),
                      [update("src/app.py", "@@ def main():\n-    return 1\n+    return (1\n")])
    session.run()
    status, output = session.outputs()["call_1"]
    assert status == "failed" and "syntax error" in output and "Nothing was changed." in output
    assert tree_files(workspace) == before
    # the host may turn the guard off, as on the other agent surfaces
    Session(PatchtxEditor(workspace, syntax="off").tool(),
            [update("src/app.py", "@@ def main():\n-    return 1\n+    return (1\n")]).run()
    assert (workspace / "src/app.py").read_text() == "def main():\n    return (1\n"


def test_ambiguous_context_is_refused_instead_of_editing_the_first_match(workspace: Path) -> None:
    (workspace / "twice.txt").write_text("x = 1\ny\nx = 1\n")
    session = Session(PatchtxEditor(workspace).tool(), [update("twice.txt", "-x = 1\n+x = 2\n")])
    session.run()
    status, output = session.outputs()["call_1"]
    assert status == "failed" and "match at file lines 1, 3" in output
    assert (workspace / "twice.txt").read_text() == "x = 1\ny\nx = 1\n"


@pytest.mark.parametrize("path", ["../outside.txt", "{outside}/outside.txt", "escape/outside.txt",
                                  ".git/config", "src/../../outside.txt"])
def test_path_outside_the_root_is_refused(workspace: Path, path: str) -> None:
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    (workspace / "escape").symlink_to(outside, target_is_directory=True)
    before, before_outside = tree_files(workspace), tree_files(workspace.parent)
    path = path.format(outside=outside)
    session = Session(PatchtxEditor(workspace, approval=APPROVE_EVERYTHING).tool(),
                      [create(path, "+pwned\n")])
    session.run()
    status, output = session.outputs()["call_1"]

    assert status == "failed"
    assert output.startswith("Refusing path ") and "Nothing was changed." in output
    assert tree_files(workspace) == before and tree_files(workspace.parent) == before_outside


def test_ask_interrupts_the_run_until_a_human_approves(workspace: Path) -> None:
    session = Session(PatchtxEditor(workspace).tool(), [delete("gone.txt")])
    paused = session.run()

    [pending] = paused.interruptions
    assert pending.tool_name == "apply_patch"
    assert (workspace / "gone.txt").exists()  # default policy: deletes ask, nothing done yet

    finished = session.resume(paused, approve=True)
    assert finished.final_output == "done"
    assert not (workspace / "gone.txt").exists()
    assert session.outputs()["call_1"][0] == "completed"


def test_a_human_rejection_writes_nothing(workspace: Path) -> None:
    before = tree_files(workspace)
    session = Session(PatchtxEditor(workspace).tool(), [delete("gone.txt")])
    finished = session.resume(session.run(), approve=False)

    assert finished.final_output == "done"
    assert tree_files(workspace) == before
    assert session.outputs()["call_1"] == ("failed", "Tool execution was not approved.")


def test_approved_edits_run_without_a_prompt_next_to_an_asked_one(workspace: Path) -> None:
    session = Session(PatchtxEditor(workspace).tool(),
                      [update("notes.txt", "-keep me\n+kept\n"), delete("gone.txt")])
    paused = session.run()
    assert len(paused.interruptions) == 1 and paused.interruptions[0].raw_item["call_id"] == "call_2"
    session.resume(paused, approve=False)
    assert (workspace / "notes.txt").read_text() == "kept\n"
    assert (workspace / "gone.txt").exists()


def test_reject_verdict_fails_the_operation_without_asking(workspace: Path) -> None:
    before = tree_files(workspace)
    policy = ApprovalPolicy(reject_paths=("secrets/",))
    session = Session(PatchtxEditor(workspace, approval=policy).tool(),
                      [create("secrets/token", "+hunter2\n")])
    result = session.run()

    assert not result.interruptions
    status, output = session.outputs()["call_1"]
    assert status == "failed"
    assert output.startswith("patch rejected: secrets/token matches the forbidden pattern 'secrets/'.")
    assert tree_files(workspace) == before


def test_ask_without_an_sdk_approval_step_fails_closed(workspace: Path) -> None:
    editor = PatchtxEditor(workspace)
    session = Session(ApplyPatchTool(editor=editor), [delete("gone.txt")])
    result = session.run()

    assert not result.interruptions
    status, output = session.outputs()["call_1"]
    assert status == "failed"
    assert "needs approval (it deletes files), and this apply_patch tool has no approval step" in output
    assert (workspace / "gone.txt").exists()


def test_a_verdict_that_turned_to_ask_after_the_check_is_not_applied(workspace: Path) -> None:
    editor = PatchtxEditor(workspace, approval=ApprovalPolicy(max_auto_bytes=100))
    operation = ApplyPatchOperation(type="update_file", path="notes.txt", diff="-keep me\n+kept\n")
    assert editor.needs_approval(RunContextWrapper(context=None), operation, "call_1") is False
    grown = "keep me\n" + "padding line\n" * 20
    (workspace / "notes.txt").write_text(grown)

    result = editor.update_file(operation)
    assert result.status == "failed"
    assert result.output is not None and "now needs approval" in result.output
    assert (workspace / "notes.txt").read_text() == grown


@pytest.mark.parametrize("operation", [
    create("a.txt", "+ok\n*** Add File: evil.txt\n+evil\n"),
    create("a.txt", "+ok\n  *** Add File: evil.txt\n+evil\n"),  # indented: the parser still reads a header
    update("notes.txt", "-keep me\n+kept\n*** Delete File: gone.txt\n"),
    update("notes.txt", "-keep me\n+kept\n*** End Patch\n*** Begin Patch\n*** Delete File: gone.txt\n"),
    create("a.txt\n*** Delete File: gone.txt", "+ok\n"),
])
def test_an_operation_cannot_touch_another_file(workspace: Path, operation: Any) -> None:
    before = tree_files(workspace)
    session = Session(PatchtxEditor(workspace, approval=APPROVE_EVERYTHING).tool(), [operation])
    session.run()
    status, output = session.outputs()["call_1"]
    assert status == "failed" and "Nothing was changed." in output
    assert tree_files(workspace) == before


def test_smuggling_attempts_are_explained_to_the_model(workspace: Path) -> None:
    editor = PatchtxEditor(workspace, approval=APPROVE_EVERYTHING)
    marker = editor.create_file(ApplyPatchOperation(type="create_file", path="a.txt",
                                                    diff="+ok\n*** Delete File: gone.txt\n"))
    assert marker.output is not None and marker.output.startswith(
        "Invalid diff for 'a.txt' on line 2: '*** Delete File: gone.txt' is a patch envelope marker")
    newline = editor.create_file(ApplyPatchOperation(type="create_file", path="a\n*** Delete File: gone.txt",
                                                     diff="+ok\n"))
    assert newline.output is not None and "contains a line break" in newline.output
    assert (workspace / "gone.txt").exists() and not (workspace / "a.txt").exists()


def test_line_endings_and_file_mode_are_kept(workspace: Path) -> None:
    script = workspace / "run.sh"
    script.write_bytes(b"#!/bin/sh\r\necho one\r\n")
    script.chmod(0o755)
    editor = PatchtxEditor(workspace)
    result = editor.update_file(ApplyPatchOperation(type="update_file", path="run.sh",
                                                    diff=" #!/bin/sh\n-echo one\n+echo two\n"))
    assert result.status == "completed"
    assert script.read_bytes() == b"#!/bin/sh\r\necho two\r\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o755


def test_move_to_renames_in_one_transaction(workspace: Path) -> None:
    operation = ApplyPatchOperation(type="update_file", path="notes.txt", diff="-keep me\n+moved\n",
                                    move_to="archive/notes.txt")
    asked = PatchtxEditor(workspace).update_file(operation)  # default policy: moves ask
    assert asked.status == "failed" and (workspace / "notes.txt").exists()

    result = PatchtxEditor(workspace, approval=APPROVE_EVERYTHING).apply(operation)
    assert result.committed and result.transaction_id and result.summary == "A 0, M 0, D 0, R 1"
    assert not (workspace / "notes.txt").exists()
    assert (workspace / "archive/notes.txt").read_text() == "moved\n"


def test_create_refuses_to_overwrite_unless_allowed(workspace: Path) -> None:
    operation = ApplyPatchOperation(type="create_file", path="notes.txt", diff="+new\n")
    refused = PatchtxEditor(workspace).create_file(operation)
    assert refused.status == "failed" and refused.output is not None
    assert "already exists" in refused.output
    assert (workspace / "notes.txt").read_text() == "keep me\n"

    assert PatchtxEditor(workspace, allow_overwrite=True).create_file(operation).status == "completed"
    assert (workspace / "notes.txt").read_text() == "new\n"


def test_a_method_refuses_an_operation_of_another_type(workspace: Path) -> None:
    result = PatchtxEditor(workspace).create_file(ApplyPatchOperation(type="delete_file", path="gone.txt"))
    assert result.status == "failed" and (workspace / "gone.txt").exists()


def test_intent_is_taken_from_the_run_context(workspace: Path) -> None:
    seen: list[str | None] = []

    def recording_hook(plan: Plan) -> Verdict:
        seen.append(plan.intent)
        return Verdict(Decision.APPROVE)

    def intent(operation: ApplyPatchOperation) -> str | None:
        assert operation.ctx_wrapper is not None
        return f"{operation.ctx_wrapper.context['ticket']}: {operation.type} {operation.path}"

    editor = PatchtxEditor(workspace, approval=recording_hook, intent=intent)
    Session(editor.tool(), [create("a.txt", "+a\n")]).run(context={"ticket": "BUG-7"})
    # Once when the SDK checks whether to ask, once when the editor runs.
    assert seen == ["BUG-7: create_file a.txt", "BUG-7: create_file a.txt"]
    assert (workspace / "a.txt").read_text() == "a\n"


def test_importing_patchtx_and_the_module_does_not_need_the_sdk(workspace: Path) -> None:
    code = f"""
import sys
sys.modules["agents"] = None  # any import of the SDK now fails
from types import SimpleNamespace
import patchtx
from patchtx.agents.openai_agents import PatchtxEditor
editor = PatchtxEditor({str(workspace)!r})
op = SimpleNamespace(type="update_file", path="notes.txt", diff="-keep me\\n+kept\\n", move_to=None)
assert editor.plan_operation(op).summary == "A 0, M 1, D 0, R 0"
try:
    editor.tool()
except ImportError as error:
    assert "pip install 'patchtx[agents]'" in str(error), error
else:
    raise AssertionError("tool() needs the SDK")
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_an_empty_create_file_makes_an_empty_file_as_the_sdks_apply_diff_does(workspace: Path) -> None:
    from agents import apply_diff

    assert apply_diff("", "", mode="create") == ""  # what the SDK itself makes of it
    editor = PatchtxEditor(workspace, approval=APPROVE_EVERYTHING)
    created = editor.create_file(ApplyPatchOperation(type="create_file", path="pkg/__init__.py", diff=""))
    assert created.status == "completed", created.output
    assert (workspace / "pkg" / "__init__.py").read_bytes() == b""
    blank = editor.create_file(ApplyPatchOperation(type="create_file", path="empty.txt", diff="\n"))
    assert blank.status == "completed" and (workspace / "empty.txt").read_bytes() == b""
    update = editor.update_file(ApplyPatchOperation(type="update_file", path="src/app.py", diff=""))
    assert update.status == "failed" and "the diff is empty" in (update.output or "")
