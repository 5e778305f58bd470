"""The library surface: parse, plan (dry run) and apply, each a thin composition of the stages."""

from __future__ import annotations

import os

from .errors import PolicyError
from .model import Patch, Plan, UpdateFile
from .parser import parse
from .planner import plan
from .policy import PlanOptions, effective_options
from .result import Result

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    from .txn.commit import Progress
    from .txn.reports import CommitReport, RecoveryReport
    from .workspace import FileInfo, ResolvedPath, Workspace

PathLike = str | os.PathLike[str]


def _patches(patches: str | Patch | Sequence[str | Patch], options: PlanOptions,
             extract: bool = False, strip: int | None = None,
             reverse: bool = False) -> list[Patch]:
    if isinstance(patches, str | Patch):
        patches = [patches]
    if extract:
        from .extract import extract_patch

        patches = [extract_patch(p) if isinstance(p, str) else p for p in patches]
    limit = options.max_patch_bytes
    if limit is not None:
        size = sum(len(p.encode("utf-8")) for p in patches if isinstance(p, str))
        if size > limit:
            raise PolicyError(f"Refusing the patch: it is {size} bytes, more than the limit of "
                              f"{limit}.", hint="Split it into smaller patches.",
                              details={"bytes": size, "limit": limit})
    return [parse(p, strip=strip, reverse=reverse) if isinstance(p, str) else p for p in patches]


def options_for(root: PathLike, **overrides: bool | int | tuple[str, ...] | None) -> PlanOptions:
    """The options in force: the host's ceiling (its config, ``PATCHTX_POLICY``, then the explicit
    non-None arguments) tightened by the workspace's policy (see ``policy``)."""
    return effective_options(root, **overrides)


def plan_patch(
    patches: str | Patch | Sequence[str | Patch],
    root: PathLike = ".",
    *,
    allow_overwrite: bool | None = None,
    allow_delete: bool | None = None,
    allow_move: bool | None = None,
    first_match: bool | None = None,
    skip_applied: bool | None = None,
    protected: tuple[str, ...] | None = None,
    max_files: int | None = None,
    max_bytes: int | None = None,
    max_patch_bytes: int | None = None,
    allow_policy_edit: bool | None = None,
    intent: str | None = None,
    progress: Progress | None = None,
    extract: bool = False,
    strip: int | None = None,
    reverse: bool = False,
) -> Plan:
    """Parse and plan without writing. Several patches are planned in order as one; each text may
    be a Codex patch or a unified diff (``strip`` is ``-p N`` and ``reverse`` is ``-R`` for
    unified diffs).

    The options are the host's ceiling (options left as None: the per-user config, then
    ``PATCHTX_POLICY``, then the defaults), which the workspace's policy may only tighten.
    ``progress(phase, done, total)`` is told each new file planned (phase "planning").
    ``extract`` takes each patch text out of a model's reply first (see ``patchtx.extract``).
    """
    options = options_for(root, allow_overwrite=allow_overwrite, allow_delete=allow_delete,
                          allow_move=allow_move, first_match=first_match,
                          skip_applied=skip_applied, protected=protected,
                          max_files=max_files, max_bytes=max_bytes, max_patch_bytes=max_patch_bytes,
                          allow_policy_edit=allow_policy_edit)
    return _plan(patches, root, options, intent, progress, extract, strip, reverse)


def _plan(patches: str | Patch | Sequence[str | Patch], root: PathLike, options: PlanOptions,
          intent: str | None, progress: Progress | None, extract: bool = False,
          strip: int | None = None, reverse: bool = False) -> Plan:
    parsed = _patches(patches, options, extract, strip, reverse)
    combined = parsed[0] if len(parsed) == 1 else Patch(
        tuple(h for p in parsed for h in p.hunks), "\n".join(p.text for p in parsed),
        format=parsed[0].format if len({p.format for p in parsed}) == 1 else "mixed")
    if progress is None:
        return plan(combined, root, options, intent=intent)
    from .workspace import Workspace

    workspace = Workspace(root)
    try:
        return plan(combined, _ProgressView(workspace, combined, progress), options, intent=intent)
    finally:
        workspace.close()


