"""Every error patchtx raises, each with a stable machine-readable ``kind``.

An error message is one paragraph: what failed, where, whether anything was written, and what to do
next. ``headline`` is the reference implementation's verbatim text where Codex has one (so agents
trained on Codex see what they expect); ``hint`` adds what an agent needs to fix the patch in one try.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NOTHING_CHANGED = "Nothing was changed."


class PatchtxError(Exception):
    """Base class: a failure that left the workspace exactly as it was (unless ``changed`` says so)."""

    kind: str = "error"

    def __init__(
        self,
        headline: str,
        *,
        hint: str = "",
        path: str | None = None,
        line: int | None = None,
        details: dict[str, Any] | None = None,
        changed: bool = False,
    ) -> None:
        self.headline = headline
        self.hint = hint
        self.path = path
        self.line = line
        self.details = details or {}
        self.changed = changed
        super().__init__(self.message)

    @property
    def outcome(self) -> str:
        return "Some files were changed; see above." if self.changed else NOTHING_CHANGED

    @property
    def message(self) -> str:
        """Headline, what happened to the tree, then the hint (which may quote file lines)."""
        text = self.headline.rstrip()
        text += ("\n" if "\n" in text else " ") + self.outcome
        if self.hint:
            text += " " + self.hint.rstrip()
        return text

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "message": self.message, "changed": self.changed}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        out.update(self.details)
        return out


class ParseError(PatchtxError):
    """The patch text is not a valid patch; ``line`` is the 1-based patch line."""

    kind = "parse_error"


class HunkParseError(ParseError):
    """A hunk-level syntax error (Codex prints these as 'Invalid patch hunk on line N: ...')."""

    kind = "parse_error"


class UnsupportedChangeError(ParseError):
    """A unified diff asks for something patchtx never does: a symbolic link, a submodule, a
    merge (combined) diff."""

    kind = "unsupported_change"


class EmptyPatchError(PatchtxError):
    kind = "empty_patch"


class ContextNotFoundError(PatchtxError):
    kind = "context_not_found"


class AmbiguousContextError(PatchtxError):
    kind = "ambiguous_context"


class FileNotFoundPatchError(PatchtxError):
    kind = "file_not_found"


class FileExistsPatchError(PatchtxError):
    kind = "file_exists"


class NotARegularFileError(PatchtxError):
    kind = "not_a_file"


class UnsafePathError(PatchtxError):
    kind = "unsafe_path"


class EncodingPatchError(PatchtxError):
    kind = "not_utf8"


class BinaryFileError(PatchtxError):
    kind = "binary_file"


class ConflictError(PatchtxError):
    """Two operations of one patch that cannot be combined (e.g. a file written where the patch
    needs a folder). An Update of a file the patch already removed is a ``file_not_found`` error
    with Codex's text and a hint naming the earlier operation."""

    kind = "conflicting_operations"


class PolicyError(PatchtxError):
    kind = "policy_violation"


class ChangedSincePlanningError(PatchtxError):
    kind = "changed_since_planning"


class LockTimeoutError(PatchtxError):
    kind = "lock_timeout"


class JournalError(PatchtxError):
    """A journal that cannot be trusted (damaged, unknown version): never acted on blindly."""

    kind = "journal_damaged"


class FilesystemError(PatchtxError):
    """An OS-level failure while reading or committing (permission, disk full, I/O error)."""

    kind = "io_error"

    def __init__(self, headline: str, *, errno_name: str | None = None, **kw: Any) -> None:
        details = dict(kw.pop("details", None) or {})
        if errno_name:
            details["errno"] = errno_name
        super().__init__(headline, details=details, **kw)


class ApprovalError(PatchtxError):
    kind = "rejected"
