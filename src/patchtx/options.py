"""What a caller can set, one value per stage: ``PlanOptions`` for planning, ``CommitOptions`` for
the commit. Each default is written here and nowhere else.

Every entry point (``apply_patch``, ``plan_patch``, ``apply_plan``, ``Transaction``,
``history.undo``, the CLI, the agent tools) takes these fields as keyword arguments, None meaning
"not given", and builds the two values through one function, ``policy.options_for``: the host's
ceiling tightened by the workspace's policy (see ``policy``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from ._record import field, metadata, record

if TYPE_CHECKING:
    from collections.abc import Iterable

PERMISSION, CAP, UNION, SETTING, STRICTER = "permission", "cap", "union", "setting", "stricter"
REQUIREMENT = "requirement"
"""``Option.combine`` of a restriction the host or the workspace may ask for (``strict``): it
holds if either asks."""
HOST = "host"
"""``Option.combine`` of a setting only the host may make (``hidden``): a workspace's policy that
names it is refused, since a cloned repository could use it to hide its own files (a build
script, a test hook) from the model asked to review them."""
SAME = "the field's default"
"""``Option.tool_default`` when a tool call's default is the field's own."""


@record
class Option:
    """How one option shows on every surface: the CLI, the policy files, tool calls and the MCP
    server are built from these (``OPTIONS``); the library's keyword is the field itself."""

    help: str
    """One line: the command line's --help."""
    flag: tuple[str, ...] = ()
    """The command line's spellings; none: not on the command line. A ``--no-`` flag turns a
    default-on option off."""
    metavar: str | None = None
    key: str | None = None
    """The key in a policy table (the host's config, ``PATCHTX_POLICY``, ``[tool.patchtx]``);
    None: not a policy."""
    combine: str = SETTING
    """How the workspace's policy meets the host's: ``PERMISSION`` (holds if both allow it),
    ``CAP`` (the smaller), ``UNION`` (both lists), ``SETTING`` (the workspace's replaces the
    host config's; an explicit argument replaces both), ``STRICTER`` (the stricter of the two
    modes, ``syntax``), ``HOST`` (the workspace may not set it)."""
    choices: tuple[str, ...] = ()
    """The values a string option may take (none: any non-empty string); for ``STRICTER``, from
    the least to the most strict."""
    tool: str | None = None
    """What the argument does, for a model (function tools, MCP); None: not a tool-call argument.
    A tool call narrows a permission of the host's; it never widens one."""
    tool_default: Any = SAME


def option(default: Any, help: str, **surfaces: Any) -> Any:
    """A field of an options record, with its default and how each surface shows it."""
    return field(default=default, metadata=Option(help, **surfaces))


