"""What a patch may do here: a ceiling the host sets, which the workspace may only tighten.

The host is whoever runs patchtx: its per-user config file (``$PATCHTX_CONFIG``, else
``$XDG_CONFIG_HOME/patchtx/config.toml``, else ``~/.config/patchtx/config.toml``), then the
``PATCHTX_POLICY`` environment variable, then explicit options (CLI flags, API keywords, ``patchtx
mcp`` options), each overriding the one before. Both files and the variable use the keys of the
workspace table below, at top level (the variable as an inline table: ``allow-delete = false,
protected = [".github/**"]``).

The workspace (a cloned repository may hold anything) may only tighten that ceiling, with a
``[tool.patchtx]`` table in the root's ``pyproject.toml`` and/or a root ``.patchtx.toml`` (top-level
keys), for example::

    [tool.patchtx]
    allow-delete = false
    protected = ["migrations/**", "*.lock", ".github/"]
    max-files = 200
    max-bytes = 5_000_000
    max-patch-bytes = 1_000_000
    history-count = 20          # undo history: transactions kept (0: none)
    history-bytes = 67_108_864  # ... and bytes of before-images kept

Tightening: an ``allow-*`` or ``first-match`` holds only if host and workspace both allow it;
``strict`` holds if either asks for it; ``protected`` globs add up; caps take the smaller. The
undo-history limits are settings, not permissions: the workspace's replace the host config's,
explicit arguments replace both. The workspace's policy itself (the ``[tool.patchtx]`` table, the
whole ``.patchtx.toml``) is protected from patches unless the host sets ``allow-policy-edit``:
otherwise a patch could lift the policy that refuses the next one.

``options_for`` is the one place where a caller's keyword arguments, the host's settings and the
workspace's policy become the ``PlanOptions`` and ``CommitOptions`` values (``patchtx.options``).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

from .._record import replace
from ..errors import HiddenPathError, InvalidArgumentsError, PolicyError, UnsafePathError
from ..model import ChangeKind
from ..options import (
    ALL_KEYWORDS,
    CAP,
    COMMIT_KEYWORDS,
    HOST,
    OPTIONS,
    PERMISSION,
    PLAN_KEYWORDS,
    REQUIREMENT,
    STRICTER,
    UNION,
    CommitOptions,
    PlanOptions,
    check_keywords,
)
from ._fd import READ_FLAGS, read_whole, require_posix
from .paths import path_problem, root_path, under

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from ..model import FileChange, PathTarget
    from .globs import GlobSet

CONFIG_ENV = "PATCHTX_CONFIG"
POLICY_ENV = "PATCHTX_POLICY"
PYPROJECT = "pyproject.toml"
WORKSPACE_POLICY_FILE = ".patchtx.toml"
POLICY_FILES = (PYPROJECT, WORKSPACE_POLICY_FILE)

_KEYS = {row.option.key: row.name for row in OPTIONS if row.option.key is not None}
"""Policy-table key -> option name."""
_COMBINE = {row.name: row.option.combine for row in OPTIONS}
_TYPES = {row.name: row.type for row in OPTIONS}
"""Each option's annotation, as written (``bool``, ``int | None``, ``float``...)."""
_CHOICES = {row.name: row.option.choices for row in OPTIONS if row.option.choices}
"""The values of the options that take one of a few (``syntax``), least strict first."""
_PATTERNS = frozenset(row.name for row in OPTIONS if row.type.startswith("tuple[str"))
"""The options that are lists of glob patterns (``protected``, ``hidden``)."""


def protected_by(options: PlanOptions, path: str) -> str | None:
    """The first of ``options.protected`` that matches ``path`` (linear time, see ``globs``)."""
    if not options.protected:
        return None
    from .globs import compiled  # (off a one-line edit's path)

    for pattern, matcher in zip(options.protected, compiled(options.protected), strict=True):
        if matcher.matches(path):
            return pattern
    return None


def _invalid(path: str, why: str) -> PolicyError:
    return PolicyError(f"Invalid patchtx policy in {path}: {why}.",
                       hint="Fix the configuration; see docs/api.md for the keys.", path=path)


