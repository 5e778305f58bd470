"""What a caller can set, one value per stage: ``PlanOptions`` for planning, ``CommitOptions`` for
the commit. Each default is written here and nowhere else.

Every entry point (``apply_patch``, ``plan_patch``, ``apply_plan``, ``Transaction``,
``history.undo``, the CLI, the agent tools) takes these fields as keyword arguments, None meaning
"not given", and builds the two values through one function, ``policy.options_for``: the host's
ceiling tightened by the workspace's policy (see ``policy``).
"""

from __future__ import annotations

from ._record import record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TypedDict


@record
class PlanOptions:
    """What a patch may do: permissions and caps (the host's ceiling, tightened by the workspace),
    and how an already applied patch is answered."""

    allow_overwrite: bool = False
    """Let Add and Move replace an existing file (Codex's behaviour); refused by default."""
    allow_delete: bool = True
    allow_move: bool = True
    first_match: bool = False
    """Take the first occurrence of an ambiguous hunk (Codex's behaviour) instead of refusing."""
    skip_applied: bool = False
    """A patch that is already applied as a whole succeeds, changing nothing (refused by default,
    with the kind ``already_applied``)."""
    protected: tuple[str, ...] = ()
    """Glob patterns of workspace paths no patch may touch (``**`` spans folders)."""
    max_files: int | None = None
    max_bytes: int | None = None
    """Cap on bytes changed: the size of every file written plus every file removed."""
    max_patch_bytes: int | None = None
    allow_policy_edit: bool = False
    """Let a patch change the workspace's policy (``[tool.patchtx]``, ``.patchtx.toml``)."""
    syntax: str = "off"
    """The syntax guard (``patchtx.syntax``): ``off``, ``warn`` (apply, report new syntax errors)
    or ``refuse`` (refuse a patch that leaves a file with new syntax errors). Off by default for
    the library and ``patchtx apply`` (a parse can cost more than the apply); the agent surfaces
    (MCP, tool calls) default to ``refuse``. A workspace may only make it stricter."""


@record
class CommitOptions:
    """How a plan is committed, and how much of it the undo history keeps."""

    durable: bool = True
    """fsync every write; False keeps atomicity against a crashed process, not against power loss."""
    lock_timeout: float = 30.0
    """Seconds to wait for the workspace lock held by another transaction."""
    history_count: int = 20
    """Committed transactions whose before-images are kept for undo (0 turns history off)."""
    history_bytes: int = 64 * 1024 * 1024
    """Cap on the before-image bytes the undo history keeps (oldest transactions go first)."""
    verify: str | None = None
    """A shell command run in the root before the commit point (``patchtx.verify``): the change is
    kept only if it exits 0. The host's alone: no policy file or tool call can set it."""
    verify_timeout: float = 600.0
    """Seconds the verify command may run before it is stopped (and the change rolled back)."""


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
        max_files: int | None
        max_bytes: int | None
        max_patch_bytes: int | None
        allow_policy_edit: bool | None
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
