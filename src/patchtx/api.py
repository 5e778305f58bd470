"""The library surface: parse, plan (dry run) and apply, each a thin composition of the stages.

The options are the keyword arguments of ``patchtx.options`` (``PlanOptions`` for planning,
``CommitOptions`` for the commit); ``policy.options_for`` turns them into the values in force.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict, Unpack

from ._record import replace
from .cancel import Cancellation
from .errors import ArgumentTypeError, FileNotFoundPatchError, ParseError, PatchtxError, PolicyError
from .formats.codex import parse
from .intake.repair import parse_repaired
from .model import Patch, Plan
from .options import ALL_KEYWORDS, PLAN_KEYWORDS
from .place.textfile import require_unicode
from .plan.planner import plan
from .result import Result
from .txn import commit
from .txn.retention import KeepHistory
from .workspace.paths import parent_root, root_path
from .workspace.policy import options_for

if TYPE_CHECKING:
    from collections.abc import Mapping

    from .options import CommitOptions, OptionKeywords, PlanKeywords, PlanOptions
    from .txn.commit import Progress
    from .txn.fsops import FileSystemOps
    from .txn.reports import CommitReport, RecoveryReport
    from .txn.verify import Verifier

    Patches = str | bytes | Patch | Sequence[str | bytes | Patch]

PathLike = str | os.PathLike[str]


def parse_patches(patches: Patches, options: PlanOptions, *, extract: bool = False,
                  strip: int | None = None, reverse: bool = False,
                  unidiff_zero: bool = False) -> list[Patch]:
    """Each patch text parsed (taken out of a model's reply first with ``extract``; ``strip``,
    ``reverse`` and ``unidiff_zero`` are ``-p N``, ``-R`` and git apply's ``--unidiff-zero`` for
    unified diffs), the texts together (a parsed patch's
    own text included) no longer than ``options.max_patch_bytes``."""
    texts = patch_list(patches)
    if extract:
        from .intake.extract import extract_patch  # (off a one-line edit's path)

        texts = [extract_patch(p) if isinstance(p, str) else p for p in texts]
    limit = options.max_patch_bytes
    if limit is not None:
        size = sum(len((p if isinstance(p, str) else p.text).encode("utf-8", "surrogatepass")) for p in texts)
        if size > limit:
            raise PolicyError(f"Refusing the patch: it is {size} bytes, more than the limit of "
                              f"{limit}.", hint="Split it into smaller patches.",
                              details={"bytes": size, "limit": limit})
    for given in texts:
        if isinstance(given, Patch):  # (a text is asked by its parser)
            require_unicode(given.text)  # an edit list's, an editor call's: every argument
    if options.strict:
        return [parse(p, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero)
                if isinstance(p, str) else p for p in texts]
    return [parse_repaired(p, strip=strip, reverse=reverse, unidiff_zero=unidiff_zero)
            if isinstance(p, str) else p for p in texts]


def patch_list(patches: Patches) -> list[str | Patch]:
    """``patches`` as a list of texts and parsed patches (bytes read as ``patch_text`` reads a
    patch file); ArgumentTypeError for anything else."""
    if isinstance(patches, str | Patch):
        return [patches]
    if isinstance(patches, bytes | bytearray):
        return [patch_text(patches)]
    if isinstance(patches, list | tuple) and all(isinstance(p, str | Patch | bytes | bytearray) for p in patches):
        return [patch_text(p) if isinstance(p, bytes | bytearray) else p for p in patches]
    raise ArgumentTypeError.expected(
        "the patch", "a patch text (str or UTF-8 bytes), a parsed Patch or a list of them", patches,
        hint=_PASS_THE_TEXT if isinstance(patches, os.PathLike) or (
            isinstance(patches, list | tuple) and any(isinstance(p, os.PathLike) for p in patches))
        else "Pass the patch as a string (a Codex patch or a unified diff).")


_PASS_THE_TEXT = "Pass the patch's text: read the file first (path.read_text())."


def patch_text(data: bytes | bytearray) -> str:
    """THE reading of a patch's bytes (a patch file's, standard input's, a library caller's): UTF-8,
    a byte that is not UTF-8 kept as its surrogate escape, so that a unified diff of a file in any
    encoding applies byte for byte, as git applies it; every other format refuses such a byte as
    it is parsed (``codex.require_text``: ``parse_error`` naming the byte)."""
    return bytes(data).decode("utf-8", "surrogateescape")


def name_the_file(error: ParseError, patches: Sequence[str | Patch], root: PathLike) -> ParseError:
    """``error`` (a patch text that is no patch) told what to pass when the text is only the name
    of an existing file (relative to the current directory or ``root``): a library caller passed
    the file's name where its text belongs."""
    for given in patches:
        name = given.strip() if isinstance(given, str) else ""
        if name and "\n" not in name and len(name) < 4096 and any(
                os.path.isfile(os.path.join(folder, name)) for folder in (".", root_path(root))):
            error.hint = (f"The patch text {name!r} looks like a file name, not a patch: pass the "
                          f"file's text (Path({name!r}).read_text()).")
            error.args = (error.message,)
    return error


