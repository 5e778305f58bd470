"""Codex 0.169 on every shape of tests/intake/shapes.py: what it does today, recorded, so that the
comparison in the repair step's documentation stays true (a change in the reference binary shows
here). ``right``: the intended tree; ``refused``: an error and the tree unchanged; ``wrong``: the
tree changed into anything else (a shape with no one meaning applied counts as wrong)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.intake.shapes import ROOT, SHAPES, Shape
from tests.intake.test_shapes import contents, expected, tree

from .codex_binary import run_codex

CODEX = {
    "crlf_file_lf_patch": "right",
    "crlf_patch_text": "right",
    "unified_inside_envelope": "refused",
    "unified_headers_inside_update": "refused",
    "bare_unified_body_in_update": "refused",
    "bare_unified_body_no_file": "refused",
    "begin_marker_decorated": "refused",
    "file_header_decorated": "refused",
    "add_header_decorated": "wrong",
    "end_of_file_decorated": "refused",
    "end_marker_missing": "refused",
    "end_marker_missing_in_fence": "refused",
    "end_marker_missing_cut_after_context": "refused",
    "end_marker_missing_cut_in_fence": "refused",
    "begin_marker_missing": "refused",
    "end_marker_missing_truncated": "refused",
    "end_marker_after_escaped_newline": "refused",
    "absolute_path_inside_root": "right",
    "absolute_paths_in_unified_diff": "refused",
    "absolute_path_outside_root_unified": "refused",
    "json_command_wrapper": "refused",
    "json_input_wrapper": "refused",
    "json_string_wrapper": "refused",
    "line_numbers_colon": "refused",
    "line_numbers_bar": "refused",
    "line_numbers_cat_n": "refused",
    "line_numbers_disagree": "right",
    "context_without_space": "refused",
    "context_without_space_not_in_file": "refused",
    "added_line_without_plus_indented": "refused",
    "stale_context": "refused",
    "pure_addition_under_anchor": "wrong",
    "trailing_whitespace_every_line": "wrong",
    "markdown_fence": "refused",
    "smart_quotes_in_context": "right",
    "wrong_indentation": "wrong",
    "wrong_indentation_addition_only": "wrong",
    "hunk_applied_beside_new": "refused",
    "hunk_applied_beside_new_blank_context": "wrong",
    "bom_in_file": "refused",
    "bom_in_patch": "refused",
    "one_file_several_updates": "right",
    "new_file_as_update": "refused",
    "unified_hunks_out_of_order": "refused",
    "codex_sections_out_of_order": "refused",
    "doubled_prefixes": "refused",
    "powershell_newlines": "refused",
    "range_headers_as_anchors": "refused",
    "first_match_twin_blocks": "wrong",
    "homoglyph_in_removed_line": "refused",
    "end_of_file_last_occurrence": "right",
    "triple_at_header_and_bare_line": "refused",
    "blank_context_line_without_space": "right",
    "anchor_scopes_identical_bodies": "right",
    "anchor_only_insertion_in_scope": "wrong",
    "double_bare_section_marker": "refused",
}


def codex_verdict(shape: Shape) -> str:
    root = Path(tempfile.mkdtemp(prefix="patchtx-shape-")).resolve()
    try:
        tree(root, shape.files)
        run = run_codex(shape.patch.replace(ROOT, str(root)), root)
        after = contents(root)
    finally:
        shutil.rmtree(root)
    if not run.ok:
        return "refused" if after == shape.files else "wrong"
    return "right" if shape.intended is not None and after == expected(shape) else "wrong"


def test_every_shape_has_a_recorded_verdict() -> None:
    assert set(CODEX) == {shape.name for shape in SHAPES}


@pytest.mark.parametrize("shape", SHAPES, ids=[s.name for s in SHAPES])
def test_codex_does_what_is_recorded(shape: Shape) -> None:
    assert codex_verdict(shape) == CODEX[shape.name]