def _problem(name: str, value: object) -> str | None:
    """Why ``value`` cannot be the option ``name`` (a field of PlanOptions or CommitOptions), or
    None. One rule for the policy files and the keyword arguments: a string given for
    ``protected`` was read as one pattern per character (none of them the path meant), and a
    string cap failed inside planning with a TypeError."""
    kind = _TYPES[name]
    if name in _CHOICES:
        return None if value in _CHOICES[name] else f"must be one of {', '.join(_CHOICES[name])}"
    if kind.startswith("str"):
        return None if isinstance(value, str) and value.strip() else "must be a non-empty string"
    if name in _PATTERNS:
        if isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
            return None
        return "must be a list of glob strings"
    if kind.startswith("bool"):
        return None if isinstance(value, bool) else "must be true or false"
    if kind.startswith("int"):
        fits = isinstance(value, int) and not isinstance(value, bool) and value >= 0
        return None if fits else "must be a non-negative integer"
    fits = isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < float("inf")
    return None if fits else "must be a non-negative number"


def _values(table: dict[str, Any], where: str, *, workspace: bool = False) -> dict[str, Any]:
    """PlanOptions field values of a policy table (validated), keyed by field name; a
    ``workspace``'s may not set the host's own options (``HOST``)."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        name = _KEYS.get(key)
        if name is None:
            raise _invalid(where, f"unknown key '{key}' (known: {', '.join(_KEYS)})")
        if workspace and _COMBINE[name] == HOST:
            raise _invalid(where, f"'{key}' is the host's alone (its config, {POLICY_ENV}, options): a"
                                  " workspace may not hide its own files from the model asked to work on"
                                  " them")
        why = _problem(name, value)
        if why is not None:
            raise _invalid(where, f"'{key}' {why}")
        if name in _PATTERNS:
            from .globs import MAX_PATTERN_LENGTH, MAX_PATTERNS  # (off a one-line edit's path)

            if len(value) > MAX_PATTERNS or any(len(pattern) > MAX_PATTERN_LENGTH for pattern in value):
                raise _invalid(where, f"'{key}' holds more than {MAX_PATTERNS} patterns, or one longer than"
                                      f" {MAX_PATTERN_LENGTH} characters (each costs time on every patch)")
        values[name] = tuple(value) if name in _PATTERNS else value
    return values


def _parse_toml(text: bytes, where: str) -> dict[str, Any]:
    import tomllib  # (off a one-line edit's path: read only where a policy file exists)

    try:
        parsed: dict[str, Any] = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _invalid(where, str(exc)) from None
    except RecursionError:  # (tomllib reads nested arrays and tables recursively)
        raise _invalid(where, "its values are nested too deeply to read") from None
    return parsed


def config_path() -> str:
    """The per-user policy file (it need not exist)."""
    explicit = os.environ.get(CONFIG_ENV)
    if explicit:
        return explicit
    xdg = os.environ.get("XDG_CONFIG_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "patchtx", "config.toml")


def _host_values() -> dict[str, Any]:
    """The host's settings before its explicit arguments: the per-user config file, then
    ``PATCHTX_POLICY``, as field values keyed by field name."""
    values: dict[str, Any] = {}
    path = config_path()
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        raw = None
    except OSError as exc:
        raise _invalid(path, f"unreadable ({exc.strerror})") from None
    if raw is not None:
        values.update(_values(_parse_toml(raw, path), path))
    inline = os.environ.get(POLICY_ENV, "").strip()
    if inline:
        where = f"the {POLICY_ENV} environment variable"
        try:
            table = _parse_toml(inline.encode("utf-8"), where)
        except PolicyError:
            table = _parse_toml(f"policy = {{ {inline} }}".encode(), where)["policy"]
        values.update(_values(table, where))
    return values


def tighten(host: PlanOptions, workspace: dict[str, Any]) -> PlanOptions:
    """``host`` narrowed by a workspace's values: never wider than ``host`` in any respect."""
    changes: dict[str, Any] = {}
    for name, value in _only(PLAN_KEYWORDS, workspace).items():
        current = getattr(host, name)
        combine = _COMBINE[name]
        if combine == PERMISSION:
            changes[name] = current and value
        elif combine == UNION:
            changes[name] = tuple(dict.fromkeys((*current, *value)))
        elif combine == CAP:
            changes[name] = value if current is None else min(current, value)
        elif combine == REQUIREMENT:
            changes[name] = current or value
        elif combine == STRICTER:
            changes[name] = max(current, value, key=_CHOICES[name].index)
    return replace(host, **changes) if changes else host


