"""The gate: what the commit checks before its first write, whatever made the plan.

``apply``, ``undo``, ``redo``, the ``Transaction`` API, a hand-built plan given to ``apply_plan``
or ``txn.commit``, the agent tools: every plan reaches the disk through ``commit``, and the commit
asks this module (docs/guarantees.md, "The gate"):

1. ``check_paths`` (step 0, no I/O): every path by the one path rule (``workspace.path_problem``),
   which the planner applies to a patch's paths and the journal reader to a journal's.
2. ``check_plan`` (under the lock, once every target is verified, before the journal is written): the
   host's ceiling the caller passes (none passed: the host's config and environment), tightened by
   the workspace's policy as it reads now, against what the plan will do to each file
   (``policy.check_changes``: caps, deletes, moves, overwrites, protected paths, policy files),
   under every name the file has: the names of symbolic links that lead to it (or to a folder
   above it), and the other names of a file with hard links, found by inode; the paths the host
   hides (``hidden``) as protected ones; and no file with hard links may be one of patchtx's own
   (``own``: the secret, a state file), the check reads make too (``reads``).

Recovery is not gated by the policy: a roll back puts back what this user's own interrupted
transaction replaced (a policy the transaction itself tightened must not wedge it). Its paths pass
the path rule, and its journal the signature check (``journal``, ``provenance``). A journal that
fails that check and is rolled back anyway (``recover --trust-foreign``) holds someone else's
bytes: ``check_foreign`` holds it to the policy in force (protected paths, policy files).
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING

from ..errors import ConflictError, PolicyError, UnsafePathError
from ..workspace.paths import path_problem, under, visible
from ..workspace.policy import (
    WORKSPACE_POLICY_FILE,
    check_changes,
    config_path,
    options_for,
    policy_file_rules,
    policy_files,
    tighten,
    workspace_policy,
)
from .layout import STATE_DIR
from .own import OwnFiles
from .provenance import check_outside

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..model import Plan
    from ..options import PlanOptions
    from .dirs import DirectoryHandles
    from .journal import Journal

    Names = dict[str, list[tuple[str, str]]]
    """Workspace path -> its other names, each with what makes it one ("symbolic link", "hard link")."""

MAX_ENTRIES = 1_000_000
"""Directory entries looked at, at most, for the other names of a file with hard links or for the
symbolic links a protected pattern may name (beyond, the change is refused: it could not be
checked)."""
_LINK_ROUNDS = 8
"""How many times names are looked up again: a link into a folder reached through another link."""


def check_paths(plan: Plan) -> None:
    """Refuse, before anything is touched, a plan naming a path the one path rule refuses, or
    naming a path twice, or a workspace that holds the per-user secret."""
    if not os.path.isabs(plan.root):
        raise UnsafePathError(f"The workspace root {plan.root!r} is not an absolute path.")
    check_outside(plan.root)  # the secret that signs its journals may not lie inside it
    seen: set[str] = set()
    for target in plan.targets:
        _check_path(target.path)
        if target.path in seen:
            raise ConflictError(f"The plan lists {target.path} twice.", path=target.path)
        seen.add(target.path)
    for path in plan.remove_dirs:
        _check_path(path)


def _check_path(path: str) -> None:
    why = path_problem(path)
    if why is not None:
        shown = visible(path)
        raise UnsafePathError(f"Refusing the path {shown!r}: {why}.",
                              hint="A plan names plain relative paths inside the workspace, outside"
                                   " every .git and .patchtx folder.", path=shown)


def check_plan(plan: Plan, policy: PlanOptions | None, dirs: DirectoryHandles,
          files: Iterable[tuple[str, os.stat_result | None, int]]) -> None:
    """Refuse ``plan`` unless the policy in force allows what it does, under every name of every
    file. ``policy`` is the host's ceiling as the caller has it (None: the host's config and
    environment alone); ``files``: each target as verified (its stat, None when absent) and how
    many names it has besides the journal's."""
    if policy is None:
        policy = options_for(plan.root, caller="commit()")[0]
    else:
        for table in workspace_policy(plan.root):
            policy = tighten(policy, table)
    linked = {(st.st_dev, st.st_ino): path for path, st, count in files if st is not None and count > 1}
    names = other_names(dirs, plan.root, policy.protected + policy.hidden, linked,
                        [t.path for t in plan.targets])
    extra = policy_files(plan.root)
    if linked:
        _host_files_linked_in(linked, extra, plan.root)
    check_changes(policy, plan.targets, plan.changes, names=names, extra_policy_files=extra)