@record
class PlanOptions:
    """What a patch may do: permissions and caps (the host's ceiling, tightened by the workspace),
    and how an already applied patch is answered."""

    allow_overwrite: bool = option(
        False, "let Add and Move replace existing files (as Codex does)", flag=("--allow-overwrite",),
        key="allow-overwrite", combine=PERMISSION)
    """Let Add and Move replace an existing file (Codex's behaviour); refused by default."""
    allow_delete: bool = option(
        True, "refuse patches that delete", flag=("--no-delete",), key="allow-delete",
        combine=PERMISSION, tool_default=False,
        tool="Permit deleting files ('*** Delete File', or a diff's deleted file). Deleting is "
             "refused unless this is true.")
    allow_move: bool = option(
        True, "refuse patches that move", flag=("--no-move",), key="allow-move", combine=PERMISSION,
        tool="Permit renames ('*** Move to', or a diff's rename).")
    first_match: bool = option(
        False, "take the first match of an ambiguous hunk (as Codex does)", flag=("--first-match",),
        key="first-match", combine=PERMISSION)
    """Take the first occurrence of an ambiguous hunk (Codex's behaviour) instead of refusing."""
    skip_applied: bool = option(
        False, "succeed, changing nothing, when the patch is already applied (refused by default)",
        flag=("--skip-applied",),
        tool="If the patch is already applied as a whole (every change already in the files), "
             "succeed changing nothing instead of refusing it as already_applied. A patch applied "
             "only in part is not covered: across files it is refused (partly_applied); within "
             "one file the hunks already in place are left out and the others applied, reported "
             "as the repair applied_hunk_skipped (refused as partly_applied under strict, or "
             "when a hunk in place only inserts lines).")
    """A patch that is already applied as a whole succeeds, changing nothing (refused by default,
    with the kind ``already_applied``)."""
    protected: tuple[str, ...] = option(
        (), "refuse patches touching paths that match GLOB (repeatable)", flag=("--protect",),
        metavar="GLOB", key="protected", combine=UNION)
    """Glob patterns of workspace paths no patch may touch (``**`` spans folders)."""
    hidden: tuple[str, ...] = option(
        (), "hide paths that match GLOB from the model: never shown, listed, quoted or written"
        " (repeatable; the host's alone)", flag=("--hide",), metavar="GLOB", key="hidden", combine=HOST)
    """Glob patterns of workspace paths hidden from the model (the ``protected`` syntax): patchtx
    never reads them on a caller's behalf, under any of their names, so ``view`` refuses them,
    folder listings leave them out, no hint, diff or error shows their contents, and every patch
    naming one is refused (``hidden_path``) before the file is read, whether it exists or not.
    Set by the host only (its config, ``PATCHTX_POLICY``, options); a workspace's policy that
    names it is refused (docs/guarantees.md, section 13)."""
    max_files: int | None = option(
        None, "refuse patches that change more than N files", flag=("--max-files",), metavar="N",
        key="max-files", combine=CAP)
    max_bytes: int | None = option(
        None, "refuse patches that change more than N bytes", flag=("--max-bytes",), metavar="N",
        key="max-bytes", combine=CAP)
    """Cap on bytes changed: the size of every file written plus every file removed."""
    max_patch_bytes: int | None = option(
        None, "refuse patch texts longer than N bytes", flag=("--max-patch-bytes",), metavar="N",
        key="max-patch-bytes", combine=CAP)
    allow_policy_edit: bool = option(
        False, "let patches change the workspace's patchtx policy ([tool.patchtx], .patchtx.toml)",
        flag=("--allow-policy-edit",), key="allow-policy-edit", combine=PERMISSION)
    """Let a patch change the workspace's policy (``[tool.patchtx]``, ``.patchtx.toml``)."""
    allow_placeholders: bool = option(
        False, "write added lines that are lazy placeholders ('# ... existing code ...') as they "
        "are (refused by default)", flag=("--allow-placeholders",), key="allow-placeholders",
        combine=PERMISSION)
    """Write an added line that is a lazy placeholder for code left out (``// ... existing code
    ...``, ``# ... rest of the function unchanged ...``, a bare ``...`` in a C-like file) where the
    lines it replaces and the file hold none: refused by default as ``placeholder``, since the
    lines it stands for would be lost (``patchtx.plan.placeholders``, docs/format.md)."""
    strict: bool = option(
        False, "read patches as Codex does: refuse malformed shapes instead of repairing them",
        flag=("--strict",), key="strict", combine=REQUIREMENT)
    """Read patches exactly as Codex's grammar does: no repair of malformed shapes (a JSON
    wrapper, line-number prefixes...: docs/format.md, "Repairs"), which are refused instead."""
    syntax: str = option(
        "off", "the syntax guard: off, warn (apply and report new syntax errors) or refuse (refuse a"
        " patch that leaves a file unparseable); default: the config's, else off for apply, warn for"
        " check, refuse for mcp and tool calls", flag=("--syntax",), metavar="MODE", key="syntax",
        combine=STRICTER, choices=("off", "warn", "refuse"))
    """The syntax guard (``patchtx.plan.syntax``): ``off``, ``warn`` (apply, report new syntax errors)
    or ``refuse`` (refuse a patch that leaves a file with new syntax errors). Off by default for
    the library and ``patchtx apply`` (a parse can cost more than the apply); the agent surfaces
    (MCP, tool calls) default to ``refuse``. A workspace may only make it stricter."""


_HISTORY_BYTES = 64 * 1024 * 1024


@record
class CommitOptions:
    """How a plan is committed, and how much of it the undo history keeps."""

    durable: bool = option(
        True, "skip fsync (throw-away trees): keeps atomicity, drops durability", flag=("--no-fsync",))
    """fsync every write; False keeps atomicity against a crashed process, not against power loss."""
    lock_timeout: float = option(
        30.0, "how long to wait for another transaction's lock (default: 30)", flag=("--lock-timeout",),
        metavar="SECONDS")
    """Seconds to wait for the workspace lock held by another transaction."""
    history_count: int = option(
        20, "keep at most N transactions in the undo history, 0 for none (default: the workspace's "
            "history-count, else 20)", flag=("--history-count",), metavar="N", key="history-count")
    """Committed transactions whose before-images are kept for undo (0 turns history off)."""
    history_bytes: int = option(
        _HISTORY_BYTES, "keep at most N bytes of originals in the undo history (default: the "
        f"workspace's history-bytes, else {_HISTORY_BYTES // 2**20} MiB)", flag=("--history-bytes",),
        metavar="N", key="history-bytes")
    """Cap on the before-image bytes the undo history keeps (oldest transactions go first)."""
    verify: str | None = option(
        None, "run CMD (a shell command, in the root) once the change is written, before it is"
        " committed: keep the change only if CMD exits 0, else roll it back", flag=("--verify",),
        metavar="CMD")
    """A shell command run in the root before the commit point (``patchtx.txn.verify``): the change is
    kept only if it exits 0. The host's alone: no policy file or tool call can set it."""
    verify_timeout: float = option(
        600.0, "stop the verify command and roll back after SECONDS (default: 600)",
        flag=("--verify-timeout",), metavar="SECONDS")
    """Seconds the verify command may run before it is stopped (and the change rolled back)."""


