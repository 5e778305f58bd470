"""A mutation run over the modules a mistake costs most in: do the tests notice when the code is wrong?

    python benchmarks/mutation.py                    # a sample of 25 mutants per area (a few minutes each)
    python benchmarks/mutation.py --sample 0         # every mutant: the nightly run (hours)
    python benchmarks/mutation.py --area gate --area recovery --sample 40 --seed 7
    python benchmarks/mutation.py --list             # the mutants, without running anything

Each mutant is one small change to one module of ``src/patchtx`` (see MUTATIONS): a statement
deleted (replaced by ``pass``), a comparison or a boolean operator turned around, a ``not`` removed,
a constant changed. It is written into a scratch copy of ``src/`` that the area's tests import
(``PYTHONPATH``, so the processes the tests start run it too), and the tests run until the first
failure: a failure, an error or the time limit kills the mutant; a green run means the tests would
let that mistake through, and the mutant is listed with its line. A mutant that does not compile is
not counted. The working tree is never written.

Why not cosmic-ray or mutmut (both on PyPI): neither has the operator that matters most here, the
deleted statement (cosmic-ray 8.7's operators replace operators, constants, loops and exceptions;
mutmut 3's replace operators, constants, strings, arguments and assignments). Every one of the six
survivors that issue 38 named (a line of the gate's protected-glob walk, the chmod of a restored
copy, an fsync, a check in the unified parser, a close...) is a deleted statement.

A surviving mutant is either a test to write or an equivalent mutant (the program behaves the same:
a cache not filled, a fast path not taken, a check that another one repeats): EQUIVALENT lists the
ones judged so, with why, and the summary counts them apart. The areas and their tests are in AREAS.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "patchtx"


@dataclass(frozen=True)
class Area:
    modules: tuple[str, ...]
    """Modules under src/patchtx mutated."""
    tests: tuple[str, ...]
    """The tests that hold them (run until the first failure)."""


AREAS = {
    "gate": Area(("txn/gate.py",),
                 ("tests/security/test_gate.py", "tests/security/test_hostile_policy.py",
                  "tests/workspace/test_glob.py", "tests/security/test_hostile_provenance.py",
                  "tests/security/test_hidden_reads.py")),
    "commit": Area(("txn/commit.py", "txn/fsops.py"),
                   ("tests/txn/test_commit.py", "tests/txn/test_verify_races.py", "tests/txn/test_hard_links.py",
                    "tests/txn/test_faults.py", "tests/txn/test_crash.py", "tests/txn/verify/test_verify_reach.py",
                    "tests/txn/test_power_loss.py", "tests/history/test_undo.py")),
    "recovery": Area(("txn/recovery.py", "txn/escrow.py"),
                     ("tests/txn/test_recovery.py", "tests/txn/test_hard_links.py", "tests/txn/test_crash.py",
                      "tests/txn/verify/test_verify_reach.py", "tests/txn/verify/test_verify_crash.py",
                      "tests/security/test_hostile_state.py", "tests/txn/test_power_loss.py",
                      "tests/history/test_crash.py")),
    "placement": Area(("place/matching.py",),
                      ("tests/place/test_placement_rule.py", "tests/place/test_matching.py",
                       "tests/place/test_search.py",
                       "tests/place/test_placement_oracle.py", "tests/place/test_sections_oracle.py",
                       "tests/plan/test_property.py")),
}

EQUIVALENT: dict[tuple[str, str, str], str] = {
    # (module, the line as written, the mutation) -> why the program behaves the same.
    ("txn/gate.py", "_LINK_ROUNDS = 8", "constant"):
        "one more round of following symbolic links names a protected file under a ninth link of "
        "a chain: the gate never writes through a link (every folder opened O_NOFOLLOW), so the "
        "extra name changes the wording of a refusal, never what is written",
}


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    kind: str
    """What was done: 'delete', 'compare ==->!=', 'bool and->or', 'not', 'constant'."""
    start: tuple[int, int]
    end: tuple[int, int]
    replacement: str
    original_line: str

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.module, self.original_line.strip(), self.kind)

    def describe(self) -> str:
        return f"{self.module}:{self.line} [{self.kind}] {self.original_line.strip()}"


_COMPARE_SWAPS = {ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", ">="), ast.GtE: (">=", "<"),
                  ast.Gt: (">", "<="), ast.LtE: ("<=", ">"), ast.In: ("in", "not in"),
                  ast.NotIn: ("not in", "in"), ast.Is: ("is", "is not"), ast.IsNot: ("is not", "is")}
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Raise, ast.Continue, ast.Break,
           ast.Delete)
"""Statements deleted (an ``assert`` is not: deleting one never changes what a correct program does)."""


def mutants_of(module: str) -> list[Mutant]:
    """Every mutant of one module, in source order."""
    source = (SRC / module).read_text()
    lines = source.splitlines()
    tree = ast.parse(source)
    found: list[Mutant] = []
    skip = _skipped_nodes(tree)

    def add(node: ast.AST, kind: str, start: tuple[int, int], end: tuple[int, int], replacement: str) -> None:
        found.append(Mutant(module, start[0], kind, start, end, replacement, lines[start[0] - 1]))

    for node in ast.walk(tree):
        if id(node) in skip or not hasattr(node, "lineno"):
            continue
        start = (node.lineno, node.col_offset)
        end = (node.end_lineno or node.lineno, node.end_col_offset or 0)
        if isinstance(node, _SIMPLE) and not _is_docstring(node):
            add(node, "delete", start, end, "pass")
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            before, after = _COMPARE_SWAPS[type(node.ops[0])]
            left = ast.get_source_segment(source, node.left)
            right = ast.get_source_segment(source, node.comparators[0])
            if left is not None and right is not None:
                add(node, f"compare {before}->{after}", start, end, f"({left}) {after} ({right})")
        elif isinstance(node, ast.BoolOp) and len(node.values) == 2:
            op, other = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
            parts = [ast.get_source_segment(source, value) for value in node.values]
            if None not in parts:
                add(node, f"bool {op}->{other}", start, end, f"({parts[0]}) {other} ({parts[1]})")
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = ast.get_source_segment(source, node.operand)
            if operand is not None:
                add(node, "not removed", start, end, f"({operand})")
        elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
            add(node, "constant", start, end, str(not node.value))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            add(node, "constant", start, end, str(node.value + 1))
    return sorted(found, key=lambda m: (m.start, m.kind))


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """Nodes never mutated: what only type checkers read (``if TYPE_CHECKING:`` blocks,
    annotations), ``__slots__`` and module-level docstrings."""
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip.update(id(n) for n in ast.walk(node))
        if isinstance(node, (ast.arg, ast.AnnAssign)) and getattr(node, "annotation", None) is not None:
            skip.update(id(n) for n in ast.walk(node.annotation))  # type: ignore[arg-type]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            skip.update(id(n) for n in ast.walk(node.returns))
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            skip.update(id(n) for n in ast.walk(node))
    return skip


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def mutated_source(mutant: Mutant) -> str:
    lines = (SRC / mutant.module).read_text().splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    text = "".join(lines).encode()
    start = offsets[mutant.start[0] - 1] + mutant.start[1]
    end = offsets[mutant.end[0] - 1] + mutant.end[1]
    return (text[:start] + mutant.replacement.encode() + text[end:]).decode()


def run_tests(area: Area, scratch: Path, timeout: float, workers: int) -> tuple[str, float]:
    """'killed', 'survived' or 'timeout', and the seconds taken."""
    env = {**os.environ, "PYTHONPATH": str(scratch), "PYTHONDONTWRITEBYTECODE": "1",
           "PATCHTX_NO_CODEX": "1"}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p",
                               "no:randomly", "-n", str(workers), *area.tests], cwd=ROOT, env=env, capture_output=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - started
    seconds = time.monotonic() - started
    if done.returncode == 0:
        return "survived", seconds
    if done.returncode == 2 and b"stopping after" in done.stdout:
        return "killed", seconds  # (pytest-xdist's -x ends the session as interrupted)
    if done.returncode in (2, 3, 4, 5):  # interrupted, internal error, usage, no tests: not a verdict
        raise SystemExit(f"pytest could not run the tests ({done.returncode}):\n{done.stdout.decode()[-2000:]}")
    return "killed", seconds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--area", action="append", choices=sorted(AREAS), help="(default: every area)")
    parser.add_argument("--sample", type=int, default=25, help="mutants per area (0: every one)")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--json", type=Path, help="write every verdict to this file")
    parser.add_argument("--workers", type=int, default=2, help="pytest-xdist workers per run (0: one process)")
    options = parser.parse_args()
    areas = options.area or sorted(AREAS)
    rng = random.Random(options.seed)
    chosen: dict[str, list[Mutant]] = {}
    for name in areas:
        every = [m for module in AREAS[name].modules for m in mutants_of(module)]
        picked = every if options.sample <= 0 or options.sample >= len(every) else rng.sample(every, options.sample)
        chosen[name] = sorted(picked, key=lambda m: (m.module, m.start, m.kind))
        print(f"{name}: {len(picked)} of {len(every)} mutants", flush=True)
    if options.list:
        for name, mutants in chosen.items():
            for mutant in mutants:
                print(f"  {name}  {mutant.describe()}  ->  {mutant.replacement[:60]}")
        return 0
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="patchtx-mutation-") as folder:
        scratch = Path(folder) / "src"
        shutil.copytree(ROOT / "src", scratch, ignore=shutil.ignore_patterns("__pycache__"))
        for name in areas:
            area = AREAS[name]
            outcome, baseline = run_tests(area, scratch, timeout=3600, workers=options.workers)
            if outcome != "survived":
                raise SystemExit(f"{name}: the tests fail without any mutant: fix them first")
            print(f"{name}: tests pass unmutated in {baseline:.0f} s", flush=True)
            counts = {"killed": 0, "survived": 0, "timeout": 0, "equivalent": 0, "not compiled": 0}
            for mutant in chosen[name]:
                target = scratch / "patchtx" / mutant.module
                original = target.read_text()
                source = mutated_source(mutant)
                try:
                    compile(source, str(target), "exec")
                except SyntaxError:
                    counts["not compiled"] += 1
                    continue
                target.write_text(source)
                try:
                    limit = max(60.0, 5 * baseline)
                    outcome, seconds = run_tests(area, scratch, timeout=limit, workers=options.workers)
                finally:
                    target.write_text(original)
                if outcome == "survived" and mutant.key in EQUIVALENT:
                    outcome = "equivalent"
                counts[outcome] += 1
                verdicts.append({"area": name, "mutant": mutant.describe(), "replacement": mutant.replacement,
                                 "outcome": outcome, "seconds": round(seconds, 1)})
                if outcome != "killed":
                    why = f"  ({EQUIVALENT[mutant.key]})" if outcome == "equivalent" else ""
                    print(f"  {outcome.upper()}: {mutant.describe()}  ->  {mutant.replacement[:60]}{why}", flush=True)
            judged = counts["killed"] + counts["timeout"] + counts["survived"]
            share = 100 * (counts["killed"] + counts["timeout"]) / judged if judged else 100.0
            print(f"{name}: {counts['killed'] + counts['timeout']} killed of {judged} that change behaviour"
                  f" ({share:.0f} %); {counts['equivalent']} equivalent, {counts['not compiled']} not compiled",
                  flush=True)
    if options.json is not None:
        options.json.write_text(json.dumps(verdicts, indent=1) + "\n")
    return 1 if any(v["outcome"] == "survived" for v in verdicts) else 0


if __name__ == "__main__":
    raise SystemExit(main())
