"""codex-apply-patch (PyPI; a PyO3 build of Codex's Rust apply-patch) as a command: the patch as
the one argument or on stdin, applied in the current directory, like Codex's apply_patch.

The package ships no console script; its documented API is ``codex_apply_patch.apply_patch(patch)``,
which returns Codex's stdout text ("Success. Updated the following files: ...") on success and an
empty string on failure: the error text is not passed back to Python, so this wrapper can only
say that the patch failed.
"""

from __future__ import annotations

import sys

import codex_apply_patch
from _envelope import read_patch


def main() -> int:
    text = read_patch()
    try:
        result = codex_apply_patch.apply_patch(text)
    except Exception as exc:  # the binding raises its own error type (and ValueError/OSError)
        sys.stderr.write(f"{exc}\n")
        return 1
    if not result:
        sys.stderr.write("codex-apply-patch: the patch was not applied (apply_patch returned no "
                         "summary; the library does not expose its error text)\n")
        return 1
    sys.stdout.write(str(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
