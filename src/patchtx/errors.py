"""Every error patchtx raises, each with a stable machine-readable ``kind``.

An error message is one paragraph: what failed, where, whether anything was written, and what to do
next. ``headline`` is the reference implementation's verbatim text where Codex has one (so agents
trained on Codex see what they expect); ``hint`` adds what an agent needs to fix the patch in one try.
"""

from __future__ import annotations

import os
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
        self.patch_file: str | None = None
        """The patch file the error is in, when the caller read the patch from one (the CLI)."""
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

    @property
    def file_line(self) -> int | None:
        """The 1-based line of the file the error points at: the closest region of a hunk that did
        not match, the first place an ambiguous hunk matched."""
        closest = self.details.get("closest_line")
        if isinstance(closest, int):
            return closest
        candidates = self.details.get("candidate_lines")
        return candidates[0] if candidates else None

    def to_json(self, root: str | None = None) -> dict[str, Any]:
        """The error object of the one result shape (docs/result.schema.json); ``path`` is made
        relative to the workspace ``root`` when it is an absolute path inside it."""
        out: dict[str, Any] = {
            "kind": self.kind, "message": self.message, "hint": self.hint or None,
            "changed": self.changed, "path": workspace_relative(self.path, root),
            "patch_file": self.patch_file, "patch_line": self.line, "file_line": self.file_line,
        }
        out.update((key, value) for key, value in self.details.items() if key not in out)
        return out


def workspace_relative(path: str | None, root: str | None) -> str | None:
    if path is None or root is None or not path.startswith("/"):
        return path
    real_root = os.path.realpath(root)
    candidate = os.path.normpath(path)
    if candidate == real_root:
        return "."
    if candidate.startswith(real_root.rstrip("/") + "/"):
        return candidate[len(real_root.rstrip("/")) + 1:]
    return path


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


class AlreadyAppliedError(PatchtxError):
    """Every operation of the patch is already in place (``skip_applied`` makes this a no-op)."""

    kind = "already_applied"


class NoChangeError(PatchtxError):
    """The patch asks for a change it does not make: a hunk whose new lines are its old lines (a
    SEARCH equal to its REPLACE, a section of context lines only, an edit whose old text is its
    new text), or operations that leave a file exactly as they found it. Refused on every surface
    (docs/format.md, "A patch that changes nothing"): a success would report a file changed that
    is not, and the change the sender meant is not in the patch."""

    kind = "no_change"


class PlaceholderError(PatchtxError):
    """A lazy placeholder written as code (``placeholders``): an added line such as ``# ...
    existing code ...`` where the lines it replaces and the file hold none, which written as it
    is would lose the code it stands for (``allow_placeholders`` lets it through); or aider's
    ``...`` elision in a SEARCH block, which patchtx does not expand. ``details["placeholder"]``
    is the line."""

    kind = "placeholder"


class PartlyAppliedError(PatchtxError):
    """Some operations or hunks of the patch are already in place, others are not."""

    kind = "partly_applied"


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


class HiddenPathError(PolicyError):
    """A path the host hides from the model (``hidden``): refused before its file is read, for
    every command, so that nothing of its contents reaches a reply."""

    kind = "hidden_path"


class ChangedSincePlanningError(PatchtxError):
    kind = "changed_since_planning"


class LockTimeoutError(PatchtxError):
    kind = "lock_timeout"


class SyntaxGuardError(PatchtxError):
    """The patch would leave a file with syntax errors it did not have (the syntax guard, mode
    ``refuse``); ``details["syntax"]`` is the guard's report on every file."""

    kind = "syntax_error"


class VerifyFailedError(PatchtxError):
    """The host's verify command failed (or changed what the patch wrote): the change was rolled
    back. ``details["verify"]`` holds the command, its exit status and the end of its output.
    ``changed``: the roll back left something in place (what patchtx did not write, in a place the
    patch had created; a path it could not put back), named in the headline."""

    kind = "verify_failed"

    @property
    def outcome(self) -> str:
        if self.changed:
            return "Everything else of the change was undone: only what is named above remains."
        return super().outcome


class CancelledError(PatchtxError):
    """The host cancelled the call before its commit point (``patchtx.cancel``): rolled back."""

    kind = "cancelled"


class JournalError(PatchtxError):
    """A journal that cannot be trusted (damaged, unknown version): never acted on blindly."""

    kind = "journal_damaged"


class UntrustedStateError(PatchtxError):
    """A journal or undo-history entry this user's patchtx did not write (no valid signature with
    the per-user secret): never acted on automatically (``patchtx recover --trust-foreign``)."""

    kind = "untrusted_state"


class StateFolderError(PatchtxError):
    """The ``.patchtx`` state folder (or its lock or journal folder) is not what patchtx makes: a
    symbolic link, a FIFO, a folder where a file belongs, or owned by another user."""

    kind = "unsafe_state_folder"


