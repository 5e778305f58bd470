"""Who may undo what, and every undo through the gate (issue 24). A model connected to ``patchtx
mcp`` used to flip any file, protected or policy, between the states the undo history holds."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from patchtx import history
from patchtx.errors import PatchtxError

from .surfaces import cli, mcp
from .test_boundary import snapshot

ROTATE = "*** Begin Patch\n*** Update File: secret/k.txt\n@@\n-old key\n+new key\n*** End Patch\n"
TIGHTEN = ("*** Begin Patch\n*** Update File: pyproject.toml\n@@\n [project]\n name = \"x\"\n"
           "+\n+[tool.patchtx]\n+protected = [\"prod/**\"]\n*** End Patch\n")
MOVE = "*** Begin Patch\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n-a\n+A\n*** End Patch\n"
TWO = ("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: notes.txt\n@@\n-notes\n+NOTES\n"
       "*** End Patch\n")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / "secret").mkdir(parents=True)
    (root / "secret" / "k.txt").write_text("old key\n")
    (root / "prod").mkdir()
    (root / "prod" / "db.ini").write_text("db\n")
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "a.txt").write_text("a\n")
    (root / "notes.txt").write_text("notes\n")
    return root


def by_the_user(root: Path, patch: str, *args: str) -> str:
    """A change the user makes on the command line; its transaction id."""
    kind, out = cli(root, "apply", *args, patch=patch)
    assert kind == "applied", out
    return str(out["transaction"])


def files(root: Path) -> dict[str, bytes | str]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


def test_mcp_undo_cannot_flip_a_protected_file(repo: Path) -> None:
    rotated = by_the_user(repo, ROTATE)
    before = files(repo)
    # Default: the server may undo only its own transactions; widened, the gate still holds.
    own, = mcp(repo, [("undo", {"transaction": rotated})], "--protect", "secret/**")
    assert own[0] == "policy_violation" and own[1]["error"]["permission"] == "undo"
    (anyway, dry), = [mcp(repo, [("undo", {"transaction": rotated}),
                                 ("undo", {"transaction": rotated, "dry_run": True})],
                          "--protect", "secret/**", "--undo", "any")]
    assert anyway[0] == dry[0] == "policy_violation"
    assert "secret/**" in anyway[1]["error"]["message"]
    assert files(repo) == before
    # The library and the command line check an undo as they check a patch.
    with pytest.raises(PatchtxError) as caught:
        history.undo(repo, rotated, protected=["secret/**"])
    assert caught.value.kind == "policy_violation"
    assert cli(repo, "undo", rotated, "--protect", "secret/**")[0] == "policy_violation"
    config = repo.parent / "config.toml"
    config.write_text('protected = ["secret/**"]\n')
    assert cli(repo, "undo", rotated, env={"PATCHTX_CONFIG": str(config)})[0] == "policy_violation"
    assert files(repo) == before
    # Undone by the user (unprotected): the model cannot redo it through the undo of that undo.
    undone = cli(repo, "undo", rotated)[1]["transaction"]
    assert (repo / "secret/k.txt").read_text() == "old key\n"
    (redo,) = mcp(repo, [("undo", {"transaction": undone})], "--protect", "secret/**", "--undo", "any")
    assert redo[0] == "policy_violation"
    assert (repo / "secret/k.txt").read_text() == "old key\n"


def test_mcp_undo_cannot_remove_the_workspace_policy(repo: Path) -> None:
    tightened = by_the_user(repo, TIGHTEN, "--allow-policy-edit")
    before = files(repo)
    (undo,) = mcp(repo, [("undo", {"transaction": tightened})], "--undo", "any")
    assert undo[0] == "policy_violation" and "policy" in undo[1]["error"]["message"]
    with pytest.raises(PatchtxError) as caught:
        history.undo(repo, tightened)
    assert caught.value.kind == "policy_violation"
    assert cli(repo, "undo", tightened)[0] == "policy_violation"
    assert files(repo) == before
    edit_prod = "*** Begin Patch\n*** Update File: prod/db.ini\n@@\n-db\n+pwned\n*** End Patch\n"
    (edit,) = mcp(repo, [("apply_patch", {"patch": edit_prod})], "--undo", "any")
    assert edit[0] == "policy_violation"
    # The user may, saying so.
    assert cli(repo, "undo", tightened, "--allow-policy-edit")[0] == "applied"
    assert "tool.patchtx" not in (repo / "pyproject.toml").read_text()


def test_undo_keeps_the_hosts_permissions_and_caps(repo: Path) -> None:
    moved = by_the_user(repo, MOVE)
    before = files(repo)
    (undo_move,) = mcp(repo, [("undo", {"transaction": moved})], "--undo", "any", "--no-move")
    assert undo_move[0] == "policy_violation" and undo_move[1]["error"]["permission"] == "allow_move"
    with pytest.raises(PatchtxError) as caught:
        history.undo(repo, moved, allow_move=False)
    assert caught.value.kind == "policy_violation" and caught.value.details["permission"] == "allow_move"
    assert cli(repo, "undo", moved, "--no-move")[0] == "policy_violation"
    assert files(repo) == before
    two = by_the_user(repo, TWO.replace("a.txt", "b.txt").replace("-a\n+A", "-A\n+AA"))
    before = files(repo)
    (undo_two,) = mcp(repo, [("undo", {"transaction": two})], "--undo", "any", "--max-files", "1")
    assert undo_two[0] == "policy_violation" and "limit of 1" in undo_two[1]["error"]["message"]
    with pytest.raises(PatchtxError, match="limit of 1"):
        history.undo(repo, two, max_files=1)
    assert cli(repo, "undo", two, "--max-files", "1")[0] == "policy_violation"
    assert files(repo) == before


def test_the_mcp_server_undoes_its_own_transactions_by_default(repo: Path) -> None:
    by_the_user(repo, MOVE)
    edit = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-notes\n+edited\n*** End Patch\n"
    first = mcp(repo, [("apply_patch", {"patch": edit}), ("log", {})])
    (applied, content), (_, log) = first
    assert applied == "applied"
    own = content["transaction"]
    origins = {entry["id"]: entry["origin"] for entry in log["transactions"]}
    assert origins[own] == "mcp" and list(origins.values()).count("mcp") == 1
    user = next(tid for tid, origin in origins.items() if origin is None)
    outcomes = mcp(repo, [("undo", {"transaction": user}), ("undo", {"transaction": own})])
    assert outcomes[0][0] == "policy_violation"
    assert outcomes[1][0] == "applied" and (repo / "notes.txt").read_text() == "notes\n"
    # --undo none: no undo tool at all.
    import anyio
    from mcp import Client

    from tests.warm_server import parameters

    async def tools() -> set[str]:
        params = parameters(["--root", str(repo), "--undo", "none"], cwd=str(repo), env=dict(os.environ))
        async with Client(params) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    offered = anyio.run(tools)
    assert "undo" not in offered and {"apply_patch", "preview_patch", "log"} <= offered