@record
class CallOptions:
    """What one call asks besides the host's options: a command line's, a tool call's. Not
    values the library keeps: ``api`` and ``agents.tool_call`` take them as arguments."""

    dry_run: bool = option(
        False, "report what would change; write nothing", flag=("--dry-run",),
        tool="Check the patch and report what it would change (summary and diffs) without writing "
             "anything.")
    workspace_root: str | None = option(
        None, "", tool_default=".",
        tool="Directory that the patch's paths are relative to, itself relative to the host's "
             "workspace root (or absolute inside it). Default: the workspace root.")
    intent: str | None = option(
        None, "why this change is made (recorded with it)", flag=("--intent",),
        tool="One sentence saying why this edit is made; recorded with the change.")
    extract: bool = option(
        False, "take the patch out of a model's reply (code fences, prose around it) first",
        flag=("--extract",),
        tool="Take the patch out of surrounding text first (code fences, prose before or after "
             "it). Refused if the text holds two different patches.")
    strip: int | None = option(
        None, "unified diffs: remove N leading path components (default: git's a/ b/, else 1)",
        flag=("-p", "--strip"), metavar="N",
        tool="Unified diffs only: remove this many leading path components from the diff's paths "
             "(as `patch -p N`). Default: git's a/ and b/ prefixes, else one component (a bare "
             "file name is kept).")
    reverse: bool = option(
        False, "unified diffs: apply in reverse", flag=("-R", "--reverse"),
        tool="Unified diffs only: apply the diff in reverse (as `git apply -R`), undoing it; "
             "refused for a '*** Begin Patch' patch.")
    unidiff_zero: bool = option(
        False, "unified diffs: '@@ -0,0' without context inserts at the top of the file (a -U0"
        " diff), as git apply --unidiff-zero; by default it fills an empty file",
        flag=("--unidiff-zero",))
    """Not a tool-call argument: a model's context-free hunk is sent as '*** Update File:'
    (``agents.tool_call`` says so when one is refused)."""


@record
class Declared:
    """One row of ``OPTIONS``: an options field and how it shows."""

    name: str
    owner: type
    """``PlanOptions``, ``CommitOptions`` or ``CallOptions``."""
    default: Any
    type: str
    """The field's annotation as written (``bool``, ``int | None``, ``tuple[str, ...]``...)."""
    option: Option

    @property
    def tool_default(self) -> Any:
        return self.default if self.option.tool_default == SAME else self.option.tool_default


def _declared(owner: type) -> tuple[Declared, ...]:
    defaults = owner()
    return tuple(Declared(name, owner, getattr(defaults, name), owner.__annotations__[name], surfaces)
                 for name, surfaces in metadata(owner).items())


OPTIONS: tuple[Declared, ...] = _declared(PlanOptions) + _declared(CommitOptions) + _declared(CallOptions)
"""Every option, declared once: the table the command lines (``arguments``), the policy files
(``policy``), the tool declarations (``agents.toolspec``), the tool-call runner
(``agents.tool_call``) and the MCP server are built from. Adding an option is adding a field to
one of the three records above (and, for type checkers, a line to the keywords below)."""
TOOL_OPTIONS = tuple(row for row in OPTIONS if row.option.tool is not None)
"""A tool call's arguments besides the patch, in the order tools declare them."""

UNDO_SCOPES = ("any", "own", "none")
"""What an MCP client may undo (``patchtx mcp --undo``): any transaction in the history, only
those made through the MCP server (the default), or none."""

DEFAULT_COMMIT = CommitOptions()
"""The defaults, for the layers below the API (``txn.commit``, ``recover``, ``KeepHistory``)."""

PLAN_KEYWORDS = frozenset(PlanOptions.__annotations__)
COMMIT_KEYWORDS = frozenset(CommitOptions.__annotations__)
ALL_KEYWORDS = PLAN_KEYWORDS | COMMIT_KEYWORDS


def check_keywords(keywords: Iterable[str], accepted: frozenset[str], caller: str) -> None:
    """A TypeError for a keyword outside ``accepted``, worded as Python words it for any call."""
    for name in keywords:
        if name not in accepted:
            raise TypeError(f"{caller} got an unexpected keyword argument '{name}'")

if TYPE_CHECKING:
    # The fields above as keyword arguments (None: not given), for ``**options: Unpack[...]``
    # signatures. tests/api/test_options.py checks that the names agree with the fields.
    class PlanKeywords(TypedDict, total=False):
        allow_overwrite: bool | None
        allow_delete: bool | None
        allow_move: bool | None
        first_match: bool | None
        skip_applied: bool | None
        protected: tuple[str, ...] | list[str] | None
        hidden: tuple[str, ...] | list[str] | None
        max_files: int | None
        max_bytes: int | None
        max_patch_bytes: int | None
        allow_policy_edit: bool | None
        allow_placeholders: bool | None
        strict: bool | None
        syntax: str | None

    class CommitKeywords(TypedDict, total=False):
        durable: bool | None
        lock_timeout: float | None
        history_count: int | None
        history_bytes: int | None
        verify: str | None
        verify_timeout: float | None

    class OptionKeywords(PlanKeywords, CommitKeywords, total=False):
        pass