def _host_files_linked_in(linked: dict[tuple[int, int], str], extra: dict[str, str], root: str) -> None:
    """The host's own files that a target with other hard links may be: the host's config (its
    policy follows it under the name in the tree), and patchtx's own state, the per-user secret
    above all (never written: a patch would replace every signature; ``own``, the check reads
    make too)."""
    try:
        st = os.stat(config_path())
    except OSError:
        pass  # (none yet: then no file in the tree is it)
    else:
        inside = linked.get((st.st_dev, st.st_ino))
        if inside is not None:
            extra[inside] = WORKSPACE_POLICY_FILE
    own = OwnFiles(root)
    for identity, inside in linked.items():
        own.refuse(inside, identity, action="change")


def check_foreign(journal: Journal, dirs: DirectoryHandles, where: str) -> None:
    """Refuse (before anything is done) to roll back a journal this user's patchtx did not sign,
    which the user asked for (``recover --trust-foreign``), if it would change a path the policy in
    force protects (under its own name or one a symbolic link gives it) or a policy file: its
    bytes are someone else's, and the policy holds for them as for a patch's. (A foreign roll back
    never writes into an existing file, so a hard-linked twin keeps what it holds.)"""
    from ..workspace.globs import GlobSet, GlobWorkExceeded  # (off a one-line edit's path)
    policy = options_for(dirs.root, caller="recover()")[0]
    paths = sorted({e.path for e in journal.entries} | set(journal.created_dirs)
                   | {d.path for d in journal.removed_dirs})
    names = other_names(dirs, dirs.root, policy.protected + policy.hidden, {}, paths)
    extra = policy_files(dirs.root)
    protection = GlobSet(policy.protected)
    hiding = GlobSet(policy.hidden)
    for path in paths:
        for name in (path, *(other for other, _how in names.get(path, ()))):
            try:
                pattern = protection.first_match(name) if policy.protected else None
                hidden = hiding.first_match(name) if policy.hidden else None
            except GlobWorkExceeded:
                why = "checking it against the protected patterns costs too much"
            else:
                if hidden is not None:
                    why = f"the host hides {name} (the pattern '{hidden}')"
                elif pattern is not None:
                    why = f"{name} is protected by the pattern '{pattern}'"
                elif not policy.allow_policy_edit and policy_file_rules(name, extra) is not None:
                    why = f"{name} holds patchtx policy"
                else:
                    continue
            raise PolicyError(
                f"Refusing to roll back the foreign journal {where}: it would change {path}, and {why}.",
                hint="A journal this user's patchtx did not sign is rolled back (--trust-foreign) only"
                     " within the policy in force (the host's config or PATCHTX_POLICY can widen it:"
                     " allow-policy-edit, protected). Look at it; move .patchtx/journal away to"
                     " discard it.",
                path=path, details={"journal": where})


def other_names(dirs: DirectoryHandles, root: str, protected: tuple[str, ...],
                linked: dict[tuple[int, int], str], paths: list[str]) -> Names:
    """Every other name of ``paths`` in the tree: the hard links of the files in ``linked`` (by
    device and inode; the whole tree is looked through), and, when patterns are ``protected``,
    the names symbolic links give them (looked for where a pattern could name one)."""
    names: Names = {}
    if not linked and not protected:
        return names
    links: list[tuple[str, str]] = []
    starts = _starts(protected, dirs, root, links) if protected else []
    if linked:
        starts = [""]
    walk = _Walk(dirs, root, linked, links if protected else None)
    for start in starts:
        walk.run(start)
    for path, twins in walk.twins.items():
        names.setdefault(path, []).extend((twin, "hard link") for twin in twins)
    if links:
        _add_link_names(names, paths, links)
    return names


def symbolic_links(dirs: DirectoryHandles, root: str, patterns: tuple[str, ...]) -> list[tuple[str, str]]:
    """Every symbolic link in the tree that one of ``patterns`` could name, with the workspace
    path it leads to (looked for as ``other_names`` looks: below each pattern's literal folders),
    for ``link_names``. Reads (``reads``) list them once and ask about many paths."""
    links: list[tuple[str, str]] = []
    walk = _Walk(dirs, root, {}, links)
    for start in _starts(patterns, dirs, root, links):
        walk.run(start)
    return links


def link_names(path: str, links: list[tuple[str, str]]) -> list[str]:
    """The names ``links`` (from ``symbolic_links``) give ``path``."""
    names: Names = {}
    _add_link_names(names, [path], links)
    return [name for name, _how in names.get(path, ())]


