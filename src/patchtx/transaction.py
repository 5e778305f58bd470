"""``with patchtx.Transaction(root) as tx:`` — scripts stage patches and direct edits, then commit
them all at once through the journal, or nothing if the block raises.

Reads inside the block see the staged state. Nothing touches the disk before the block ends; the
commit re-checks, under the workspace lock, that every file still holds what the staging read.
"""

from __future__ import annotations

import os
from types import TracebackType
from typing import TYPE_CHECKING, Unpack

from .api import check_call, commit_plan, name_the_file, parse_patches, patch_list
from .errors import ArgumentTypeError, EncodingPatchError, ParseError, PatchtxError, TransactionClosedError
from .formats.edits import name_the_edit, parse_edits
from .model import DeleteFile, Patch, Plan
from .plan.planner import Stager
from .result import Result
from .workspace.paths import Workspace
from .workspace.policy import options_for

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any

    from .options import OptionKeywords
    from .txn.commit import Progress


class Transaction:
    """Stage any mix of patches, writes, deletes and moves; commit them as one transaction.

    ``options`` are those of ``patchtx.apply_patch`` (the fields of ``PlanOptions`` and
    ``CommitOptions``), read once, when the transaction starts. ``progress(phase, done, total)``
    is told the files planned and committed."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        intent: str | None = None,
        progress: Progress | None = None,
        **options: Unpack[OptionKeywords],
    ) -> None:
        workspace = Workspace(root)
        try:
            self._plan_options, self._commit_options = options_for(workspace.root, options,
                                                                   caller="Transaction()")
        except BaseException:
            workspace.close()
            raise
        self._workspace = workspace
        self._stager = Stager(workspace, self._plan_options, progress)
        self._progress = progress
        self.intent = intent
        self.result: Result | None = None
        self._closed = False

    # -- staging -------------------------------------------------------------------------------
    def _open(self) -> Stager:
        if self._closed:
            raise TransactionClosedError("This transaction has already ended.",
                                         hint="Start a new Transaction for further changes.")
        return self._stager

    def apply_patch(self, patch: str | bytes | Patch, *, extract: bool = False, strip: int | None = None,
                    reverse: bool = False) -> None:
        """Stage a whole patch (all its operations, or none if one fails); ``extract``, ``strip``
        and ``reverse`` as in ``patchtx.apply_patch``."""
        stager = self._open()
        if isinstance(patch, list | tuple):  # (one patch here: the module function takes lists)
            raise ArgumentTypeError.expected("the patch", "a patch text (str or UTF-8 bytes) or a parsed Patch",
                                             patch, hint="Stage the patches one call each.")
        texts = patch_list(patch)
        check_call({"extract": extract, "strip": strip, "reverse": reverse})
        try:
            (parsed,) = parse_patches(texts, self._plan_options, extract=extract, strip=strip, reverse=reverse)
        except ParseError as error:
            raise name_the_file(error, texts, self._workspace.given_root) from None
        stager.stage_patch(parsed)

    def apply_edits(self, edits: Sequence[Mapping[str, Any]], *, file_path: str | None = None) -> None:
        """Stage an edit list (``patchtx.apply_edits``'s edits, in order; all of them, or none if
        one fails)."""
        patch = parse_edits(edits, path=file_path)
        try:
            self.apply_patch(patch)
        except PatchtxError as error:
            raise name_the_edit(error, patch, self._workspace.root) from None

    def write_bytes(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        if not isinstance(data, bytes | bytearray | memoryview):
            raise ArgumentTypeError.expected("the data", "bytes", data)
        if mode is not None and (not isinstance(mode, int) or isinstance(mode, bool) or not 0 <= mode <= 0o7777):
            raise ArgumentTypeError.expected("`mode`", "permission bits (an integer from 0 to 0o7777)", mode)
        self._open().stage_write(path, bytes(data), mode)

    def write_text(self, path: str, text: str, *, encoding: str = "utf-8") -> None:
        if not isinstance(text, str):
            raise ArgumentTypeError.expected("the text", "a string", text)
        if not isinstance(encoding, str):
            raise ArgumentTypeError.expected("`encoding`", "a codec's name", encoding)
        try:
            data = text.encode(encoding)
        except (UnicodeEncodeError, LookupError) as exc:
            raise _encoding_error(f"Cannot write {path} as {encoding}: {exc}.", path) from None
        self.write_bytes(path, data)

    def delete(self, path: str) -> None:
        self._open().delete(DeleteFile(path))

    def move(self, source: str, destination: str) -> None:
        self._open().stage_move(source, destination)

    def read_bytes(self, path: str) -> bytes:
        return self._open().read(path)

    def read_text(self, path: str, *, encoding: str = "utf-8") -> str:
        data = self.read_bytes(path)
        try:
            return data.decode(encoding)
        except (UnicodeDecodeError, LookupError) as exc:
            raise _encoding_error(f"Cannot read {path} as {encoding}: {exc}.", path) from None

    def exists(self, path: str) -> bool:
        stager = self._open()
        return stager.current(stager.resolve(path, 0).rel).content is not None

    # -- ending --------------------------------------------------------------------------------
    def preview(self) -> Plan:
        """The Plan as it stands: summary, per-file changes and diffs; nothing written."""
        return self._open().build_plan(intent=self.intent)

    def commit(self) -> Result:
        plan = self.preview()
        self._end()
        if not plan.targets:
            self.result = Result(plan, committed=False)
            return self.result
        self.result = commit_plan(plan, self._commit_options, progress=self._progress,
                                  policy=self._plan_options)
        return self.result

    def rollback(self) -> None:
        """Discard everything staged (nothing was written)."""
        self._end()

    def _end(self) -> None:
        """No more staging: the folder descriptors kept for reading the workspace are closed (the
        Plan holds every byte the commit needs)."""
        self._closed = True
        self._workspace.close()

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._closed:
            return
        if exc_type is not None:
            self.rollback()
            return
        self.commit()


def _encoding_error(headline: str, path: str) -> EncodingPatchError:
    return EncodingPatchError(headline, path=path,
                              hint="Use read_bytes / write_bytes for bytes in another encoding, or "
                                   "pass the encoding the file uses.")
