"""Approval hooks decide on the Plan before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest

import patchtx
from patchtx.errors import ApprovalError
from patchtx.plan.approval import ApprovalPolicy, Decision, enforce


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src/app.py").write_text("x = 1\n")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github/ci.yml").write_text("on: push\n")
    return tmp_path


def plan(tree: Path, body: str) -> patchtx.Plan:
    return patchtx.plan_patch(f"*** Begin Patch\n{body}\n*** End Patch", tree)


def test_edit_inside_writable_root_is_approved(tree: Path) -> None:
    edit = plan(tree, "*** Update File: src/app.py\n-x = 1\n+x = 2")
    verdict = ApprovalPolicy(writable_roots=("src",))(edit)
    assert verdict.decision is Decision.APPROVE


def test_delete_move_outside_and_sensitive_ask(tree: Path) -> None:
    policy = ApprovalPolicy(writable_roots=("src",), ask_paths=(".github/",))
    assert policy(plan(tree, "*** Delete File: src/app.py")).decision is Decision.ASK
    moved = policy(plan(tree, "*** Update File: src/app.py\n*** Move to: src/main.py\n x = 1"))
    assert moved.decision is Decision.ASK and "moves" in moved.reason
    outside = policy(plan(tree, "*** Add File: README.md\n+hi"))
    assert outside.decision is Decision.ASK and "outside the writable roots: README.md" in outside.reason
    ci_edit = plan(tree, "*** Update File: .github/ci.yml\n-on: push\n+on: pr")
    ci = ApprovalPolicy(ask_paths=(".github/",))(ci_edit)
    assert ci.decision is Decision.ASK and ".github/ci.yml" in ci.reason


def test_large_change_asks(tree: Path) -> None:
    big = "*** Add File: big.txt\n" + "\n".join("+" + "x" * 99 for _ in range(20))
    assert ApprovalPolicy(max_auto_bytes=1000)(plan(tree, big)).decision is Decision.ASK


def test_reject_and_user_no_write_nothing(tree: Path) -> None:
    planned = plan(tree, "*** Update File: .github/ci.yml\n-on: push\n+on: pr")
    with pytest.raises(ApprovalError, match="patch rejected: .github/ci.yml matches the forbidden"):
        enforce(planned, ApprovalPolicy(reject_paths=(".github/**",)), ask=None)
    asked: list[str] = []

    def say_no(_plan: patchtx.Plan, reason: str) -> bool:
        asked.append(reason)
        return False

    with pytest.raises(ApprovalError, match="rejected by user"):
        enforce(planned, ApprovalPolicy(ask_paths=(".github/",)), ask=say_no)
    assert asked and (tree / ".github/ci.yml").read_text() == "on: push\n"


def test_ask_answered_yes_lets_the_commit_run(tree: Path) -> None:
    planned = plan(tree, "*** Delete File: src/app.py")
    verdict = enforce(planned, ApprovalPolicy(), ask=lambda _p, _r: True)
    assert verdict.decision is Decision.ASK
    patchtx.apply_plan(planned)
    assert not (tree / "src/app.py").exists()
