"""One result shape on every surface (issue 18): the CLI's --json, Result.to_json(), tool calls and
the error's JSON all validate against docs/result.schema.json and carry the same keys."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

import patchtx
from patchtx.agents.tool_call import apply_patch_call, run_tool_call
from patchtx.render import error_json, result_schema

REPO = Path(__file__).resolve().parents[2]
PATCHTX = str(Path(sys.executable).parent / "patchtx")
UPDATE = "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\n"
MISS = "*** Begin Patch\n*** Update File: a.txt\n@@\n-nope\n+NOPE\n*** End Patch\n"
AMBIGUOUS = "*** Begin Patch\n*** Update File: b.txt\n-x\n+y\n*** End Patch\n"


def validate(payload: dict[str, object]) -> None:
    jsonschema.Draft202012Validator(result_schema()).validate(payload)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    (tmp_path / "b.txt").write_text("x\n\nx\n")
    return tmp_path


def cli_json(tree: Path, *args: str, stdin: str | None = None) -> tuple[int, dict[str, object]]:
    done = subprocess.run([PATCHTX, *args, "--json"], cwd=tree, input=stdin, capture_output=True,
                          text=True, timeout=60)
    return done.returncode, json.loads(done.stdout)


def test_the_docs_schema_is_the_packaged_one_and_a_valid_schema() -> None:
    shown = json.loads((REPO / "docs" / "result.schema.json").read_text(encoding="utf-8"))
    assert shown == result_schema()
    jsonschema.Draft202012Validator.check_schema(shown)


def test_the_schema_rejects_what_it_should() -> None:
    with pytest.raises(jsonschema.ValidationError):
        validate({"ok": True})  # keys missing
    good = patchtx.Result(patchtx.plan_patch("*** Begin Patch\n*** Add File: n\n+n\n*** End Patch\n", "."),
                          committed=False, dry_run=True).to_json()
    validate(good)
    with pytest.raises(jsonschema.ValidationError):
        validate({**good, "error": {"kind": "x"}})  # ok true with an error object
    with pytest.raises(jsonschema.ValidationError):
        validate({**good, "files": [{"path": "n", "status": "renamed"}]})


def test_every_surface_gives_the_same_keys_for_a_success(tree: Path) -> None:
    # (The syntax guard's default differs by surface, by design: refuse for agents; set alike here.)
    code, cli = cli_json(tree, "check", "--syntax", "refuse", "-", stdin=UPDATE)
    api = patchtx.apply_patch(UPDATE, tree, dry_run=True, syntax="refuse").to_json()
    tool = apply_patch_call(UPDATE, str(tree), dry_run=True).payload
    function = run_tool_call({"input": UPDATE, "dry_run": True}, str(tree)).payload
    assert code == 0
    for payload in (cli, api, tool, function):
        validate(payload)
    assert cli == api == tool == function
    code, applied = cli_json(tree, "apply", "-", stdin=UPDATE)
    assert code == 0
    validate(applied)
    assert applied["transaction"] in {entry.transaction_id for entry in patchtx.history.log(tree)}
    assert applied["recovered"] is None and applied["error"] is None


def test_every_surface_gives_the_same_error_object(tree: Path) -> None:
    code, cli = cli_json(tree, "apply", "-", stdin=MISS)
    with pytest.raises(patchtx.PatchtxError) as caught:
        patchtx.apply_patch(MISS, tree)
    api = error_json(caught.value, root=str(tree))
    tool = apply_patch_call(MISS, str(tree)).payload
    assert code == 1
    for payload in (cli, api, tool):
        validate(payload)
    assert cli == api == tool
    error = cli["error"]
    assert isinstance(error, dict)
    assert error["kind"] == "context_not_found" and error["path"] == "a.txt"  # not the host path
    assert error["patch_line"] == 3 and error["patch_file"] is None  # read from standard input
    assert error["hint"] and error["message"].endswith(error["hint"])


def test_the_file_line_of_an_ambiguous_hunk_is_its_first_match(tree: Path) -> None:
    tool = apply_patch_call(AMBIGUOUS, str(tree)).payload
    validate(tool)
    error = tool["error"]
    assert error["kind"] == "ambiguous_context" and error["file_line"] == 1
    assert error["candidate_lines"] == [1, 3]


def test_the_patch_file_is_named_among_several(tree: Path) -> None:
    (tree / "good.patch").write_text(UPDATE)
    (tree / "bad.patch").write_text("*** Begin Patch\n*** Frobnicate File: a.txt\n*** End Patch\n")
    (tree / "miss.patch").write_text(MISS.replace("a.txt", "b.txt"))
    code, parse = cli_json(tree, "apply", "good.patch", "bad.patch")
    assert code == 1 and parse["error"]["patch_file"] == "bad.patch"  # type: ignore[index]
    code, plan = cli_json(tree, "apply", "good.patch", "miss.patch")
    assert code == 1 and plan["error"]["patch_file"] == "miss.patch"  # type: ignore[index]
    assert plan["error"]["path"] == "b.txt"  # type: ignore[index]
    (tree / "absolute.patch").write_text(MISS.replace("a.txt", f"{tree.resolve()}/b.txt"))
    code, absolute = cli_json(tree, "apply", "good.patch", "absolute.patch")
    assert absolute["error"]["patch_file"] == "absolute.patch"  # type: ignore[index]
    assert absolute["error"]["path"] == "b.txt"  # type: ignore[index]
    code, one = cli_json(tree, "apply", "miss.patch")
    assert one["error"]["patch_file"] == "miss.patch"  # type: ignore[index]
    validate(parse), validate(plan), validate(one)
    assert (tree / "a.txt").read_text() == "one\ntwo\n"


def test_an_undo_is_the_same_shape_with_undone(tree: Path) -> None:
    applied = patchtx.apply_patch(UPDATE, tree)
    code, undone = cli_json(tree, "undo")
    assert code == 0
    validate(undone)
    assert undone["undone"] == applied.transaction_id and undone["transaction"] != applied.transaction_id


def test_recovered_is_wired_to_what_the_commit_reports(tree: Path) -> None:
    from patchtx.api import recovery_of
    from patchtx.txn.recovery import RecoveredTransaction
    from patchtx.txn.reports import CommitReport, RecoveryReport

    assert recovery_of(CommitReport("t", 0)) is None
    assert recovery_of(CommitReport("t", 0, recovery=RecoveryReport())) is None
    report = RecoveryReport((RecoveredTransaction("old", "rolled_back", restored=("a.txt",)),))
    assert recovery_of(CommitReport("t", 0, recovery=report)) is report
    shown = patchtx.Result(patchtx.plan_patch(UPDATE, tree), committed=True, recovery=report).to_json()
    validate(shown)
    assert shown["recovered"] == [{"transaction_id": "old", "outcome": "rolled_back", "restored": ["a.txt"],
                                   "removed": [], "removed_dirs": [], "recreated_dirs": [], "conflicts": [],
                                   "left_in_place": [], "kept_dirs": []}]


def test_recovered_is_true_after_an_interrupted_commit(tmp_path: Path) -> None:
    import shutil

    from patchtx.txn import commit

    from ..txn.helpers import crash_in_process

    seen = set()
    for crash_at in range(1, 60):
        root = tmp_path / f"ws{crash_at}"
        root.mkdir()
        (root / "a.txt").write_text("one\ntwo\n")
        plan = patchtx.plan_patch(UPDATE, root)
        if not crash_in_process(lambda fs, plan=plan: commit(plan, fs=fs), crash_at):
            shutil.rmtree(root)
            break
        result = patchtx.apply_patch("*** Begin Patch\n*** Add File: b.txt\n+b\n*** End Patch\n", root)
        validate(result.to_json())
        shown = result.to_json()["recovered"]
        assert (shown is not None) is result.recovered
        if result.recovery is not None:
            assert [t["transaction_id"] for t in shown] == [t.transaction_id for t in result.recovery.transactions]
        seen.add(result.recovered)
        shutil.rmtree(root)
    assert seen == {False, True}  # crashes before the journal: nothing to recover; after: recovered


def test_every_error_kind_is_listed_in_format_md() -> None:
    import importlib
    import pkgutil

    for module in pkgutil.walk_packages(patchtx.__path__, "patchtx."):
        if module.name.split(".")[-1] not in ("__main__", "mcp_server", "openai_agents", "acp"):
            importlib.import_module(module.name)
    importlib.import_module("patchtx.agents.mcp_server")

    def subclasses(cls: type) -> set[type]:
        return {cls} | {s for sub in cls.__subclasses__() for s in subclasses(sub)}

    kinds = {cls.kind for cls in subclasses(patchtx.PatchtxError) if cls.kind != "error"}
    listed = (REPO / "docs" / "format.md").read_text(encoding="utf-8").split("## Errors", 1)[1]
    assert {kind for kind in kinds if f"`{kind}`" not in listed} == set()
    assert len(kinds) >= 25


def test_a_git_diffs_copies_and_modes_are_in_the_shape(tmp_path: Path) -> None:
    from tests.formats.unified.support import BEFORE, EVERY_OPERATION, write_tree

    write_tree(tmp_path, BEFORE)
    (tmp_path / "all.diff").write_text(EVERY_OPERATION)
    code, payload = cli_json(tmp_path, "check", "all.diff")
    assert code == 0
    validate(payload)
    files = {entry["path"]: entry for entry in payload["files"]}  # type: ignore[attr-defined]
    assert files["d"]["status"] == "added" and files["d"]["copied_from"] == "c"
    assert files["d"]["diff"].startswith("diff --git a/c b/d\ncopy from c\ncopy to d\n--- a/c\n+++ b/d\n")
    assert (files["m"]["old_mode"], files["m"]["new_mode"]) == ("100644", "100755")
    assert files["s"]["status"] == "moved" and files["s"]["from"] == "r"
    assert "copied_from" not in files["n"] and "old_mode" not in files["x"]
    with pytest.raises(jsonschema.ValidationError):
        validate({**payload, "files": [{**files["m"], "new_mode": "120000"}]})
    shown = subprocess.run([PATCHTX, "check", "--no-diff", "all.diff"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=60).stdout
    assert "  A d (copy of c)\n" in shown and "  R r -> s\n" in shown


def test_docs_cli_json_sample_has_every_key_the_cli_prints(tree: Path) -> None:
    """docs/cli.md says every key is always present: its sample shows them all (issue 42 item 10)."""
    text = (REPO / "docs" / "cli.md").read_text()
    sample = text.split("### JSON", 1)[1].split("```json\n", 1)[1].split("```", 1)[0]
    code, payload = cli_json(tree, "apply", "-", stdin=UPDATE)
    assert code == 0
    assert list(json.loads(sample)) == list(payload)