def check_call(call: Mapping[str, Any]) -> None:
    """The ``PatchKeywords`` of a call each of its type (ArgumentTypeError naming the first that is
    not): a wrong type would otherwise fail deep inside, or be recorded (an intent of 5)."""
    for name, value in call.items():
        if value is None or name not in CALL_KEYWORDS:
            continue
        if name == "intent":
            fits, wanted = isinstance(value, str), "a string"
        elif name == "strip":
            fits = isinstance(value, int) and not isinstance(value, bool) and value >= 0
            wanted = "a non-negative integer"
        elif name == "progress":
            fits, wanted = callable(value), "a function progress(phase, done, total)"
        elif name == "cancel":
            fits, wanted = isinstance(value, Cancellation), "a patchtx.cancel.Cancellation"
        else:
            fits, wanted = isinstance(value, bool), "a boolean"
        if not fits:
            raise ArgumentTypeError.expected(f"`{name}`", wanted, value)


def plan_parsed(parsed: list[Patch], root: PathLike, options: PlanOptions, *, intent: str | None = None,
                progress: Progress | None = None, cancel: Cancellation | None = None) -> Plan:
    """The Plan of parsed patches, planned in order as one; ``cancel`` is looked at for each path
    planned (where ``progress`` is told)."""
    return plan(parsed, root, options, intent=intent, progress=_cancellable(progress, cancel))


def _cancellable(progress: Progress | None, cancel: Cancellation | None) -> Progress | None:
    """``progress``, checking ``cancel`` first each time it is told how far planning is."""
    if cancel is None:
        return progress

    def told(phase: str, done: int, total: int) -> None:
        cancel.check(f"planning ({done} of {total} paths)")
        if progress is not None:
            progress(phase, done, total)

    return told


CALL_KEYWORDS = frozenset({"intent", "progress", "cancel", "extract", "strip", "reverse", "unidiff_zero"})
"""The keys of ``PatchKeywords`` (a test holds the two equal)."""

if TYPE_CHECKING:
    # (For type checkers only: building a TypedDict at run time costs a one-line edit ~3 ms.)
    class PatchKeywords(TypedDict, total=False):
        """What one call of ``plan_patch`` or ``apply_patch`` asks besides the options: how the patch
        texts are read, what is recorded with the change and who is told of its progress. Each may be
        left out (its default in brackets)."""

        intent: str | None
        """Why the change is made, recorded with it in the undo history (None)."""
        progress: Progress | None
        """Called as ``progress(phase, done, total)`` for each new file planned (phase "planning")
        and, by ``apply_patch``, as the commit works through its files (None)."""
        cancel: Cancellation | None
        """Set by the host (another thread) to stop the call: looked at while planning and by
        the commit up to its commit point, which then rolls back (``patchtx.cancel``; None)."""
        extract: bool
        """Take each patch text out of a model's reply first: code fences, prose around it (False;
        see ``patchtx.intake.extract``)."""
        strip: int | None
        """Unified diffs: ``-p N``, the leading path components removed (None: git's a/ b/, else 1)."""
        reverse: bool
        """Unified diffs: ``-R``, the diff applied in reverse (False)."""
        unidiff_zero: bool
        """Unified diffs: git apply's ``--unidiff-zero``, a context-free '@@ -0,0' hunk inserting at the
        top of the file (False: it fills an empty file)."""

    class PlanPatchKeywords(PatchKeywords, PlanKeywords, total=False):
        pass

    class ApplyPatchKeywords(PatchKeywords, OptionKeywords, total=False):
        pass