class FilesystemError(PatchtxError):
    """An OS-level failure while reading or committing (permission, disk full, I/O error)."""

    kind = "io_error"

    def __init__(self, headline: str, *, errno_name: str | None = None, **kw: Any) -> None:
        details = dict(kw.pop("details", None) or {})
        if errno_name:
            details["errno"] = errno_name
        super().__init__(headline, details=details, **kw)


class OutputError(PatchtxError):
    """A one-shot command (``patchtx``, ``apply_patch``) could not write its report to standard
    output (a full disk, /dev/full, a closed descriptor). What the command did stands: this says
    so instead of claiming, like any other failure, that nothing was changed."""

    kind = "output_failed"

    @property
    def outcome(self) -> str:
        return ("What the command did stands (a patch it applied stays applied, an undo stays undone);"
                " only its report was lost.")


class UnsupportedPlatformError(PatchtxError):
    """The platform lacks what the transaction needs (POSIX directory descriptors): Windows."""

    kind = "unsupported_platform"


class UsageError(PatchtxError):
    """A command line that cannot be parsed (reported as JSON under ``--json``; exit status 2)."""

    kind = "usage_error"


class InternalError(PatchtxError):
    """A failure patchtx did not foresee (a bug, or an environment it does not know): reported
    as an error with a kind, never as a traceback."""

    kind = "internal_error"

    @classmethod
    def wrapping(cls, exc: BaseException) -> InternalError:
        return cls(
            f"patchtx failed unexpectedly: {type(exc).__name__}: {exc}.",
            hint="This is a bug in patchtx (or an unusual environment): please report it with the"
                 " command that caused it. The workspace is left as the transaction protocol"
                 " guarantees: run `patchtx recover` if a patch was being applied.",
        )


class ApprovalError(PatchtxError):
    kind = "rejected"


class MissingExtraError(PatchtxError, ImportError):
    """An optional feature whose packages are not installed; the message names the extra. Also an
    ImportError, which is what importing a module of that feature raises."""

    kind = "missing_dependency"

    def __init__(self, feature: str, extra: str, module: str) -> None:
        self.extra = extra
        super().__init__(f"{feature} needs the '{module}' package, which is not installed: "
                         f"pip install 'patchtx[{extra}]'.", details={"extra": extra})

    @property
    def message(self) -> str:
        return self.headline  # nothing was attempted, so "Nothing was changed" says nothing here


class NoPatchFoundError(ParseError):
    """Extraction found no ``*** Begin Patch`` line in the text (a model's reply)."""

    kind = "no_patch"


class SeveralPatchesError(ParseError):
    """Extraction found more than one different candidate patch; ``details["candidates"]`` lists
    them (first and last line, files named)."""

    kind = "several_patches"


class TransactionClosedError(PatchtxError):
    """A ``Transaction`` used after it committed or was abandoned."""

    kind = "transaction_closed"


class NothingToUndoError(PatchtxError):
    kind = "nothing_to_undo"


class NothingToRedoError(PatchtxError):
    kind = "nothing_to_redo"


class UnknownTransactionError(PatchtxError):
    kind = "unknown_transaction"


class HistoryDamagedError(PatchtxError):
    kind = "history_damaged"


class InvalidArgumentsError(PatchtxError):
    """The tool call's JSON arguments do not fit the declared schema."""

    kind = "invalid_arguments"


class ArgumentTypeError(InvalidArgumentsError, TypeError):
    """An argument of the wrong type (a number for an edit list, an object for a path): kind
    ``invalid_arguments`` on every surface, and a ``TypeError`` too, which is what a Python caller
    expects for a wrong type (docs/api.md)."""

    @classmethod
    def expected(cls, what: str, wanted: str, value: object, hint: str = "") -> ArgumentTypeError:
        """``what`` (the argument, in backquotes when it is a name) must be ``wanted`` and is
        ``value``."""
        return cls(f"Invalid arguments: {what} must be {wanted}, not {json_type(value)}.",
                   hint=hint or "Resend the call with corrected arguments.")


def json_type(value: object) -> str:
    """What a value is, in the words of JSON (what a model sends) and of Python."""
    if value is None:
        return "null (None)"
    if isinstance(value, bool):
        return f"a boolean ({value!r})"
    if isinstance(value, int | float):
        return f"a number ({value!r})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bytes | bytearray | memoryview):
        return "bytes"
    if isinstance(value, list | tuple):
        return "an array (a list)"
    if isinstance(value, dict):
        return "an object (a dict)"
    return f"a {type(value).__name__}"


INTERRUPTED = ("A transaction it had not committed is rolled back, at once or by the next patchtx"
               " command (or `patchtx recover`); one it had committed stands (`patchtx log`).")
"""What a Ctrl-C leaves, whenever it came: the journal makes both halves true."""