def hard_links(dirs: DirectoryHandles, root: str, path: str, identity: tuple[int, int]) -> list[str]:
    """The other names in the tree of the file ``path`` whose (device, inode) is ``identity``
    (the whole tree is looked through, the state folder aside; beyond ``MAX_ENTRIES``, PolicyError)."""
    walk = _Walk(dirs, root, {identity: path}, None)
    walk.run("")
    return walk.twins.get(path, [])


class _Walk:
    """A walk of folders from the root's descriptor, never through a symbolic link, one folder
    open at a time beyond what ``dirs`` caches (so that it fits any descriptor budget)."""

    def __init__(self, dirs: DirectoryHandles, root: str, linked: dict[tuple[int, int], str],
                 links: list[tuple[str, str]] | None) -> None:
        self.dirs = dirs
        self.root = root
        self.linked = linked
        self.inodes = {ino for _dev, ino in linked}
        self.links = links
        self.twins: dict[str, list[str]] = {}
        self.entries = 0

    def run(self, start: str) -> None:
        stack = [start]
        while stack:
            folder = stack.pop()
            try:
                fd = self.dirs.open(folder)
            except (OSError, UnsafePathError):
                continue  # gone, or no longer a folder: nothing of it can name a target
            with os.scandir(fd) as entries:
                found = [(entry.name, entry.is_symlink(), entry.is_dir(follow_symlinks=False), entry.inode())
                         for entry in entries]
            self.entries += len(found)
            if self.entries > MAX_ENTRIES:
                raise _too_many(sorted(self.linked.values()) or [folder])
            for name, is_link, is_dir, inode in found:
                rel = f"{folder}/{name}" if folder else name
                if is_link:
                    if self.links is not None:
                        real = under(self.root, os.path.realpath(os.path.join(self.root, rel)))
                        if real is not None:
                            self.links.append((rel, real))
                elif is_dir:
                    if rel != STATE_DIR:  # its journal folder holds this very commit's links
                        stack.append(rel)
                elif inode in self.inodes:
                    st = self.dirs.fs.lstat(fd, name)
                    owner = None if st is None else self.linked.get((st.st_dev, st.st_ino))
                    if owner is not None and owner != rel:
                        self.twins.setdefault(owner, []).append(rel)


def _add_link_names(names: Names, paths: list[str], links: list[tuple[str, str]]) -> None:
    """The names ``links`` (a link's path, and the workspace path it leads to) give each of
    ``paths``, and the names those give in turn."""
    for path in paths:
        known = {path}
        frontier = [path]
        for _round in range(_LINK_ROUNDS):
            following = []
            for name in frontier:
                for link, real in links:
                    if name == real or name.startswith(real + "/"):
                        alias = link + name[len(real):]
                        if alias not in known:
                            known.add(alias)
                            following.append(alias)
                            names.setdefault(path, []).append((alias, "symbolic link"))
            if not following:
                break
            frontier = following


def _starts(patterns: tuple[str, ...], dirs: DirectoryHandles, root: str,
            links: list[tuple[str, str]]) -> list[str]:
    """Where a symbolic link that a pattern names may be: below each pattern's literal leading
    folders (the whole tree for a pattern naming a file at any depth). A link met on those
    folders themselves is recorded in ``links`` at once."""
    starts: set[str] = set()
    for pattern in patterns:
        body = pattern.rstrip("/")
        if "/" not in body:
            return [""]
        folder: str | None = ""
        for part in body.removeprefix("/").split("/")[:-1]:
            if any(c in part for c in "*?[\\"):
                break
            path = f"{folder}/{part}" if folder else part
            try:
                parent_fd = dirs.open(folder or "")
            except (OSError, UnsafePathError):
                folder = None
                break
            st = dirs.fs.lstat(parent_fd, part)
            if st is None or not stat.S_ISDIR(st.st_mode):
                if st is not None and stat.S_ISLNK(st.st_mode):
                    real = under(root, os.path.realpath(os.path.join(root, path)))
                    if real is not None:
                        links.append((path, real))
                        if os.path.isdir(os.path.join(root, real)):
                            # The pattern goes on in the folder the link leads to, where a link
                            # further down may give the file the name it protects.
                            folder = real
                            continue
                folder = None
                break
            folder = path
        if folder is not None:
            starts.add(folder)
    ordered = sorted(starts)
    return [s for s in ordered if not any(o != s and (o == "" or s.startswith(o + "/")) for o in ordered)]


def _too_many(paths: list[str]) -> PolicyError:
    return PolicyError(
        f"Refusing to change {', '.join(paths[:3])}: its other names could not be looked for (more"
        f" than {MAX_ENTRIES} entries in the workspace).",
        hint="A protected file is protected under every name it has (its hard links, the symbolic"
             " links leading to it); break the hard link, or narrow the protected patterns.",
        path=paths[0])
