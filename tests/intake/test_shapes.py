"""Every shape of the issue's table (tests/intake/shapes.py): the determined ones apply to what
they mean, reporting their repairs; the others are refused with nothing written; ``strict`` (the
host's ``--strict``) refuses every shape that needs a repair, as Codex does."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import patchtx
from patchtx.errors import PatchtxError

from .shapes import ROOT, SHAPES, Shape

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import replay  # noqa: E402


def tree(root: Path, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        full.write_bytes(data)


def contents(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` but patchtx's own state, as the replay harness reads a tree."""
    return replay.snapshot(root)


def expected(shape: Shape) -> dict[str, bytes]:
    assert shape.intended is not None
    merged = {**shape.files, **shape.intended}
    return {path: data for path, data in merged.items() if data is not None}


def run(shape: Shape, root: Path, **options: object) -> patchtx.Result | PatchtxError:
    tree(root, shape.files)
    patch = shape.patch.replace(ROOT, str(root))
    try:
        return patchtx.apply_patch(patch, root, durable=False, **{**shape.options, **options})
    except PatchtxError as error:
        return error


def _marked(shapes: list[Shape]) -> list[object]:
    return [pytest.param(s, id=s.name, marks=pytest.mark.xfail(strict=True, reason=s.xfail))
            if s.xfail else pytest.param(s, id=s.name) for s in shapes]


@pytest.mark.parametrize("shape", _marked(SHAPES))
def test_shape(shape: Shape, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    outcome = run(shape, root)
    if shape.intended is None:
        assert isinstance(outcome, PatchtxError), f"applied a patch with no one meaning ({shape.why})"
        assert contents(root) == shape.files
        assert "Nothing was changed" in outcome.message
        return
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert contents(root) == expected(shape)
    assert [repair.kind for repair in outcome.plan.repairs] == list(shape.repairs)


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.repairs], ids=[s.name for s in SHAPES if s.repairs])
def test_strict_refuses_what_needs_a_repair(shape: Shape, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    outcome = run(shape, root, strict=True)
    if isinstance(outcome, PatchtxError):
        assert contents(root) == shape.files
    else:  # (Codex's reading, where it applies at all: never the repair's)
        assert outcome.plan.repairs == ()


@pytest.mark.parametrize("shape", [s for s in SHAPES if s.intended is not None and not s.repairs],
                         ids=[s.name for s in SHAPES if s.intended is not None and not s.repairs])
def test_strict_applies_what_needs_none(shape: Shape, tmp_path: Path) -> None:
    root = tmp_path.resolve()
    outcome = run(shape, root, strict=True)
    assert not isinstance(outcome, PatchtxError), outcome.message
    assert contents(root) == expected(shape)


APPLIED = [s for s in SHAPES if s.intended is not None and not s.xfail]


@pytest.mark.parametrize("shape", APPLIED, ids=[s.name for s in APPLIED])
def test_a_shape_sent_again_is_already_applied(shape: Shape, tmp_path: Path) -> None:
    """A model's patch resent (an agent's retry) is never applied on top of itself, whatever the
    repair step did to place it the first time: ``already_applied``, and a no-op with
    ``skip_applied``."""
    root = tmp_path.resolve()
    first = run(shape, root)
    assert not isinstance(first, PatchtxError), first.message
    once = contents(root)
    patch = shape.patch.replace(ROOT, str(root))
    with pytest.raises(PatchtxError) as again:
        patchtx.apply_patch(patch, root, durable=False, **shape.options)
    assert again.value.kind == "already_applied", again.value.message
    assert contents(root) == once
    skipped = patchtx.apply_patch(patch, root, durable=False, skip_applied=True, **shape.options)
    assert not skipped.plan.changes and contents(root) == once
