"""Reads under the host's control (issue 38, item 4): a host can hide paths from the model
(``hidden``, ``--hide``), and patchtx's own state is never shown under any name.

Each attack of the issue is a test here, through the library, the editor, the command line and
the MCP server (the official SDK client): a hard link to the per-user secret placed in the root
(``view`` showed its hex; a copy of it in a dry run's diff), a protected ``.env`` whose lines the
closest-region hint quoted, and the host's new option on every surface."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import patchtx
from patchtx.agents.editor import run_editor
from patchtx.errors import PatchtxError
from patchtx.model import PathTarget, Plan
from patchtx.txn import provenance
from patchtx.txn.layout import JOURNAL_DIR

from .surfaces import cli, mcp

ENV = "API_KEY=hunter2\nDB_PASSWORD=correct-horse\n"
SECRET_WORDS = ("hunter2", "correct-horse")


def envelope(*body: str) -> str:
    return "*** Begin Patch\n" + "".join(line + "\n" for line in body) + "*** End Patch\n"


MISS = envelope("*** Update File: .env", "@@", "-API_KEY=hunter3", "+API_KEY=changed")
"""A hunk that nearly matches the first line of .env: the closest-region hint quotes that line."""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / ".env").write_text(ENV)
    (root / "src" / "app.py").write_text("print('hello')\n")
    (root / "notes.txt").write_text("one\ntwo\n")
    return root


def refusal(work: Any) -> PatchtxError:
    try:
        work()
    except PatchtxError as error:
        return error
    raise AssertionError("not refused")


def shows_nothing_of(text: str, *secrets: str) -> bool:
    return not any(secret in text for secret in secrets)


# -- patchtx's own state, under any name ------------------------------------------------------------

@pytest.fixture
def secret_link(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tree: Path) -> str:
    """The per-user secret (in a state folder outside the root), hard-linked into the root as
    ``notes.md``; its hex, which must never be shown."""
    state = tmp_path / "state"
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(state))
    secret = provenance.user_secret().hex()
    os.link(state / "secret", tree / "notes.md")
    assert (tree / "notes.md").read_text().strip() == secret
    return secret


def test_view_of_a_hard_link_to_the_secret_is_refused(tree: Path, secret_link: str) -> None:
    # Before: "     1\t<the secret's 64 hex digits>".
    error = refusal(lambda: run_editor({"command": "view", "path": "notes.md"}, tree))
    assert error.kind == "unsafe_path" and shows_nothing_of(error.message, secret_link)
    assert error.message.startswith("Refusing to read notes.md: it is the same file as the per-user secret ")
    listing = run_editor({"command": "view", "path": "."}, tree).text
    assert "./notes.md" in listing and shows_nothing_of(listing, secret_link)  # (a name, never the bytes)
    # Two ordinary names of one file are still shown.
    os.link(tree / "notes.txt", tree / "twin.txt")
    assert "     2\ttwo" in run_editor({"command": "view", "path": "twin.txt"}, tree).text


def test_no_patch_reads_the_secret_through_a_hard_link(tree: Path, secret_link: str) -> None:
    """A copy in a dry run (before: the new file's diff held the secret), a hint, a rename."""
    copy = "diff --git a/notes.md b/copy.md\nsimilarity index 100%\ncopy from notes.md\ncopy to copy.md\n"
    miss = envelope("*** Update File: notes.md", "@@", "-" + "0" * 64, "+x")
    move = "diff --git a/notes.md b/moved.md\nsimilarity index 100%\nrename from notes.md\nrename to moved.md\n"
    for patch in (copy, miss, move):
        error = refusal(lambda patch=patch: patchtx.apply_patch(patch, tree, dry_run=True))
        assert error.kind == "unsafe_path" and shows_nothing_of(error.message, secret_link), error.message
    assert not (tree / "copy.md").exists() and (tree / "notes.md").exists()


def _kept_history(tree: Path) -> Path:
    """One kept transaction in the tree's undo history; the path of its journal."""
    patchtx.apply_patch(envelope("*** Update File: notes.txt", "@@", "-one", "+ONE"), tree)
    (kept,) = [p for p in (tree / JOURNAL_DIR).iterdir() if ".kept-" in p.name]
    return kept


def test_a_hard_link_to_a_state_file_is_never_read_nor_written(tree: Path) -> None:
    """The one check (``txn.own``) on reads and on writes: a hard link to a kept journal, or to a
    kept before-image. Before, the gate checked the secret alone: an update through the link was
    written into the journal in place, and the history was damaged."""
    kept = _kept_history(tree)
    (before_image,) = [p for p in kept.parent.iterdir() if p.name.endswith(".before")]
    os.link(kept, tree / "journal.json")
    os.link(before_image, tree / "old.txt")
    journal = kept.read_bytes()
    for name in ("journal.json", "old.txt"):
        error = refusal(lambda name=name: run_editor({"command": "view", "path": name}, tree))
        assert error.kind == "unsafe_path" and "in patchtx's state folder .patchtx" in error.message, error.message
        assert kept.name in error.message or before_image.name in error.message
    update = envelope("*** Update File: journal.json", "@@", "+appended")
    error = refusal(lambda: patchtx.apply_patch(update, tree))
    assert error.kind == "unsafe_path" and kept.read_bytes() == journal
    # The gate's own check, for a plan that did not come from the planner.
    mode = kept.stat().st_mode & 0o7777
    target = PathTarget("journal.json", journal, journal + b"x", mode, mode)
    plan = Plan(root=str(tree.resolve()), changes=(), targets=(target,))
    error = refusal(lambda: patchtx.apply_plan(plan))
    assert error.kind == "unsafe_path" and kept.read_bytes() == journal
    patchtx.history.undo(tree)  # the history is whole
    assert (tree / "notes.txt").read_text() == "one\ntwo\n"


def test_a_transaction_in_progress_is_not_mistaken_for_state(tree: Path) -> None:
    """A before-image of a transaction not settled as a kept entry is a link to the tree's own
    file while that transaction commits or rolls back: a read racing it reads the file."""
    journal = tree / JOURNAL_DIR
    journal.mkdir(parents=True)
    txn = "20261207T220000-0a1b2c3d"
    os.link(tree / "notes.txt", journal / f"{txn}.0.before")
    assert "     1\tone" in run_editor({"command": "view", "path": "notes.txt"}, tree).text
    assert patchtx.apply_patch(envelope("*** Update File: notes.txt", "@@", "-one", "+1"), tree, dry_run=True)
    (journal / f"{txn}.kept-1-4").write_text("{}")  # settled: no file of the tree is ever its before-image
    assert refusal(lambda: run_editor({"command": "view", "path": "notes.txt"}, tree)).kind == "unsafe_path"


# -- paths the host hides -----------------------------------------------------------------------------

HIDE = {"hidden": (".env",)}


def test_view_refuses_a_hidden_path_whether_it_exists_or_not(tree: Path) -> None:
    # Before (no read guard): "     1\tAPI_KEY=hunter2".
    error = refusal(lambda: run_editor({"command": "view", "path": ".env"}, tree, **HIDE))
    assert error.kind == "hidden_path" and shows_nothing_of(error.message, *SECRET_WORDS)
    assert error.message.startswith("Refusing to show .env: the host hides it from this tool (the pattern '.env').")
    (tree / ".env").unlink()
    assert refusal(lambda: run_editor({"command": "view", "path": ".env"}, tree, **HIDE)).message == error.message
    for command in ({"command": "create", "file_text": "x"}, {"command": "insert", "insert_line": 0,
                                                                "insert_text": "x"}):
        error = refusal(lambda command=command: run_editor({**command, "path": ".env"}, tree, **HIDE))
        assert error.kind == "hidden_path" and error.message.startswith("Refusing to change .env:")
    assert not (tree / ".env").exists()


def test_a_hidden_file_under_another_name_is_hidden(tree: Path) -> None:
    """A symbolic link to it, a symbolic link named by the pattern that leads to a file, a hard
    link: each refused, and left out of listings where the name or the link says so."""
    (tree / "src" / "config").symlink_to("../.env")
    (tree / "local.env").write_text("TOKEN=correct-horse\n")
    (tree / "src" / ".env").symlink_to("../local.env")
    os.link(tree / ".env", tree / "backup.txt")
    for path, other in (("src/config", None), ("local.env", "src/.env"), ("backup.txt", ".env")):
        error = refusal(lambda path=path: run_editor({"command": "view", "path": path}, tree, **HIDE))
        assert error.kind == "hidden_path" and shows_nothing_of(error.message, *SECRET_WORDS), error.message
        if other is not None:
            assert f"it is the same file as {other} (a " in error.message, error.message
    listing = run_editor({"command": "view", "path": "."}, tree, **HIDE).text
    assert ".env" not in listing and "config" not in listing and "./src/app.py" in listing
    assert "hidden files/directories" not in listing  # (.env is not even counted among the dot files)
    patch = envelope("*** Update File: backup.txt", "@@", "-API_KEY=hunter3", "+x")
    error = refusal(lambda: patchtx.apply_patch(patch, tree, **HIDE))
    assert error.kind == "hidden_path" and shows_nothing_of(error.message, *SECRET_WORDS)


def test_protected_is_not_hidden(tree: Path) -> None:
    """The choice written in docs/guarantees.md, section 13: ``protected`` guards writes, ``hidden``
    reads and writes. A protected .env is shown (and its hunk's hint quotes it); a hidden one never."""
    protect = {"protected": (".env",)}
    assert "API_KEY=hunter2" in run_editor({"command": "view", "path": ".env"}, tree, **protect).text
    error = refusal(lambda: patchtx.apply_patch(MISS, tree, **protect))
    assert error.kind == "context_not_found" and "API_KEY=hunter2" in error.message
    error = refusal(lambda: patchtx.apply_patch(MISS, tree, **HIDE, **protect))
    assert error.kind == "hidden_path" and shows_nothing_of(error.message, *SECRET_WORDS)


def test_no_patch_reads_or_writes_a_hidden_path(tree: Path) -> None:
    """Before: the miss hint quoted 'API_KEY=hunter2', a copy's diff held the file. Every format,
    every operation, refused before the file is read: the same refusal whether it exists or not."""
    env_copy = "diff --git a/.env b/env.txt\nsimilarity index 100%\ncopy from .env\ncopy to env.txt\n"
    patches = {
        "miss": MISS,
        "add": envelope("*** Add File: .env", "+x"),
        "delete": envelope("*** Delete File: .env"),
        "move away": "diff --git a/.env b/env.txt\nsimilarity index 100%\nrename from .env\nrename to env.txt\n",
        "move onto": "diff --git a/notes.txt b/.env\nsimilarity index 100%\nrename from notes.txt\nrename to .env\n",
        "copy": env_copy,
        "blocks": ".env\n<<<<<<< SEARCH\nAPI_KEY=hunter3\n=======\nAPI_KEY=x\n>>>>>>> REPLACE\n",
    }
    before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    messages = {}
    for name, patch in patches.items():
        for dry_run in (True, False):
            error = refusal(lambda patch=patch, dry_run=dry_run: patchtx.apply_patch(
                patch, tree, dry_run=dry_run, allow_overwrite=True, **HIDE))
            assert error.kind == "hidden_path", (name, error.message)
            assert shows_nothing_of(error.message, *SECRET_WORDS), (name, error.message)
            messages[name] = error.message
    edits = refusal(lambda: patchtx.apply_edits([{"path": ".env", "old_string": "API_KEY=hunter3",
                                                  "new_string": "x"}], tree, **HIDE))
    assert edits.kind == "hidden_path"
    assert {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()} == before
    (tree / ".env").unlink()
    assert refusal(lambda: patchtx.apply_patch(MISS, tree, **HIDE)).message == messages["miss"]


def test_the_gate_refuses_a_hidden_path_under_any_name(tree: Path) -> None:
    """A hand-built plan, which no planner checked: its target, and a target a symbolic link
    named by the pattern leads to."""
    (tree / "src" / ".env").symlink_to("../notes.txt")
    for path in (".env", "notes.txt"):
        data = (tree / path).read_bytes()
        target = PathTarget(path, data, data + b"x", 0o644, 0o644)
        plan = Plan(root=str(tree.resolve()), changes=(), targets=(target,))
        error = refusal(lambda plan=plan: patchtx.apply_plan(plan, hidden=[".env"]))
        assert error.kind == "hidden_path", error.message
        assert (tree / path).read_bytes() == data


def test_only_the_host_hides(tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The host's config and PATCHTX_POLICY may set ``hidden``; a workspace's policy may not (a
    repository could hide its own build script from the model asked to review it)."""
    config = tmp_path / "config.toml"
    config.write_text('hidden = [".env"]\n')
    monkeypatch.setenv("PATCHTX_CONFIG", str(config))
    assert refusal(lambda: patchtx.apply_patch(MISS, tree)).kind == "hidden_path"
    assert refusal(lambda: run_editor({"command": "view", "path": ".env"}, tree)).kind == "hidden_path"
    assert "API_KEY=hunter2" in run_editor({"command": "view", "path": ".env"}, tree, hidden=[]).text
    config.unlink()
    monkeypatch.setenv("PATCHTX_POLICY", 'hidden = ["*.env"]')
    assert refusal(lambda: run_editor({"command": "view", "path": ".env"}, tree)).kind == "hidden_path"
    monkeypatch.delenv("PATCHTX_POLICY")
    (tree / ".patchtx.toml").write_text('hidden = ["src/**"]\n')
    error = refusal(lambda: patchtx.apply_patch(envelope("*** Add File: new.txt", "+x"), tree))
    assert error.kind == "policy_violation" and "'hidden' is the host's alone" in error.message
    # ``view`` reads no workspace policy: it works where that policy cannot be read.
    assert "print('hello')" in run_editor({"command": "view", "path": "src/app.py"}, tree).text
    (tree / ".patchtx.toml").unlink()
    wrong = refusal(lambda: patchtx.apply_patch(MISS, tree, hidden=".env"))  # type: ignore[arg-type]
    assert wrong.kind == "invalid_arguments"


def test_the_command_line_and_the_mcp_server_hide(tree: Path) -> None:
    """``patchtx apply --hide`` and ``patchtx mcp --hide``, the latter through the SDK's client:
    the view tools, a listing, a patch whose hint would quote the file, a preview of a copy."""
    kind, out = cli(tree, "apply", "--hide", ".env", patch=MISS)
    assert kind == "hidden_path" and shows_nothing_of(json.dumps(out), *SECRET_WORDS)
    kind, out = cli(tree, "apply", "--protect", ".env", patch=MISS)
    assert kind == "context_not_found" and "hunter2" in json.dumps(out)  # (protected is not hidden)
    copy = "diff --git a/.env b/env.txt\nsimilarity index 100%\ncopy from .env\ncopy to env.txt\n"
    calls = [("view", {"path": ".env"}), ("str_replace_based_edit_tool", {"command": "view", "path": ".env"}),
             ("view", {"path": "."}), ("apply_patch", {"patch": MISS}), ("preview_patch", {"patch": copy}),
             ("edit_files", {"edits": [{"path": ".env", "old_string": "API_KEY=hunter3", "new_string": "x"}]}),
             ("view", {"path": "src/app.py"})]
    outcomes = mcp(tree, calls, "--hide", ".env")
    kinds = [kind for kind, _content in outcomes]
    assert kinds == ["hidden_path", "hidden_path", "applied", "hidden_path", "hidden_path", "hidden_path",
                     "applied"], outcomes
    assert all(shows_nothing_of(json.dumps(content), *SECRET_WORDS) for _kind, content in outcomes)
    listing = outcomes[2][1]["output"]
    assert "./src/app.py" in listing and ".env" not in listing
    assert (tree / ".env").read_text() == ENV and not (tree / "env.txt").exists()


def test_the_mcp_view_tool_never_shows_the_secret_through_a_hard_link(tree: Path, secret_link: str) -> None:
    """Before: the view tool answered with the secret's hex."""
    env = {"PATCHTX_STATE_HOME": os.environ["PATCHTX_STATE_HOME"]}
    outcomes = mcp(tree, [("view", {"path": "notes.md"}),
                          ("str_replace_based_edit_tool", {"command": "view", "path": "notes.md"})], env=env)
    assert [kind for kind, _content in outcomes] == ["unsafe_path", "unsafe_path"], outcomes
    assert all(shows_nothing_of(json.dumps(content), secret_link) for _kind, content in outcomes)
