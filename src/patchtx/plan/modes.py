"""The permission bits a file the plan writes gets: a new file's (0o666 less the umask), and those
a unified diff's mode line gives (``100644``/``100755``, as ``git apply`` sets them)."""

from __future__ import annotations

import os

_DEFAULT_MODE: list[int] = []


def default_file_mode() -> int:
    """What a newly created file gets: 0o666 less the process umask (read once)."""
    if not _DEFAULT_MODE:
        _DEFAULT_MODE.append(0o666 & ~_umask())
    return _DEFAULT_MODE[0]


def _umask() -> int:
    """The process umask, read without changing it where the kernel says it (Linux); elsewhere
    os.umask is the only way to read it, by setting it and putting it back."""
    try:
        with open("/proc/self/status", "rb") as status:
            for line in status:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    umask = os.umask(0o022)
    os.umask(umask)
    return umask


def git_permissions(git_mode: int, current: int | None) -> int:
    """The permission bits a unified diff's mode (``100644`` or ``100755``) gives a file whose
    bits are ``current``: the executable bits follow the read bits, as ``git apply`` sets them."""
    base = default_file_mode() if current is None else current
    if git_mode & 0o100:  # (git canonicalises every mode to 100755 or 100644 by the owner's bit)
        return base | ((base & 0o444) >> 2)
    return base & ~0o111