def _options(keywords: Mapping[str, Any]) -> dict[str, Any]:
    """The options among a call's keywords (the ``PatchKeywords`` left out)."""
    return {name: value for name, value in keywords.items() if name not in CALL_KEYWORDS}


def _read_and_plan(patches: Patches, root: PathLike, options: PlanOptions,
                   call: Mapping[str, Any]) -> Plan:
    """The Plan of ``patches`` read and planned as the call's ``PatchKeywords`` say."""
    check_call(call)
    texts = patch_list(patches)
    try:
        parsed = parse_patches(texts, options, extract=call.get("extract", False), strip=call.get("strip"),
                               reverse=call.get("reverse", False), unidiff_zero=call.get("unidiff_zero", False))
    except ParseError as error:
        raise name_the_file(error, texts, root) from None
    try:
        return plan_parsed(parsed, root, options, intent=call.get("intent"), progress=call.get("progress"),
                           cancel=call.get("cancel"))
    except FileNotFoundPatchError as error:
        rel = error.path
        parent = None if rel is None else parent_root(root_path(root), rel)
        if rel is not None and parent is not None:  # (library and CLI calls: agents' stay inside)
            error.hint = (f"It is {os.path.join(parent, rel)}: the patch's paths start at {parent}, "
                          f"a parent folder of the workspace root; give --root {parent} (the `root` argument).")
            error.args = (error.message,)
        raise


def plan_patch(patches: Patches, root: PathLike = ".", **keywords: Unpack[PlanPatchKeywords]) -> Plan:
    """Parse and plan without writing. Several patches are planned in order as one; each text may
    be a Codex patch or a unified diff.

    ``keywords`` are those of ``PatchKeywords`` (``intent``, ``progress``, ``cancel``, ``extract``,
    ``strip``, ``reverse``, ``unidiff_zero``: how the texts are read) and the fields of ``PlanOptions``
    (``allow_delete``, ``protected``, ``max_files``...): the host's ceiling (None or left out: the
    per-user config, then ``PATCHTX_POLICY``, then the defaults), which the workspace's policy may
    only tighten.
    """
    plan_options, _ = options_for(root, _options(keywords), accepted=PLAN_KEYWORDS, caller="plan_patch()")
    return _read_and_plan(patches, root, plan_options, keywords)


def apply_plan(plan_: Plan, *, progress: Progress | None = None, cancel: Cancellation | None = None,
               **options: Unpack[OptionKeywords]) -> Result:
    """Commit a Plan through the transaction manager (all or nothing), keeping its before-images
    in the undo history. ``options`` are the fields of ``CommitOptions`` (``durable``,
    ``lock_timeout``, ``history_count``, ``history_bytes``; the history limits left out are as the
    workspace's ``[tool.patchtx]`` table says, else the defaults) and of ``PlanOptions``: the
    host's ceiling that the commit checks the plan against, whoever made it (``protected``,
    ``allow_delete``, ``max_files``...; left out: the host's config and environment), which the
    workspace's policy may only tighten."""
    if not isinstance(plan_, Plan):
        raise ArgumentTypeError.expected("the plan", "a Plan (made by plan_patch or Transaction.preview)", plan_)
    check_call({"progress": progress, "cancel": cancel})
    plan_options, commit_options = options_for(plan_.root, options, accepted=ALL_KEYWORDS, caller="apply_plan()")
    return commit_plan(plan_, commit_options, progress=progress, policy=plan_options, cancel=cancel)


