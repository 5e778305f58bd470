"""What a patch may do here: options from the caller, defaults from ``[tool.patchtx]``.

The workspace's ``pyproject.toml`` may hold, for example::

    [tool.patchtx]
    allow-delete = false
    protected = ["migrations/**", "*.lock", ".github/"]
    max-files = 200
    max-bytes = 5_000_000
    max-patch-bytes = 1_000_000
    history-count = 20          # undo history: transactions kept (0: none)
    history-bytes = 67_108_864  # ... and bytes of before-images kept

Explicit arguments (API keywords, CLI flags) override the file; the file overrides the defaults
(delete and move allowed, overwrite refused, nothing protected, no caps, undo history of 20
transactions within 64 MiB).
"""

from __future__ import annotations

import os

from ._record import record, replace
from .errors import PolicyError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re
    from typing import Any

_KEYS = {
    "allow-overwrite": "allow_overwrite",
    "allow-delete": "allow_delete",
    "allow-move": "allow_move",
    "first-match": "first_match",
    "protected": "protected",
    "max-files": "max_files",
    "max-bytes": "max_bytes",
    "max-patch-bytes": "max_patch_bytes",
    "history-count": "history_count",
    "history-bytes": "history_bytes",
}


@record
class PlanOptions:
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
    history_count: int = 20
    """Committed transactions whose before-images are kept for undo (0 turns history off)."""
    history_bytes: int = 64 * 1024 * 1024
    """Cap on the before-image bytes the undo history keeps (oldest transactions go first)."""

    def with_overrides(self, **overrides: Any) -> PlanOptions:
        if overrides.get("protected") is not None:
            overrides["protected"] = tuple(overrides["protected"])
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})


def _glob_regex(pattern: str) -> re.Pattern[str]:
    import re

    # A slash only at the end (a folder) still matches at any depth, as in .gitignore.
    anywhere = "/" not in pattern.rstrip("/")
    if pattern.endswith("/"):
        pattern += "**"
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    body = "".join(out)
    # A pattern without a slash names a file or folder anywhere, as in .gitignore; a match also
    # covers everything inside a matched folder.
    prefix = "(?:.*/)?" if anywhere else ""
    return re.compile(f"^{prefix}{body}(?:/.*)?$")


_COMPILED: dict[tuple[str, ...], tuple[re.Pattern[str], ...]] = {}


def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    patterns = tuple(patterns)  # a caller may pass a list
    compiled = _COMPILED.get(patterns)
    if compiled is None:
        compiled = _COMPILED[patterns] = tuple(_glob_regex(p) for p in patterns)
    return compiled


def protected_by(options: PlanOptions, path: str) -> str | None:
    for pattern, regex in zip(options.protected, _compiled(options.protected), strict=True):
        if regex.match(path):
            return pattern
    return None


def _invalid(path: str, why: str) -> PolicyError:
    return PolicyError(f"Invalid [tool.patchtx] table in {path}: {why}.",
                       hint="Fix the configuration; see docs/api.md for the keys.", path=path)


def load_workspace_options(root: str | os.PathLike[str]) -> PlanOptions:
    """Read ``[tool.patchtx]`` from the root's pyproject.toml (defaults if absent)."""
    path = os.path.join(os.fspath(root), "pyproject.toml")
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError:
        return PlanOptions()
    if b"[tool.patchtx]" not in raw:
        return PlanOptions()
    import tomllib

    try:
        tool = tomllib.loads(raw.decode("utf-8")).get("tool", {})
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise _invalid(path, str(exc)) from None
    table = tool.get("patchtx", {}) if isinstance(tool, dict) else {}
    if not isinstance(table, dict):
        raise _invalid(path, "[tool.patchtx] must be a table")
    values: dict[str, Any] = {}
    types = PlanOptions.__annotations__
    for key, value in table.items():
        name = _KEYS.get(key)
        if name is None:
            raise _invalid(path, f"unknown key '{key}' (known: {', '.join(_KEYS)})")
        if name == "protected":
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise _invalid(path, "'protected' must be a list of glob strings")
            value = tuple(value)
        elif "bool" in str(types[name]) and not isinstance(value, bool):
            raise _invalid(path, f"'{key}' must be true or false")
        elif "int" in str(types[name]) and (not isinstance(value, int) or isinstance(value, bool)
                                           or value < 0):
            raise _invalid(path, f"'{key}' must be a non-negative integer")
        values[name] = value
    return PlanOptions(**values)
