"""``Result``: what an apply (or a dry run, an undo, a redo) came to, its one JSON shape and its
report for a person.

It sits above the renderer (result -> render -> model): its JSON and report hold the plan's diffs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._record import record
from .model import ChangeKind

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .model import Plan
    from .txn.reports import RecoveryReport
    from .txn.verify import VerifyOutcome


@record
class Result:
    plan: Plan
    committed: bool
    dry_run: bool = False
    transaction_id: str | None = None
    fsyncs: int = 0
    recovery: RecoveryReport | None = None
    """What was recovered of earlier interrupted transactions before this one ran (None: there
    was nothing to recover)."""
    undone: str | None = None
    """For an undo (and a redo, which undoes an undo): the id of the transaction it undid."""
    redone: str | None = None
    """For a redo: the id of the transaction it put back (the one the undone undo had undone)."""
    verify: VerifyOutcome | None = None
    """What the host's verify command did before the change was kept (None: no verify command)."""

    @property
    def recovered(self) -> bool:
        """Whether an earlier interrupted transaction was recovered before this one ran."""
        return self.recovery is not None

    @property
    def summary(self) -> str:
        return self.plan.summary

    def to_json(self, *, with_diff: bool = True) -> dict[str, object]:
        """The one result shape of every surface (CLI ``--json``, MCP, tool calls), as
        ``docs/result.schema.json`` describes it."""
        return result_json(self, with_diff=with_diff)


def summary_line(result: Result) -> str:
    verb = "Would apply" if result.dry_run else "Applied"
    return f"{verb}: {result.plan.summary}\n"


def codex_summary(plan: Plan) -> str:
    """Codex's stdout on success: adds, then updates (moves by destination), then deletes."""
    groups: dict[str, list[str]] = {"A": [], "M": [], "D": []}
    for change in plan.changes:
        letter = "M" if change.kind in (ChangeKind.UPDATE, ChangeKind.MOVE) else change.kind.value
        groups[letter].append(change.spelled)
    lines = ["Success. Updated the following files:"]
    for letter in ("A", "M", "D"):
        lines.extend(f"{letter} {path}" for path in groups[letter])
    return "\n".join(lines) + "\n"


def repair_lines(result: Result) -> list[str]:
    """One line per repair made to read the patch (none: no lines)."""
    return [f"Repaired ({repair.kind}, {repair.where}): {repair.detail}."
            for repair in result.plan.repairs]


def recovery_lines(result: Result) -> list[str]:
    """What the recovery that ran before the patch did (none: no lines)."""
    if result.recovery is None:
        return []
    return ["Before applying, " + line[0].lower() + line[1:] for line in result.recovery.summary.splitlines()]


def human_report(result: Result, *, diffs: bool = True, rendered: Sequence[str] | None = None,
                 max_files: int | None = None) -> str:
    """The summary line, one line per file, then (``diffs``) the diffs, taken from ``rendered``
    when the caller has rendered them already. Past ``max_files`` files the list ends with a
    count, so that the output stays proportional to what a person reads."""
    from .render import shown_path, unified_diff  # (off a one-line edit's path)

    plan = result.plan
    lines = recovery_lines(result)
    lines.append(summary_line(result).rstrip("\n"))
    lines.extend(repair_lines(result))
    files = plan.files
    shown = files if max_files is None else files[:max_files]
    for change in shown:
        name = f"{shown_path(change.source)} -> {shown_path(change.path)}" if change.source else shown_path(change.path)
        if change.copied_from is not None:
            name += f" (copy of {shown_path(change.copied_from)})"
        lines.append(f"  {change.kind.value} {name}")
    if len(shown) < len(files):
        rest = len(files) - len(shown)
        lines.append(f"  ... and {rest:,} more file{'s' if rest != 1 else ''} (--stat or --json lists them all)")
    if plan.syntax is not None:
        lines.extend(plan.syntax.lines())
    if result.verify is not None:
        lines.append(f"Verified: `{result.verify.command}` passed in {result.verify.seconds:.1f} s.")
    lines += [f"Note: {note}" for note in plan.notes]
    text = "\n".join(lines) + "\n"
    if diffs:
        text += "".join(rendered if rendered is not None else map(unified_diff, files))
    return text


def result_json(result: Result, *, with_diff: bool = True,
                rendered: Sequence[str] | None = None) -> dict[str, Any]:
    """The one machine-readable result shape (``docs/result.schema.json``) for a success: every
    key always present, ``error`` null; an undo adds ``undone``, a redo ``redone`` too, and a plan
    with notes (``Plan.notes``: a loose match) ``notes``."""
    from .render import file_entries  # (off a one-line edit's path)

    plan = result.plan
    out: dict[str, Any] = {
        "ok": True,
        "dry_run": result.dry_run,
        "summary": plan.summary,
        "counts": plan.summary_counts(),
        "files": file_entries(plan, with_diff=with_diff, rendered=rendered),
        "transaction": result.transaction_id,
        "recovered": None if result.recovery is None else [t.to_json() for t in result.recovery.transactions],
        "intent": plan.intent,
        "repairs": [repair.to_json() for repair in plan.repairs],
        "syntax": None if plan.syntax is None else plan.syntax.to_json(),
        "verify": None if result.verify is None else result.verify.to_json(),
        "error": None,
    }
    if plan.notes:
        out["notes"] = list(plan.notes)
    if result.undone is not None:
        out["undone"] = result.undone
    if result.redone is not None:
        out["redone"] = result.redone
    return out
