"""Plans and results as text: Codex's success summary, our summary line, unified diffs, JSON."""

from __future__ import annotations

from .model import ChangeKind

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from .errors import PatchtxError
    from .model import FileChange, Plan, Result

STATUS_NAMES = {
    ChangeKind.ADD: "added",
    ChangeKind.UPDATE: "modified",
    ChangeKind.DELETE: "deleted",
    ChangeKind.MOVE: "moved",
}


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


def _lines(data: bytes | None) -> list[str]:
    """Lines with their own endings, split on LF, CRLF and CR only (as the text model does)."""
    if not data:
        return []
    from .textfile import split_text

    texts, endings = split_text(data.decode("utf-8", "replace"))
    return [t + e for t, e in zip(texts, endings, strict=True)]


def unified_diff(change: FileChange, context: int = 3) -> str:
    old_name = f"a/{change.source or change.path}" if change.before is not None else "/dev/null"
    new_name = f"b/{change.path}" if change.after is not None else "/dev/null"
    if change.kind is ChangeKind.ADD and change.overwrote is None:
        old_name = "/dev/null"
    import difflib

    diff = difflib.unified_diff(_lines(change.before), _lines(change.after), old_name, new_name,
                                n=context)
    out = []
    for line in diff:
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    header = ""
    if change.kind is ChangeKind.MOVE:
        header = f"rename from {change.source}\nrename to {change.path}\n"
    return header + "".join(out)


def file_entries(plan: Plan, *, with_diff: bool = True) -> list[dict[str, Any]]:
    entries = []
    for change in plan.changes:
        entry: dict[str, Any] = {"path": change.path, "status": STATUS_NAMES[change.kind]}
        if change.source is not None:
            entry["from"] = change.source
        if with_diff:
            entry["diff"] = unified_diff(change)
        entries.append(entry)
    return entries


def human_report(result: Result, *, diffs: bool = True) -> str:
    plan = result.plan
    verb = "Would apply" if result.dry_run else "Applied"
    lines = [f"{verb}: {plan.summary}"]
    for change in plan.changes:
        name = f"{change.source} -> {change.path}" if change.source else change.path
        lines.append(f"  {change.kind.value} {name}")
    text = "\n".join(lines) + "\n"
    if diffs:
        text += "".join(unified_diff(change) for change in plan.changes)
    return text


def result_json(result: Result) -> dict[str, Any]:
    plan = result.plan
    out: dict[str, Any] = {
        "ok": True,
        "dry_run": result.dry_run,
        "summary": plan.summary,
        "counts": plan.summary_counts(),
        "files": file_entries(plan),
    }
    if result.transaction_id:
        out["transaction"] = result.transaction_id
    return out


def error_json(error: PatchtxError) -> dict[str, Any]:
    return {"ok": False, "error": error.to_json()}
