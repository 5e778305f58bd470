"""Tool declarations: shapes hosts send to a model, the CLI-ready printer, and the instructions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agents_support import REPO, fenced_blocks, snapshot
from grammar_engines import lark_accepts

from patchtx.agents import toolspec
from patchtx.agents.tool_call import run_tool_call
from patchtx.agents.toolspec import FORMATS, instructions, tool_spec, tool_spec_main
from patchtx.api import plan_patch
from patchtx.errors import PatchtxError

OPTIONS = {"dry_run", "allow_delete", "allow_move", "workspace_root", "intent", "extract", "skip_applied",
           "strip", "reverse"}


def test_custom_tool_is_a_freeform_tool_with_our_grammar() -> None:
    spec = tool_spec("custom")
    assert isinstance(spec, dict)
    assert set(spec) == {"type", "name", "description", "format"}
    assert (spec["type"], spec["name"]) == ("custom", "apply_patch")
    assert spec["format"] == {"type": "grammar", "syntax": "lark", "definition": tool_spec("lark")}
    assert "FREEFORM" in spec["description"] and instructions() in spec["description"]


@pytest.mark.parametrize(("format", "patch_parameter"),
                         [("function", "input"), ("function-patchText", "patchText"),
                          ("function-patch", "patch")])
def test_function_tools_require_only_the_patch(format: str, patch_parameter: str) -> None:
    spec = tool_spec(format)
    assert isinstance(spec, dict)
    assert (spec["type"], spec["name"], spec["strict"]) == ("function", "apply_patch", False)
    assert spec["description"] == instructions()
    parameters = spec["parameters"]
    assert parameters["required"] == [patch_parameter]
    assert parameters["additionalProperties"] is False
    assert set(parameters["properties"]) == {patch_parameter} | OPTIONS
    assert parameters["properties"][patch_parameter]["type"] == "string"
    defaults = {name: prop.get("default") for name, prop in parameters["properties"].items()}
    assert defaults == {patch_parameter: None, "dry_run": False, "allow_delete": False,
                        "allow_move": True, "workspace_root": ".", "intent": None, "extract": False,
                        "skip_applied": False, "strip": None, "reverse": False}
    for name in OPTIONS:
        assert parameters["properties"][name]["description"]


@pytest.mark.parametrize("format", ["function", "function-patchText", "function-patch"])
def test_a_call_filled_from_the_schema_runs(format: str, tree: Path) -> None:
    """Every property the schema declares is accepted by the executor, with its declared type
    (the patch is a unified diff taken in reverse, so that strip and reverse take part)."""
    spec = tool_spec(format)
    assert isinstance(spec, dict)
    samples = {"string": "pkg", "boolean": True, "integer": 1}
    arguments = {name: samples[prop["type"]] for name, prop in spec["parameters"]["properties"].items()}
    arguments[spec["parameters"]["required"][0]] = ("--- a/util.py\n+++ b/util.py\n@@ -1 +1 @@\n"
                                                    "-VALUE = 2\n+VALUE = 1\n")
    before = snapshot(tree)
    outcome = run_tool_call(arguments, str(tree))
    assert outcome.payload == {"ok": True, "dry_run": True, "summary": "A 0, M 1, D 0, R 0",
                               "counts": {"A": 0, "M": 1, "D": 0, "R": 0}, "transaction": None,
                               "recovered": None, "intent": "pkg", "repairs": [], "verify": None, "error": None,
                               "syntax": {"mode": "refuse", "files": [{
                                   "path": "pkg/util.py", "status": "ok", "language": "python",
                                   "errors": [], "reason": None}]},
                               "files": [{"path": "pkg/util.py", "status": "modified", "diff": (
                                   "diff --git a/pkg/util.py b/pkg/util.py\n"
                                   "--- a/pkg/util.py\n+++ b/pkg/util.py\n@@ -1 +1 @@\n"
                                   "-VALUE = 1\n+VALUE = 2\n")}]}
    assert snapshot(tree) == before


def test_text_formats() -> None:
    assert tool_spec("instructions") == instructions()
    assert tool_spec("instructions").startswith("# The apply_patch tool")
    assert tool_spec("lark").startswith("start: BEGIN_PATCH")


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tool-spec format 'xml'"):
        tool_spec("xml")


@pytest.mark.parametrize("format", FORMATS)
def test_tool_spec_main_prints_the_declaration(format: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_spec_main(["--format", format]) == 0
    out = capsys.readouterr().out
    spec = tool_spec(format)
    assert (json.loads(out) if isinstance(spec, dict) else out) == spec


def test_tool_spec_main_defaults_to_the_custom_tool(capsys: pytest.CaptureFixture[str]) -> None:
    assert tool_spec_main([]) == 0
    assert json.loads(capsys.readouterr().out) == tool_spec("custom")


def test_tool_spec_main_refuses_an_unknown_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        tool_spec_main(["--format", "yaml"])
    assert exited.value.code == 2
    assert "invalid choice: 'yaml'" in capsys.readouterr().err


def test_the_grammar_and_instructions_ship_as_package_data() -> None:
    from importlib import resources

    package = resources.files("patchtx.agents")
    assert package.joinpath(toolspec.GRAMMAR_RESOURCE).is_file()
    assert package.joinpath(toolspec.INSTRUCTIONS_RESOURCE).is_file()


# -- the instructions: what they teach must be true of patchtx ----------------------------------

def test_instructions_teach_patchtx_semantics() -> None:
    text = " ".join(instructions().split())
    for phrase in ("single transaction", "nothing was changed", "Never use an absolute path or `..`",
                   "more than one place", "every candidate line number",
                   "right after its anchor line", "`@@ class Cart:` then", "*** End of File",
                   "Adding a file that already exists is refused",
                   "Do not use it for output that a program produces",
                   "bulk, mechanical changes"):
        assert phrase in text, phrase


def test_the_instructions_example_applies_to_the_demo_tree(tmp_path: Path) -> None:
    [example] = fenced_blocks(instructions(), "")
    shutil.copytree(REPO / "examples" / "demo", tmp_path / "demo")
    assert lark_accepts(example)
    plan = plan_patch(example, tmp_path / "demo", allow_delete=False, allow_move=False)
    after = {change.path: change.after for change in plan.changes}
    assert plan.summary == "A 1, M 2, D 0, R 0"
    # Under the tools' defaults (deletes off), as a model would send it.
    outcome = run_tool_call({"input": example}, str(tmp_path / "demo"))
    assert outcome.ok, outcome.text
    assert (tmp_path / "demo" / "docs" / "CHANGES.md").read_bytes() == after["docs/CHANGES.md"]
    assert after["docs/CHANGES.md"] == b"# Changes\n\n- Discounts outside 0-100 are refused.\n"
    cart = after["src/shop/cart.py"]
    assert cart is not None and b"subtotal = round(sum(price for _, price in self.items), 2)" in cart


def test_stacked_anchors_in_the_instructions_pick_the_method_inside_the_class(tmp_path: Path) -> None:
    """The instructions promise that stacked anchors narrow step by step; hold patchtx to it."""
    (tmp_path / "shop.py").write_text(
        "def total(self):\n    return 0\n\nclass Cart:\n    def total(self):\n        return 0\n")
    patch = ("*** Begin Patch\n*** Update File: shop.py\n@@ class Cart:\n@@     def total(self):\n"
             "-        return 0\n+        return 1\n*** End Patch\n")
    [change] = plan_patch(patch, tmp_path).changes
    assert change.after == (b"def total(self):\n    return 0\n\nclass Cart:\n    def total(self):\n"
                            b"        return 1\n")


def test_other_claims_of_the_instructions_hold(tmp_path: Path) -> None:
    (tmp_path / "cart.py").write_text("class Cart:\n    pass\n\nx = 1\nx = 1\n")
    insertion = plan_patch("*** Begin Patch\n*** Update File: cart.py\n@@ class Cart:\n+    items = []\n"
                           "*** End Patch\n", tmp_path)
    assert insertion.changes[0].after == b"class Cart:\n    items = []\n    pass\n\nx = 1\nx = 1\n"
    with pytest.raises(PatchtxError) as ambiguous:
        plan_patch("*** Begin Patch\n*** Update File: cart.py\n-x = 1\n+x = 2\n*** End Patch\n", tmp_path)
    assert ambiguous.value.kind == "ambiguous_context" and "4, 5" in ambiguous.value.message
    with pytest.raises(PatchtxError) as exists:
        plan_patch("*** Begin Patch\n*** Add File: cart.py\n+x\n*** End Patch\n", tmp_path)
    assert exists.value.kind == "file_exists"
    with pytest.raises(PatchtxError) as absolute:
        plan_patch(f"*** Begin Patch\n*** Add File: {tmp_path.parent}/x.py\n+x\n*** End Patch\n", tmp_path)
    assert absolute.value.kind == "unsafe_path"


def test_apply_patch_takes_json_schema_like_the_other_tools(capsys: pytest.CaptureFixture[str]) -> None:
    function = tool_spec("function")
    assert isinstance(function, dict)
    assert tool_spec("json-schema") == function["parameters"]
    assert tool_spec_main(["--tool", "apply_patch", "--format", "json-schema"]) == 0
    assert json.loads(capsys.readouterr().out) == function["parameters"]