def workspace_policy(root: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The workspace's policy tables (``[tool.patchtx]`` of pyproject.toml, .patchtx.toml), as
    field values. A policy file that is a symbolic link is read where it leads if that is inside
    the root (a monorepo's shared pyproject.toml); one leading outside is refused, since planning
    never reads outside the root (see ``policy_files`` for how its target is protected)."""
    tables = []
    folder = root_path(root)
    for name in POLICY_FILES:
        path = os.path.join(folder, name)
        raw = _read_policy_file(path, folder)
        if raw is not None:
            table = policy_table(name, raw, where=path)
            if table:
                tables.append(_values(table, path, workspace=True))
    return tables


def _read_policy_file(path: str, root: str) -> bytes | None:
    require_posix()  # (O_NOFOLLOW: a platform without it gets unsupported_platform, not a traceback)
    try:
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise _invalid(path, f"unreadable ({exc.strerror})") from None
        real = os.path.realpath(path)
        if under(os.path.realpath(root), real) is None:
            raise _invalid(path, f"it is a symbolic link that leads outside the workspace (to {real});"
                                 " patchtx reads a workspace's policy only inside it") from None
        return _read_policy_file(real, root)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _invalid(path, "it is not a regular file")
        return read_whole(fd, st.st_size)
    finally:
        os.close(fd)


def policy_table(name: str, raw: bytes, *, where: str) -> dict[str, Any] | None:
    """The patchtx policy a policy file holds (None: none). PolicyError if it cannot be read."""
    if name == PYPROJECT:
        if b"patchtx" not in raw:
            return None  # the common case, decided without parsing
        tool = _parse_toml(raw, where).get("tool", {})
        table = tool.get("patchtx") if isinstance(tool, dict) else None
        if table is None:
            return None
        if not isinstance(table, dict):
            raise _invalid(where, "[tool.patchtx] must be a table")
        return table
    return _parse_toml(raw, where)


def _policy_of(name: str, raw: bytes | None) -> object:
    """What a policy file's contents say about patchtx policy, for comparison: the table, None
    (no policy, or no file), or the raw bytes of a file that cannot be read as TOML."""
    if raw is None:
        return None
    try:
        return policy_table(name, raw, where=name)
    except PolicyError:
        return raw


def _only(names: frozenset[str], values: Mapping[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in values.items() if name in names}


def _given(keywords: Mapping[str, Any], accepted: frozenset[str], caller: str) -> dict[str, Any]:
    """The keywords a caller gave (None: not given), checked as Python checks a signature."""
    check_keywords(keywords, accepted, caller)
    given = {name: value for name, value in keywords.items() if value is not None}
    for name, value in given.items():
        why = _problem(name, value)
        if why is not None:
            raise InvalidArgumentsError(
                f"{caller} got {name}={value!r}: {name} {why}.",
                hint="Pass the option as its type says (see docs/api.md for every option).",
                details={"option": name})
    for name in _PATTERNS & given.keys():
        given[name] = tuple(given[name])
    return given


def options_for(
    root: str | os.PathLike[str],
    keywords: Mapping[str, Any] | None = None,
    *,
    accepted: frozenset[str] = ALL_KEYWORDS,
    caller: str = "options_for()",
    defaults: Mapping[str, Any] | None = None,
) -> tuple[PlanOptions, CommitOptions]:
    """The options in force at ``root`` for a caller's keyword arguments (the fields of
    ``PlanOptions`` and ``CommitOptions``; None means not given): the host's ceiling (its config,
    ``PATCHTX_POLICY``, then the arguments) tightened by the workspace's policy, with the
    arguments' undo-history limits on top. A keyword outside ``accepted`` is a TypeError naming
    ``caller``, as an unknown keyword argument of any function is. ``defaults`` replace the
    defaults of ``options`` for this caller, below the host's config (the agent surfaces' syntax
    guard is ``refuse``)."""
    given = _given(keywords or {}, accepted, caller)
    host = {**(defaults or {}), **_host_values(), **given}
    plan_options = PlanOptions(**_only(PLAN_KEYWORDS, host))
    commit_options = CommitOptions(**_only(COMMIT_KEYWORDS, host))
    for table in workspace_policy(root):
        plan_options = tighten(plan_options, table)
        commit_options = replace(commit_options, **_only(COMMIT_KEYWORDS, table))
    return plan_options, replace(commit_options, **_only(COMMIT_KEYWORDS, given))


def hidden_for(keywords: Mapping[str, Any] | None = None, *, caller: str = "hidden_for()",
               defaults: Mapping[str, Any] | None = None) -> tuple[str, ...]:
    """The patterns the host hides from the model (``hidden``), for a caller's keyword arguments
    (those of ``options_for``, checked as it checks them). The host's alone (``HOST``), so no
    workspace policy is read: a ``view`` works in a workspace whose policy cannot be read (the
    model may be there to fix it)."""
    given = _given(keywords or {}, ALL_KEYWORDS, caller)
    host = {**(defaults or {}), **_host_values(), **given}
    return tuple(host.get("hidden", ()))


def hidden_error(shown: str, pattern: str, *, action: str = "read",
                 other: tuple[str, str] | None = None) -> HiddenPathError:
    """The one refusal of a path the host hides (``shown``, as the caller named it), whatever was
    asked of it and whether it exists or not: it names the path and the pattern, never the file's
    contents. ``other``: the name that matched and what makes it one ("hard link", "symbolic
    link"), when it is another name of the file."""
    what = ("the host hides it" if other is None
            else f"it is the same file as {other[0]} (a {other[1]}), which the host hides")
    return HiddenPathError(
        f"Refusing to {action} {shown}: {what} from this tool (the pattern '{pattern}').",
        hint="patchtx never reads, shows, lists or writes a path the host hides (--hide, hidden in its"
             " config), under any of its names; leave it out.",
        path=shown, details={"pattern": pattern})


def policy_files(root: str) -> dict[str, str]:
    """Workspace-relative paths that hold policy under a name that is not a policy file's own,
    each with the name whose rules it follows (``pyproject.toml``: its ``[tool.patchtx]`` table;
    anything else: the whole file): the host's config when it lies under the root (as named, and
    where it leads), and where the root's policy files lead when they are symbolic links."""
    found: dict[str, str] = {}
    config = os.path.abspath(config_path())
    for candidate in (os.path.normpath(config), os.path.realpath(config)):
        rel = under(root, candidate)
        if rel is not None:
            found[rel] = WORKSPACE_POLICY_FILE
    for name in POLICY_FILES:
        path = os.path.join(root, name)
        if os.path.islink(path):
            rel = under(root, os.path.realpath(path))
            if rel is not None:
                found[rel] = name
    return found


def policy_file_rules(path: str, extra: Mapping[str, str]) -> str | None:
    """Whether ``path`` holds policy, and by which file's rules (see ``policy_files``): a
    ``pyproject.toml`` or ``.patchtx.toml`` in any folder (a nested workspace's policy), or one of
    ``extra``."""
    name = path.rpartition("/")[2]
    if name in POLICY_FILES:
        return name
    return extra.get(path)


def _refused(path: str, why: str, hint: str, **details: Any) -> PolicyError:
    return PolicyError(f"Refusing to change {path}: {why}.", hint=hint, path=path, details=details)


def check_changes(
    options: PlanOptions,
    targets: Sequence[PathTarget],
    changes: Sequence[FileChange],
    *,
    names: Mapping[str, Sequence[tuple[str, str]]] | None = None,
    extra_policy_files: Mapping[str, str] | None = None,
) -> None:
    """The one check of what a plan does against the policy in force: the planner runs it on the
    plan it builds, and the commit on every plan it is handed (``txn.gate``), with every other
    name of each file (``names``: path -> (name, how), a symbolic link's or a hard link's).

    Caps on files and bytes; deletes (a move's source counts as a move); moves; Adds and Moves
    onto an existing file; protected paths and policy files, under every name; copies from a
    protected file. PolicyError (UnsafePathError for a hard link into ``.git``) otherwise."""
    if options.max_files is not None and len(targets) > options.max_files:
        raise PolicyError(
            f"Refusing the patch: it changes {len(targets)} files, more than the limit of "
            f"{options.max_files}.", hint="Split it into smaller patches, or raise max-files.",
            details={"files": len(targets), "limit": options.max_files})
    if options.max_bytes is not None:
        changed = sum(len(t.after if t.after is not None else t.before or b"") for t in targets)
        if changed > options.max_bytes:
            raise PolicyError(
                f"Refusing the patch: it changes {changed} bytes, more than the limit of "
                f"{options.max_bytes}.", hint="Split it into smaller patches, or raise max-bytes.",
                details={"bytes": changed, "limit": options.max_bytes})
    if not (options.allow_delete and options.allow_move and options.allow_overwrite):
        written = {t.path for t in targets if t.after is not None}
        # A source counts as moved only when its destination is written (a hand-built plan could
        # call a plain delete a move).
        moved = {c.source for c in changes
                 if c.kind is ChangeKind.MOVE and c.source is not None and c.path in written}
        for target in targets:
            if target.before is None or target.after is not None:
                continue
            if target.path in moved and not options.allow_move:
                raise _refused(target.path, "moving files is not allowed here",
                               "Resend with allow_move set to true if the user agrees to the move.",
                               permission="allow_move")
            if target.path not in moved and not options.allow_delete:
                raise _refused(target.path, "deleting files is not allowed here",
                               "Resend with allow_delete set to true if the user agrees to the deletion.",
                               permission="allow_delete")
        if not options.allow_overwrite:
            # Not an overwrite: filling an empty file (a diff's '@@ -0,0'), nor a rename onto a
            # file the same plan renames away (names that swap or rotate): nothing is lost.
            renamed_away = {c.source for c in changes if c.kind is ChangeKind.MOVE}
            for change in changes:
                if (change.kind in (ChangeKind.ADD, ChangeKind.MOVE) and change.overwrote
                        and change.path not in renamed_away):
                    raise _refused(change.path, "the change replaces an existing file, which is not allowed"
                                   " here", "Allow overwriting explicitly (--allow-overwrite).",
                                   permission="allow_overwrite")
    names = names or {}
    extra = extra_policy_files if extra_policy_files is not None else {}
    protection: GlobSet | None = None
    hiding: GlobSet | None = None
    exceeded: type[Exception] | tuple[()] = ()
    if options.protected or options.hidden:  # (globs is loaded only then: not on a small edit's path)
        from .globs import GlobSet, GlobWorkExceeded  # (off a one-line edit's path)

        exceeded = GlobWorkExceeded
        protection = GlobSet(options.protected) if options.protected else None
        hiding = GlobSet(options.hidden) if options.hidden else None
    try:
        for target in targets:
            _check_every_name(options, protection, hiding, target, names.get(target.path, ()), extra)
        _check_copies(protection, hiding, changes)
    except exceeded:
        patterns = len(options.protected) + len(options.hidden)
        raise PolicyError(
            f"Refusing the patch: checking its {len(targets)} files against the {patterns}"
            " protected and hidden patterns in force costs too much (more than the bound patchtx sets"
            " on that work).", hint="Use fewer or simpler protected patterns (one folder pattern covers"
            " everything inside it), or split the patch.",
            details={"patterns": patterns, "files": len(targets)}) from None


def _check_copies(protection: GlobSet | None, hiding: GlobSet | None, changes: Sequence[FileChange]) -> None:
    for change in changes:
        source = change.copied_from
        if source is None:
            continue
        pattern = None if hiding is None else hiding.first_match(source)
        if pattern is not None:
            raise hidden_error(source, pattern, action="copy")
        pattern = None if protection is None else protection.first_match(source)
        if pattern is not None:
            raise _refused(change.path, f"it would be a copy of {source}, which is protected by the"
                           f" pattern '{pattern}'", "A copy would carry the protected file's contents;"
                           " leave it out of the patch.", pattern=pattern, copied_from=source)


def _check_every_name(options: PlanOptions, protection: GlobSet | None, hiding: GlobSet | None,
                      target: PathTarget, others: Sequence[tuple[str, str]], extra: Mapping[str, str]) -> None:
    path = target.path
    for name, how in ((path, ""), *others):
        alias = "" if not how else f" (the same file as {name}, through a {how})"
        if how:
            why = path_problem(name)
            if why is not None:
                raise UnsafePathError(
                    f"Refusing to change {path}: it is the same file as {name} (a {how}), and {why}.",
                    hint="patchtx never writes a file under a name it may not write; edit it with another"
                         " tool, or break the link.", path=path, details={"other_name": name})
        pattern = None if hiding is None else hiding.first_match(name)
        if pattern is not None:
            raise hidden_error(path, pattern, action="change", other=(name, how) if how else None)
        pattern = None if protection is None else protection.first_match(name)
        if pattern is not None:
            raise _refused(path, f"it is protected by the pattern '{pattern}'{alias}",
                           "Protected paths are set by the workspace's [tool.patchtx] table or the "
                           "caller; leave this file out of the patch.", pattern=pattern,
                           **({"other_name": name} if how else {}))
        rules = None if options.allow_policy_edit else policy_file_rules(name, extra)
        if rules is not None and _policy_of(rules, target.before) != _policy_of(rules, target.after):
            what = "the [tool.patchtx] table" if rules == PYPROJECT else "the whole file"
            raise _refused(
                path, f"the patch changes the patchtx policy in {name} ({what}){alias}",
                "A patch may not loosen or rewrite the policy that governs patches; leave that"
                " part out of the patch. The host can allow it (--allow-policy-edit,"
                " allow-policy-edit in its config).", policy_file=name)
