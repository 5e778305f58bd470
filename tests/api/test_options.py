"""The same options on every entry point: the library (``apply_patch``, ``plan_patch`` then
``apply_plan``, ``Transaction``), the command line (``patchtx apply``), ``patchtx mcp`` (its command
line and its tools), function-tool calls (``run_tool_call``) and the OpenAI Agents editor.

Each host option is tried on every surface that takes it, without and with the option, on a patch
whose outcome the option decides; the commit options are checked where they reach the transaction
manager. The per-call options (``skip_applied``, ``extract``, ``strip``, ``reverse``, ``intent``)
are tried on every surface whose caller sends them (not the Agents editor: the SDK's operation
carries none)."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import pydoc
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

import patchtx
from patchtx import history, options
from patchtx.agents.mcp_server import build_server, server_arguments
from patchtx.agents.openai_agents import PatchtxEditor
from patchtx.agents.tool_call import run_tool_call
from patchtx.cli import commands
from patchtx.options import DEFAULT_COMMIT, CommitOptions, PlanOptions
from patchtx.plan.approval import Decision, Verdict

Options = dict[str, Any]

FILES = {"a.txt": "one\n", "b.txt": "two\n", "dup.txt": "x\nx\n"}


def envelope(*lines: str) -> str:
    return "\n".join(("*** Begin Patch", *lines, "*** End Patch")) + "\n"


UPDATE_A = envelope("*** Update File: a.txt", "@@", "-one", "+ONE")

# -- the surfaces ---------------------------------------------------------------------------------
# Each runs ``patch`` in ``root`` with the host's options ``host`` and the caller's options ``call``
# and answers "ok" or the error's kind.


def _kind(run: Callable[[], object]) -> str:
    try:
        run()
    except patchtx.PatchtxError as error:
        return error.kind
    return "ok"


def via_apply_patch(root: Path, patch: str, host: Options, call: Options) -> str:
    return _kind(lambda: patchtx.apply_patch(patch, root, **host, **call))


def via_plan_then_apply_plan(root: Path, patch: str, host: Options, call: Options) -> str:
    plan_keywords = {k: v for k, v in host.items() if k in options.PLAN_KEYWORDS}
    # The host's ceiling goes to the commit too: its gate checks the plan against it (issue 24).
    return _kind(lambda: patchtx.apply_plan(patchtx.plan_patch(patch, root, **plan_keywords, **call), **host))


def via_transaction(root: Path, patch: str, host: Options, call: Options) -> str:
    per_patch = {k: v for k, v in call.items() if k in ("extract", "strip", "reverse")}
    per_transaction = {k: v for k, v in call.items() if k not in per_patch}

    def run() -> None:
        with patchtx.Transaction(root, **host, **per_transaction) as tx:
            tx.apply_patch(patch, **per_patch)

    return _kind(run)


_FLAGS = {"allow_overwrite": "--allow-overwrite", "allow_delete": "--no-delete", "allow_move": "--no-move",
          "first_match": "--first-match", "protected": "--protect", "max_files": "--max-files",
          "max_bytes": "--max-bytes", "max_patch_bytes": "--max-patch-bytes",
          "allow_policy_edit": "--allow-policy-edit", "skip_applied": "--skip-applied",
          "durable": "--no-fsync", "lock_timeout": "--lock-timeout", "history_count": "--history-count",
          "history_bytes": "--history-bytes", "intent": "--intent", "extract": "--extract",
          "strip": "-p", "reverse": "-R"}


def command_line(given: Options) -> list[str]:
    """The flags of ``patchtx apply`` (and ``patchtx mcp``) that say ``given``."""
    words: list[str] = []
    for name, value in given.items():
        flag = _FLAGS[name]
        if isinstance(value, bool):
            # The flags that turn something off (--no-delete, --no-fsync) say False.
            assert value is (not flag.startswith("--no-")), (name, value)
            words.append(flag)
        elif isinstance(value, tuple):
            for item in value:
                words += [flag, item]
        else:
            words += [flag, str(value)]
    return words


def via_command_line(root: Path, patch: str, host: Options, call: Options, command: str = "apply") -> str:
    patch_file = root.parent / "p.patch"
    patch_file.write_text(patch)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = commands.main([command, "--json", "--root", str(root), *command_line(host),
                         *command_line(call), str(patch_file)])
    payload = json.loads(out.getvalue())
    assert code == (0 if payload["ok"] else 1)
    return "ok" if payload["ok"] else str(payload["error"]["kind"])


def via_check(root: Path, patch: str, host: Options, call: Options) -> str:
    return via_command_line(root, patch, host, call, "check")


def via_mcp(root: Path, patch: str, host: Options, call: Options, tool: str = "apply_patch") -> str:
    served_root, host_options = server_arguments(["--root", str(root), *command_line(host)])
    server = build_server(served_root, host_options)
    # The agent asks for every permission: the host's options alone decide.
    arguments = {"patch": patch, "allow_delete": True, "allow_move": True, **call}
    if tool == "preview_patch":
        arguments.pop("intent", None)  # a preview records nothing
    result = anyio.run(server.call_tool, tool, arguments)
    payload = result.structured_content
    return "ok" if payload["ok"] else str(payload["error"]["kind"])


def via_mcp_preview(root: Path, patch: str, host: Options, call: Options) -> str:
    return via_mcp(root, patch, host, call, "preview_patch")


def via_tool_call(root: Path, patch: str, host: Options, call: Options) -> str:
    outcome = run_tool_call({"input": patch, "allow_delete": True, "allow_move": True, **call}, str(root),
                            host=host)
    return "ok" if outcome.ok else str(outcome.payload["error"]["kind"])


def _operation(patch: str) -> SimpleNamespace:
    """The Agents SDK operation that a one-file patch is."""
    lines = patch.splitlines()[1:-1]
    kind, _, path = lines[0][4:].partition(" File: ")
    move_to = lines[1].removeprefix("*** Move to: ") if lines[1:2] and lines[1].startswith("*** Move to: ") else None
    body = lines[2 if move_to else 1:]
    return SimpleNamespace(type={"Add": "create_file", "Update": "update_file", "Delete": "delete_file"}[kind],
                           path=path, diff="\n".join(body) + "\n" if body else None, move_to=move_to)


def via_agents_editor(root: Path, patch: str, host: Options, call: Options) -> str:
    assert not call, "the SDK's operation carries no options"
    editor = PatchtxEditor(root, approval=lambda plan: Verdict(Decision.APPROVE), **host)
    return _kind(lambda: editor.apply(_operation(patch)))  # type: ignore[arg-type]


SURFACES: dict[str, Callable[[Path, str, Options, Options], str]] = {
    "apply_patch": via_apply_patch,
    "plan_patch+apply_plan": via_plan_then_apply_plan,
    "Transaction": via_transaction,
    "patchtx apply": via_command_line,
    "patchtx mcp": via_mcp,
    "run_tool_call": via_tool_call,
    "PatchtxEditor": via_agents_editor,
}
# Where a patch is only planned: refusals are the same, nothing is committed.
PLANNING_SURFACES = {**SURFACES, "patchtx check": via_check, "patchtx mcp preview_patch": via_mcp_preview}
CALLERS_SEND_OPTIONS = [name for name in PLANNING_SURFACES if name != "PatchtxEditor"]


@dataclass
class Case:
    options: Options
    patch: str
    without: str
    """The outcome without the option."""
    with_it: str
    files: dict[str, str] = field(default_factory=dict)

    def id(self) -> str:
        return ",".join(f"{k}={v}" for k, v in self.options.items()) + ("+workspace" if self.files else "")


HOST_CASES = [
    Case({"allow_overwrite": True}, envelope("*** Add File: a.txt", "+new"), "file_exists", "ok"),
    Case({"allow_delete": False}, envelope("*** Delete File: b.txt"), "ok", "policy_violation"),
    Case({"allow_move": False}, envelope("*** Update File: b.txt", "*** Move to: c.txt", "@@", "-two", "+TWO"),
         "ok", "policy_violation"),
    Case({"first_match": True}, envelope("*** Update File: dup.txt", "@@", "-x", "+y"), "ambiguous_context", "ok"),
    Case({"protected": ("a.*",)}, UPDATE_A, "ok", "policy_violation"),
    Case({"max_files": 0}, UPDATE_A, "ok", "policy_violation"),
    Case({"max_bytes": 3}, UPDATE_A, "ok", "policy_violation"),
    Case({"max_patch_bytes": 20}, UPDATE_A, "ok", "policy_violation"),
    Case({"allow_policy_edit": True}, envelope("*** Add File: .patchtx.toml", "+max-files = 9"),
         "policy_violation", "ok"),
    # The workspace only tightens: the host's permission does not lift its refusal.
    Case({"allow_overwrite": True}, envelope("*** Add File: a.txt", "+new"), "file_exists", "file_exists",
         files={".patchtx.toml": "allow-overwrite = false\n"}),
]

CALL_CASES = [
    Case({"skip_applied": True}, envelope("*** Update File: a.txt", "@@", "-zero", "+one"), "already_applied", "ok"),
    Case({"extract": True}, "Here is the fix:\n\n```\n" + UPDATE_A + "```\n\nDone.", "parse_error", "ok"),
    Case({"strip": 2}, "--- x/y/a.txt\n+++ x/y/a.txt\n@@ -1 +1 @@\n-one\n+ONE\n", "file_not_found", "ok"),
    # (forwards, this diff's result is already in the file)
    Case({"reverse": True}, "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-ONE\n+one\n", "already_applied", "ok"),
]


def make_tree(tmp_path: Path, extra: dict[str, str], name: str = "ws") -> Path:
    root = tmp_path / name
    root.mkdir()
    for path, text in {**FILES, **extra}.items():
        (root / path).write_text(text)
    return root


@pytest.mark.parametrize("case", HOST_CASES, ids=Case.id)
@pytest.mark.parametrize("surface", PLANNING_SURFACES)
def test_every_surface_honours_every_host_option(surface: str, case: Case, tmp_path: Path) -> None:
    run = PLANNING_SURFACES[surface]
    assert run(make_tree(tmp_path, case.files, "without"), case.patch, {}, {}) == case.without
    assert run(make_tree(tmp_path, case.files, "with"), case.patch, case.options, {}) == case.with_it


@pytest.mark.parametrize("case", CALL_CASES, ids=Case.id)
@pytest.mark.parametrize("surface", CALLERS_SEND_OPTIONS)
def test_every_caller_can_send_every_per_call_option(surface: str, case: Case, tmp_path: Path) -> None:
    run = PLANNING_SURFACES[surface]
    assert run(make_tree(tmp_path, case.files, "without"), case.patch, {}, {}) == case.without
    assert run(make_tree(tmp_path, case.files, "with"), case.patch, {}, case.options) == case.with_it


@pytest.mark.parametrize("surface", [name for name in CALLERS_SEND_OPTIONS if name in SURFACES])
def test_every_caller_can_record_an_intent(surface: str, tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    assert SURFACES[surface](root, UPDATE_A, {}, {"intent": "shout the first line"}) == "ok"
    assert history.log(root)[0].intent == "shout the first line"


def test_the_agents_editor_records_its_intent(tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    editor = PatchtxEditor(root, approval=lambda plan: Verdict(Decision.APPROVE), intent="shout")
    editor.apply(_operation(UPDATE_A))  # type: ignore[arg-type]
    assert history.log(root)[0].intent == "shout"


# -- the commit options reach the transaction manager ---------------------------------------------

@pytest.fixture
def commits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """What every commit was asked for: durable, lock_timeout and the history limits."""
    import patchtx.api
    import patchtx.txn

    seen: list[dict[str, Any]] = []
    real = patchtx.txn.commit

    def spy(plan: Any, **keywords: Any) -> Any:
        keep = keywords["retention"]
        seen.append({"durable": keywords.get("durable", DEFAULT_COMMIT.durable),
                     "lock_timeout": keywords.get("lock_timeout", DEFAULT_COMMIT.lock_timeout),
                     "history_count": keep.count, "history_bytes": keep.max_bytes})
        return real(plan, **keywords)

    for module in (patchtx.txn, patchtx.api):  # (each binds the name on import; undo commits through api)
        monkeypatch.setattr(module, "commit", spy)
    yield seen


COMMIT_OPTIONS = {"durable": False, "lock_timeout": 2.5, "history_count": 3, "history_bytes": 1000}


def _undo_through_the_command_line(root: Path, given: Options) -> None:
    with contextlib.redirect_stdout(io.StringIO()):
        assert commands.main(["undo", "--root", str(root), *command_line(given)]) == 0


def _undo_through_mcp(root: Path, given: Options) -> None:
    served_root, host = server_arguments(["--root", str(root), "--undo", "any", *command_line(given)])
    newest = history.log(root)[0].transaction_id
    result = anyio.run(build_server(served_root, host).call_tool, "undo", {"transaction": newest})
    assert result.structured_content["ok"], result


def _undo_through_the_library(root: Path, given: Options) -> None:
    history.undo(root, **given)


UNDO_SURFACES = {"history.undo": _undo_through_the_library, "patchtx undo": _undo_through_the_command_line,
                 "patchtx mcp undo": _undo_through_mcp}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_surface_passes_the_commit_options_to_the_commit(surface: str, tmp_path: Path,
                                                               commits: list[dict[str, Any]]) -> None:
    assert SURFACES[surface](make_tree(tmp_path, {}, "defaults"), UPDATE_A, {}, {}) == "ok"
    assert SURFACES[surface](make_tree(tmp_path, {}, "given"), UPDATE_A, COMMIT_OPTIONS, {}) == "ok"
    defaults = CommitOptions()
    assert commits == [{name: getattr(defaults, name) for name in COMMIT_OPTIONS}, COMMIT_OPTIONS]


@pytest.mark.parametrize("surface", UNDO_SURFACES)
def test_every_undo_passes_the_commit_options_to_the_commit(surface: str, tmp_path: Path,
                                                            commits: list[dict[str, Any]]) -> None:
    root = make_tree(tmp_path, {})
    patchtx.apply_patch(UPDATE_A, root)
    UNDO_SURFACES[surface](root, COMMIT_OPTIONS)
    assert commits[1:] == [COMMIT_OPTIONS]
    assert (root / "a.txt").read_text() == "one\n"


def test_the_workspace_history_limits_apply_unless_a_caller_gives_its_own(
        tmp_path: Path, commits: list[dict[str, Any]]) -> None:
    root = make_tree(tmp_path, {".patchtx.toml": "history-count = 5\nhistory-bytes = 4096\n"})
    patchtx.apply_patch(UPDATE_A, root)
    patchtx.apply_patch(envelope("*** Update File: b.txt", "@@", "-two", "+TWO"), root, history_count=7)
    assert [(c["history_count"], c["history_bytes"]) for c in commits] == [(5, 4096), (7, 4096)]


# -- progress --------------------------------------------------------------------------------------

def test_a_transaction_reports_planning_and_commit_progress(tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    told: list[tuple[str, int, int]] = []
    with patchtx.Transaction(root, progress=lambda *step: told.append(step)) as tx:
        tx.apply_patch(envelope("*** Update File: a.txt", "@@", "-one", "+ONE",
                                "*** Update File: b.txt", "@@", "-two", "+TWO"))
    assert [step for step in told if step[0] == "planning"] == [("planning", 1, 2), ("planning", 2, 2)]
    assert ("writing", 2, 2) in told


def test_planning_progress_counts_each_path_once(tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    told: list[tuple[str, int, int]] = []
    patchtx.plan_patch(envelope("*** Update File: a.txt", "@@", "-one", "+ONE", "*** Update File: a.txt",
                                "@@", "-ONE", "+One", "*** Update File: b.txt", "*** Move to: c.txt", " two"),
                       root, progress=lambda *step: told.append(step))
    assert told == [("planning", 1, 3), ("planning", 2, 3), ("planning", 3, 3)]


# -- one definition of the keywords ----------------------------------------------------------------

@pytest.mark.parametrize(("call", "name"), [
    (lambda root: patchtx.apply_patch(UPDATE_A, root, allow_deletes=True), "apply_patch()"),
    (lambda root: patchtx.plan_patch(UPDATE_A, root, durable=False), "plan_patch()"),
    (lambda root: patchtx.plan_patch(UPDATE_A, root, dry_run=True), "plan_patch()"),
    (lambda root: patchtx.apply_plan(patchtx.plan_patch(UPDATE_A, root), extract=True), "apply_plan()"),
    (lambda root: patchtx.Transaction(root, lock=1.0), "Transaction()"),
    (lambda root: history.undo(root, extract=False), "undo()"),
    (lambda root: PatchtxEditor(root, durabel=False), "PatchtxEditor()"),
])
def test_an_option_a_surface_does_not_take_is_a_type_error(call: Callable[[Path], object], name: str,
                                                           tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    with pytest.raises(TypeError, match=rf"^{name.replace('(', '[(]').replace(')', '[)]')} got an unexpected"):
        call(root)
    assert {p.name for p in root.iterdir()} == set(FILES)  # nothing written


def test_the_typed_keywords_are_the_option_fields() -> None:
    """The keyword types that signatures use (for type checkers only) name exactly the fields."""
    tree = ast.parse(Path(options.__file__).read_text())
    declared = {node.name: [item.target.id for item in node.body
                            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)]
                for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    assert declared["PlanKeywords"] == list(PlanOptions.__annotations__)
    assert declared["CommitKeywords"] == list(CommitOptions.__annotations__)


def test_the_call_keywords_of_plan_and_apply_are_the_call_options_they_take() -> None:
    """``plan_patch`` and ``apply_patch`` take one ``PatchKeywords``: what a call asks of the
    table's ``CallOptions`` (``dry_run`` is apply_patch's own parameter; ``workspace_root`` a tool
    call's), and ``progress`` and ``cancel``, which watch the call. help() names each of them."""
    from patchtx import api

    tree = ast.parse(Path(api.__file__).read_text())
    (typed,) = (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name == "PatchKeywords")
    keys = {item.target.id for item in typed.body
            if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    assert keys == api.CALL_KEYWORDS == (
        set(options.CallOptions.__annotations__) - {"dry_run", "workspace_root"}) | {"progress", "cancel"}
    for function in (patchtx.plan_patch, patchtx.apply_patch):
        shown = pydoc.render_doc(function, renderer=pydoc.plaintext)
        assert all(f"``{name}``" in shown for name in keys), function


def test_plan_and_apply_read_a_patch_as_their_call_keywords_say(tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    diff = "--- a/a.txt\n+++ b/a.txt\n@@ -0,0 +1 @@\n+top\n"
    reply = f"Here it is:\n```diff\n{diff}```\n"
    told: list[tuple[str, int, int]] = []
    planned = patchtx.plan_patch(reply, root, extract=True, unidiff_zero=True, intent="why",
                                 progress=lambda *step: told.append(step))
    assert planned.intent == "why" and told == [("planning", 1, 1)]
    assert planned.changes[0].after == b"top\n" + (root / "a.txt").read_bytes()
    result = patchtx.apply_patch(diff.replace("a/", "x/a/").replace("b/", "y/b/"), root, strip=2,
                                 reverse=False, unidiff_zero=True, dry_run=True)
    assert result.dry_run and result.plan.changes[0].after == planned.changes[0].after
    with pytest.raises(patchtx.PatchtxError):  # without unidiff_zero, '@@ -0,0' fills an empty file
        patchtx.apply_patch(diff, root, dry_run=True)


# -- what an agent may not send ---------------------------------------------------------------------

HOST_ONLY = sorted(options.ALL_KEYWORDS - {"allow_delete", "allow_move", "skip_applied"})


@pytest.mark.parametrize("name", HOST_ONLY)
def test_a_function_tool_call_cannot_send_a_host_option(name: str, tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    value = True if name in ("allow_overwrite", "first_match", "allow_policy_edit", "durable") else 1
    outcome = run_tool_call({"input": UPDATE_A, name: value}, str(root))
    assert outcome.payload["error"]["kind"] == "invalid_arguments" and name in outcome.text
    assert (root / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("case", [c for c in HOST_CASES if not c.files and set(c.options) <= set(HOST_ONLY)],
                         ids=Case.id)
def test_a_host_option_sent_in_an_mcp_call_changes_nothing(case: Case, tmp_path: Path) -> None:
    # An argument the tool's schema does not declare is refused (the SDK alone would drop it):
    # the host's options alone decide, and the model is told the option is not its to set.
    root = make_tree(tmp_path, {})
    arguments = {"patch": case.patch, "allow_delete": True, "allow_move": True, **case.options}
    if "protected" in arguments:
        arguments["protected"] = list(arguments["protected"])
    result = anyio.run(build_server(str(root)).call_tool, "preview_patch", arguments)
    payload = result.structured_content
    assert payload["error"]["kind"] == "invalid_arguments"
    assert all(f"`{name}` is not an argument of this tool" in payload["error"]["message"] for name in case.options)
    del arguments[next(iter(case.options))]
    if not set(case.options) - {next(iter(case.options))}:
        again = anyio.run(build_server(str(root)).call_tool, "preview_patch", arguments).structured_content
        assert ("ok" if again["ok"] else again["error"]["kind"]) == case.without


@pytest.mark.parametrize("strip", [-1, True, "2", 1.5])
def test_a_function_tool_call_refuses_a_strip_that_is_not_a_non_negative_integer(strip: object,
                                                                                  tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    outcome = run_tool_call({"input": UPDATE_A, "strip": strip}, str(root))
    assert outcome.payload["error"]["kind"] == "invalid_arguments" and "strip" in outcome.text
    assert (root / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize("strip", [-1, True, "2", 1.5])
def test_an_mcp_call_refuses_a_strip_that_is_not_a_non_negative_integer(strip: object, tmp_path: Path) -> None:
    root = make_tree(tmp_path, {})
    result = anyio.run(build_server(str(root)).call_tool, "apply_patch", {"patch": UPDATE_A, "strip": strip})
    assert result.structured_content["error"]["kind"] == "invalid_arguments"
    assert (root / "a.txt").read_text() == "one\n"


@pytest.mark.parametrize(("name", "value"), [("reverse", "yes"), ("reverse", 1), ("allow_delete", "true"),
                                             ("dry_run", 0), ("extract", "false"), ("skip_applied", 1)])
def test_an_mcp_call_refuses_a_flag_that_is_not_a_json_boolean(name: str, value: object, tmp_path: Path) -> None:
    """As run_tool_call does: pydantic's lax mode read "yes" and 1 as true (and ``strip: true`` as
    ``-p 1``), so the MCP tools acted on values a function-tool call refuses."""
    root = make_tree(tmp_path, {})
    result = anyio.run(build_server(str(root)).call_tool, "apply_patch", {"patch": UPDATE_A, name: value})
    assert result.is_error and result.structured_content["error"]["kind"] == "invalid_arguments"
    assert f"`{name}` must be a boolean" in result.content[0].text
    assert (root / "a.txt").read_text() == "one\n"


_WRONGLY_TYPED = [("protected", "a.txt"), ("max_files", "0"), ("max_bytes", -1), ("allow_delete", "no"),
                  ("first_match", 1), ("durable", "no"), ("lock_timeout", float("nan")), ("lock_timeout", -5),
                  ("history_count", -1), ("history_bytes", 1.5)]


@pytest.mark.parametrize(("name", "value"), _WRONGLY_TYPED)
def test_a_host_option_of_the_wrong_type_is_refused_on_every_surface(name: str, value: object,
                                                                     tmp_path: Path) -> None:
    """``protected="a.txt"`` was read as one pattern per character, none of them a.txt, so the
    file it meant to protect was not; a string cap failed inside planning with a TypeError; NaN
    or a negative lock timeout reached the lock. Each is now an ``invalid_arguments`` error
    naming the option, before anything is read or written."""
    root = make_tree(tmp_path, {})
    host = {name: value}
    kind = _kind
    def transaction() -> None:
        with patchtx.Transaction(root, **host) as tx:  # type: ignore[arg-type]
            tx.apply_patch(UPDATE_A)

    assert kind(lambda: patchtx.apply_patch(UPDATE_A, root, **host)) == "invalid_arguments"  # type: ignore[arg-type]
    assert kind(transaction) == "invalid_arguments"
    outcome = run_tool_call({"input": UPDATE_A}, str(root), host=host)
    assert outcome.payload["error"]["kind"] == "invalid_arguments" and name in outcome.text
    result = anyio.run(build_server(str(root), host).call_tool, "apply_patch", {"patch": UPDATE_A})
    assert result.structured_content["error"]["kind"] == "invalid_arguments"
    editor = PatchtxEditor(root, **host)  # type: ignore[arg-type]
    operation = SimpleNamespace(type="update_file", path="a.txt", diff="@@\n-one\n+ONE\n")
    assert kind(lambda: editor.apply(operation)) == "invalid_arguments"  # type: ignore[arg-type]
    assert (root / "a.txt").read_text() == "one\n"
