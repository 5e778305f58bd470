"""``with patchtx.Transaction(root) as tx:`` — scripts stage patches and direct edits, then commit
them all at once through the journal, or nothing if the block raises.

Reads inside the block see the staged state. Nothing touches the disk before the block ends; the
commit re-checks, under the workspace lock, that every file still holds what the staging read.
"""

from __future__ import annotations

import os
from types import TracebackType

from .errors import EncodingPatchError, TransactionClosedError
from .model import Patch, Plan
from .parser import parse
from .planner import Stager
from .policy import effective_options
from .result import Result
from .workspace import Workspace


class Transaction:
    """Stage any mix of patches, writes, deletes and moves; commit them as one transaction."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        *,
        durable: bool = True,
        lock_timeout: float = 30.0,
        allow_overwrite: bool | None = None,
        allow_delete: bool | None = None,
        allow_move: bool | None = None,
        first_match: bool | None = None,
        skip_applied: bool | None = None,
        intent: str | None = None,
        history_count: int | None = None,
        history_bytes: int | None = None,
    ) -> None:
        workspace = Workspace(root)
        options = effective_options(workspace.root, allow_overwrite=allow_overwrite, allow_delete=allow_delete,
                                    allow_move=allow_move, first_match=first_match, skip_applied=skip_applied)
        self._stager = Stager(workspace, options)
        self._durable = durable
        self._lock_timeout = lock_timeout
        self.intent = intent
        self._history_count = history_count
        self._history_bytes = history_bytes
        self.result: Result | None = None
        self._closed = False

    # -- staging -------------------------------------------------------------------------------
    def _open(self) -> Stager:
        if self._closed:
            raise TransactionClosedError("This transaction has already ended.",
                                         hint="Start a new Transaction for further changes.")
        return self._stager

    def apply_patch(self, patch: str | Patch) -> None:
        """Stage a whole patch (all its operations, or none if one fails)."""
        self._open().stage_patch(parse(patch) if isinstance(patch, str) else patch)

    def write_bytes(self, path: str, data: bytes, *, mode: int | None = None) -> None:
        self._open().stage_write(path, data, mode)

    def write_text(self, path: str, text: str, *, encoding: str = "utf-8") -> None:
        try:
            data = text.encode(encoding)
        except (UnicodeEncodeError, LookupError) as exc:
            raise _encoding_error(f"Cannot write {path} as {encoding}: {exc}.", path) from None
        self.write_bytes(path, data)

    def delete(self, path: str) -> None:
        from .model import DeleteFile

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
        from .api import apply_plan

        plan = self.preview()
        self._closed = True
        if not plan.targets:
            self.result = Result(plan, committed=False)
            return self.result
        self.result = apply_plan(plan, durable=self._durable, lock_timeout=self._lock_timeout,
                                 history_count=self._history_count, history_bytes=self._history_bytes)
        return self.result

    def rollback(self) -> None:
        """Discard everything staged (nothing was written)."""
        self._closed = True

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