class _ProgressView:
    """The workspace as the planner sees it, reporting each new path the planner resolves."""

    def __init__(self, view: Workspace, patch: Patch, progress: Progress) -> None:
        self.root = view.root
        self._view = view
        self._progress = progress
        named = {h.path for h in patch.hunks}
        named |= {h.move_to for h in patch.hunks if isinstance(h, UpdateFile) and h.move_to}
        self._total = len(named)
        self._seen: set[str] = set()

    def resolve(self, spelled: str, *, line: int | None = None) -> ResolvedPath:
        resolved = self._view.resolve(spelled, line=line)
        if resolved.rel not in self._seen:
            self._seen.add(resolved.rel)
            self._progress("planning", len(self._seen), max(self._total, len(self._seen)))
        return resolved

    def info(self, rel: str) -> FileInfo | None:
        return self._view.info(rel)

    def read(self, rel: str) -> bytes:
        return self._view.read(rel)

    def list_dir(self, rel: str) -> list[str]:
        return self._view.list_dir(rel)

    def display(self, rel: str) -> str:
        return self._view.display(rel)


def apply_plan(
    plan_: Plan,
    *,
    durable: bool = True,
    lock_timeout: float = 30.0,
    history_count: int | None = None,
    history_bytes: int | None = None,
    progress: Progress | None = None,
) -> Result:
    """Commit a Plan through the transaction manager (all or nothing), keeping its before-images
    in the undo history (``history_count`` / ``history_bytes``: None means as the workspace's
    ``[tool.patchtx]`` table says, else 20 transactions / 64 MiB)."""
    options = options_for(plan_.root, history_count=history_count, history_bytes=history_bytes)
    return _commit(plan_, options, durable=durable, lock_timeout=lock_timeout, progress=progress)


def _commit(plan_: Plan, options: PlanOptions, *, durable: bool, lock_timeout: float,
            progress: Progress | None) -> Result:
    from .txn import commit
    from .txn.retention import KeepHistory

    keep = KeepHistory(count=options.history_count, max_bytes=options.history_bytes)
    report = commit(plan_, durable=durable, lock_timeout=lock_timeout, retention=keep,
                    progress=progress)
    return Result(plan_, committed=True, transaction_id=report.transaction_id,
                  fsyncs=report.fsyncs, recovery=recovery_of(report))


def recovery_of(report: CommitReport) -> RecoveryReport | None:
    """What the commit recovered of earlier interrupted transactions before its own (None:
    nothing was left over)."""
    if report.recovery is None or report.recovery.nothing_to_do:
        return None
    return report.recovery


def apply_patch(
    patches: str | Patch | Sequence[str | Patch],
    root: PathLike = ".",
    *,
    dry_run: bool = False,
    allow_overwrite: bool | None = None,
    allow_delete: bool | None = None,
    allow_move: bool | None = None,
    first_match: bool | None = None,
    skip_applied: bool | None = None,
    protected: tuple[str, ...] | None = None,
    max_files: int | None = None,
    max_bytes: int | None = None,
    max_patch_bytes: int | None = None,
    allow_policy_edit: bool | None = None,
    durable: bool = True,
    lock_timeout: float = 30.0,
    intent: str | None = None,
    history_count: int | None = None,
    history_bytes: int | None = None,
    progress: Progress | None = None,
    extract: bool = False,
    strip: int | None = None,
    reverse: bool = False,
) -> Result:
    """Apply one or more patches to ``root`` as a single transaction; raise PatchtxError on
    failure, in which case nothing was changed. ``extract`` takes each patch out of a model's
    reply first (code fences, prose around it)."""
    options = options_for(root, allow_overwrite=allow_overwrite, allow_delete=allow_delete,
                          allow_move=allow_move, first_match=first_match,
                          skip_applied=skip_applied, protected=protected,
                          max_files=max_files, max_bytes=max_bytes, max_patch_bytes=max_patch_bytes,
                          allow_policy_edit=allow_policy_edit,
                          history_count=history_count, history_bytes=history_bytes)
    planned = _plan(patches, root, options, intent, progress, extract, strip, reverse)
    if dry_run:
        return Result(planned, committed=False, dry_run=True)
    return _commit(planned, options, durable=durable, lock_timeout=lock_timeout, progress=progress)