def commit_plan(plan_: Plan, options: CommitOptions, *, progress: Progress | None = None,
                policy: PlanOptions | None = None, origin: str | None = None, undoes: str | None = None,
                fs: FileSystemOps | None = None, dir_modes: Mapping[str, int] | None = None,
                cancel: Cancellation | None = None) -> Result:
    """Commit a Plan with the options in force (see ``apply_plan``); ``policy`` is the host's
    ceiling the commit's gate checks it against, ``origin`` the surface it came through (recorded
    in its undo-history entry: ``mcp`` for the MCP server, see ``patchtx mcp --undo``). An undo
    names the transaction it ``undoes`` and the ``dir_modes`` of the folders it puts back; ``fs``
    is the commit's filesystem layer (tests fail or crash it); ``cancel`` stops the commit (and its
    verify command) up to the commit point, rolling back."""
    keep = KeepHistory(count=options.history_count, max_bytes=options.history_bytes, undoes=undoes,
                       origin=origin)
    check = verifier_for(options, progress=progress, cancel=cancel)
    report = commit(plan_, durable=options.durable, lock_timeout=options.lock_timeout, fs=fs,
                    retention=keep, progress=progress, dir_modes=dir_modes, check=check, policy=policy,
                    cancel=cancel)
    outcome = None if check is None else check.outcome
    if outcome is not None and report.state_restored:
        outcome = replace(outcome, state_restored=report.state_restored)
    return Result(plan_, committed=True, transaction_id=report.transaction_id,
                  fsyncs=report.fsyncs, recovery=recovery_of(report), verify=outcome)


def verifier_for(options: CommitOptions, *, progress: Progress | None = None,
                 cancel: Cancellation | None = None) -> Verifier | None:
    """The verify step the options ask for (None: no ``verify`` command), telling ``progress``
    how long it has run and stopped by ``cancel``."""
    if options.verify is None:
        return None
    from .txn.verify import Verifier  # (off a one-line edit's path)

    return Verifier(options.verify, options.verify_timeout, progress=progress, cancel=cancel)


def recovery_of(report: CommitReport) -> RecoveryReport | None:
    """What the commit recovered of earlier interrupted transactions before its own (None:
    nothing was left over)."""
    if report.recovery is None or report.recovery.nothing_to_do:
        return None
    return report.recovery


def apply_patch(patches: Patches, root: PathLike = ".", *, dry_run: bool = False,
                **keywords: Unpack[ApplyPatchKeywords]) -> Result:
    """Apply one or more patches to ``root`` as a single transaction; raise PatchtxError on
    failure, in which case nothing was changed. ``dry_run`` plans and reports, writing nothing.
    ``keywords`` are those of ``PatchKeywords`` (``intent``, ``progress``, ``cancel``, ``extract``,
    ``strip``, ``reverse``, ``unidiff_zero``: see ``plan_patch``) and the fields of ``PlanOptions`` and
    ``CommitOptions`` (see ``plan_patch`` and ``apply_plan``)."""
    plan_options, commit_options = options_for(root, _options(keywords), caller="apply_patch()")
    planned = _read_and_plan(patches, root, plan_options, keywords)
    if dry_run:
        return Result(planned, committed=False, dry_run=True)
    return commit_plan(planned, commit_options, progress=keywords.get("progress"), policy=plan_options,
                       cancel=keywords.get("cancel"))


def apply_edits(edits: Sequence[Mapping[str, Any]], root: str | os.PathLike[str] = ".", *,
                file_path: str | None = None, dry_run: bool = False, intent: str | None = None,
                **options: Unpack[OptionKeywords]) -> Result:
    """Apply an edit list to ``root`` as one transaction (``formats.edits`` reads it); raise
    ``PatchtxError`` if any edit fails, in which case nothing was changed. ``file_path`` is the
    file of the edits that name none; ``options`` are those of ``patchtx.apply_patch`` (the
    host's policy and commit options)."""
    from .formats.edits import name_the_edit, parse_edits  # (off a one-line edit's path)

    patch = parse_edits(edits, path=file_path)
    try:
        return apply_patch(patch, root, dry_run=dry_run, intent=intent, **options)
    except PatchtxError as error:
        raise name_the_edit(error, patch, root_path(root)) from None
