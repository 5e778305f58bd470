"""What ``@record`` saves over ``dataclasses`` at start-up: why ``src/`` does not use ``dataclasses``.

Each sample is a fresh interpreter that, after ``import re`` (which the installed scripts load
first), imports the decorator's module and builds 25 frozen, slotted classes with the field counts
of the records a one-line edit loads; then makes 100,000 instances of a 9-field one. The figures
are medians over the interpreters::

    .venv/bin/python benchmarks/record_cost.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

# Fields of the records a one-line edit through apply_patch defines (model, matching, workspace,
# planner, policy, fsops, layout, journal, reports, textfile).
FIELD_COUNTS = [8, 4, 3, 6, 4, 14, 4, 5, 6, 7, 4, 3, 12, 3, 4, 3, 7, 3, 2, 9, 3, 6, 7, 2, 11]

_PROBE = r"""
import json, sys, time
import re
counts = json.loads(sys.argv[2])
t = time.perf_counter()
if sys.argv[1] == "record":
    from patchtx._record import record as decorate
else:
    from dataclasses import dataclass
    decorate = dataclass(frozen=True, slots=True)
imported = time.perf_counter() - t
t = time.perf_counter()
classes = []
for i, n in enumerate(counts):
    annotations = {f"field_{j}": "int" for j in range(n)}
    classes.append(decorate(type(f"C{i}", (), {"__annotations__": annotations, "__module__": __name__})))
built = time.perf_counter() - t
nine = classes[counts.index(9)]
t = time.perf_counter()
for _ in range(100_000):
    nine(1, 2, 3, 4, 5, 6, 7, 8, 9)
per_instance = (time.perf_counter() - t) / 100_000
print(json.dumps({"import": imported, "build": built, "instance": per_instance}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per kind (default 15)")
    args = parser.parse_args()
    # As run.py does: a PYTHONDONTWRITEBYTECODE in the session would make every run compile from source.
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    samples: dict[str, list[dict[str, float]]] = {"record": [], "dataclasses": []}
    for _ in range(args.runs):  # alternated, so that drift on the machine reaches both
        for kind, runs in samples.items():
            done = subprocess.run([sys.executable, "-c", _PROBE, kind, json.dumps(FIELD_COUNTS)],
                                  capture_output=True, text=True, check=True, env=env)
            runs.append(json.loads(done.stdout))
    for kind, runs in samples.items():
        median = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
        print(f"{kind:12s} import {median['import'] * 1e3:5.1f} ms + {len(FIELD_COUNTS)} classes "
              f"{median['build'] * 1e3:5.1f} ms = {(median['import'] + median['build']) * 1e3:5.1f} ms; "
              f"an instance of 9 fields {median['instance'] * 1e6:.2f} us")
    print(f"(median of {args.runs} interpreters each, Python {sys.version.split()[0]})")


if __name__ == "__main__":
    main()
