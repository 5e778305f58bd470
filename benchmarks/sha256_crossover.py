"""Where hashing with hashlib (OpenSSL) starts to pay for importing it: ``patchtx._sha``'s threshold.

A one-edit process hashes with CPython's built-in SHA-256 module, which loads without OpenSSL but
is slower per byte. Importing hashlib is a fixed cost paid once; the crossover is the number of
bytes whose hashing time the faster implementation saves equals that cost. Each figure is the
median of several fresh interpreters (an import is measured once per process)::

    .venv/bin/python benchmarks/sha256_crossover.py [--runs N]

prints the import costs, the per-MiB hashing times, the crossover, and ``OPENSSL_FROM_BYTES``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

_PROBE = r"""
import json, sys, time
t = time.perf_counter()
if sys.version_info >= (3, 12):
    from _sha2 import sha256 as builtin
else:
    from _sha256 import sha256 as builtin
t_builtin = time.perf_counter() - t
t = time.perf_counter()
from hashlib import sha256 as openssl
t_hashlib = time.perf_counter() - t
data = bytes(range(256)) * 4096 * 4  # 4 MiB
def per_mib(new):
    new(data).digest()  # first touch of the code and the data
    t = time.perf_counter()
    new(data).digest()
    return (time.perf_counter() - t) / 4
print(json.dumps({"import_builtin": t_builtin, "import_hashlib": t_hashlib,
                  "builtin_per_mib": per_mib(builtin), "openssl_per_mib": per_mib(openssl)}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters (default 15)")
    args = parser.parse_args()
    # As run.py does: a PYTHONDONTWRITEBYTECODE in the session would make every run compile from source.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    samples = [json.loads(subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                                         check=True, env=env).stdout) for _ in range(args.runs)]
    median = {key: statistics.median(s[key] for s in samples) for key in samples[0]}
    saved_per_mib = median["builtin_per_mib"] - median["openssl_per_mib"]
    extra_import = median["import_hashlib"] - median["import_builtin"]
    crossover = extra_import / saved_per_mib if saved_per_mib > 0 else float("inf")
    from patchtx._sha import OPENSSL_FROM_BYTES

    print(f"import of the built-in module: {median['import_builtin'] * 1e3:.2f} ms; "
          f"of hashlib: {median['import_hashlib'] * 1e3:.2f} ms")
    print(f"SHA-256 of 1 MiB: built-in {median['builtin_per_mib'] * 1e3:.2f} ms, "
          f"OpenSSL {median['openssl_per_mib'] * 1e3:.2f} ms")
    print(f"crossover: {crossover:.2f} MiB; patchtx switches at {OPENSSL_FROM_BYTES / (1 << 20):.2f} MiB "
          f"(median of {args.runs} interpreters, Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
