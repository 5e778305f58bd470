"""Functions for tests/plan/syntax/test_grammar_process.py to run in an isolated child (patchtx.plan.isolated):
each does what a misbehaving grammar can."""

from __future__ import annotations

import ctypes
import os
import time
from typing import Any


def echo(args: Any, *blobs: bytes | None) -> Any:
    """What it was given, and where it runs."""
    return {"args": args, "sizes": [None if b is None else len(b) for b in blobs], "pid": os.getpid(),
            "cwd": os.getcwd()}


def crash(args: Any, *blobs: bytes | None) -> Any:
    """A segmentation fault, as tree-sitter-yaml's on 300 nested mappings."""
    if args == "crash":
        ctypes.string_at(0)
    return echo(args, *blobs)


def hang(args: Any, *blobs: bytes | None) -> Any:
    if args == "hang":
        time.sleep(3600)
    return echo(args, *blobs)


def allocate(args: Any, *blobs: bytes | None) -> Any:
    """``args`` bytes at once."""
    return len(bytearray(args))


def spin(args: Any, *blobs: bytes | None) -> Any:
    """CPU time without end (the child's own limit ends it)."""
    while True:
        pass


def chatter(args: Any, *blobs: bytes | None) -> Any:
    """Output on descriptor 1 and sys.stdout, as native code or a binding may print, before its
    answer."""
    os.write(1, b'{"answer": "forged"}\n')
    print('{"answer": "forged too"}', flush=True)
    return echo(args, *blobs)


def burn(args: Any, *blobs: bytes | None) -> Any:
    """``args`` seconds of CPU time."""
    until = time.process_time() + args
    while time.process_time() < until:
        pass
    return echo(args, *blobs)
