"""Every refusal names its cause and the way out in one paragraph a model can act on: the shapes
that are not repaired say what the patch looks like it got wrong; a quoted region of the file
ends the message (no hint on the line of a quoted file line); over tool calls, the options are
named as the tool's arguments."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import patchtx
from patchtx.agents.tool_call import run_tool_call
from patchtx.errors import PatchtxError

from ..examples import examples
from .shapes import BY_NAME, ROOT, envelope
from .test_shapes import tree

CAUSES = {
    # shape: words its refusal must hold (the cause, and the way out)
    "bare_unified_body_no_file": ["names no file", "'--- a/PATH'", "'*** Update File: PATH'"],
    "end_marker_missing_truncated": ["no '*** End Patch' line", "cut off", "Close the patch"],
    "end_marker_missing": ["no '*** End Patch' line", "cut off after patch line 6",
                           '"     return message"'],
    "end_marker_missing_cut_after_context": ["cut off after patch line 6", '" RETRIES = 3"'],
    "end_marker_missing_cut_in_fence": ["cut off after patch line 5", '"+kee"',
                                        "its last line is an unchanged line"],
    "line_numbers_disagree": [],  # (applies as written)
    "context_without_space_not_in_file": ["Prefix the line with '+'", "as an added line"],
    "added_line_without_plus_indented": ["its '+' is missing"],
    "stale_context": ["has the file changed", "Re-read the file"],
    "doubled_prefixes": ["A doubled prefix?", "\"keep the primary\" (line 2)"],
    # (a marker of another format: never "prefix it with '+'", which would write it to the file)
    "triple_at_header_and_bare_line": ["'@@@ -1,1 +1,3 @@@' is neither: write '@@'"],
}


def refusal(name: str, root: Path, **options: object) -> PatchtxError:
    shape = BY_NAME[name]
    tree(root, shape.files)
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(shape.patch.replace(ROOT, str(root)), root, durable=False, **options)
    return info.value


@pytest.mark.parametrize("name", [n for n, words in CAUSES.items() if words])
def test_a_refused_shape_names_its_cause(name: str, tmp_path: Path) -> None:
    message = refusal(name, tmp_path.resolve()).message
    assert "Nothing was changed." in message
    for words in CAUSES[name]:
        assert words in message, message
    if name == "triple_at_header_and_bare_line":
        assert "prefix it with '+'" not in message


def test_json_that_holds_two_patches_says_it_is_json(tmp_path: Path) -> None:
    shape = BY_NAME["json_input_wrapper"]
    tree(tmp_path, shape.files)
    text = json.dumps({"input": shape.patch, "patch": shape.patch.replace("hello", "hey")})
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(text, tmp_path)
    assert "The text is JSON" in info.value.message and "exactly one" in info.value.message


ADD = envelope("*** Add File: x.py", "+x = 1")


_OTHER = json.dumps(ADD.replace("x = 1", "y = 2"))


@pytest.mark.parametrize("text", [
    f'{{"input": {json.dumps(ADD)}, "input": {_OTHER}}}',
    f'{{"input": {json.dumps(ADD)}, "cwd": "src", "cwd": "."}}',
    f'{{"name": "apply_patch", "arguments": {json.dumps(f"""{{"input": {json.dumps(ADD)}, "input": {_OTHER}}}""")}}}',
], ids=["two-patches", "two-folders", "twice-in-arguments"])
def test_json_with_a_key_given_twice_is_no_wrapper(text: str, tmp_path: Path) -> None:
    """The decoder keeps a key's last value: a first patch, another folder or a dry run given
    under the same key would be dropped without a word (the second patch wrote). Refused."""
    (tmp_path / "src").mkdir()
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(text, tmp_path)
    assert info.value.kind == "parse_error" and "Nothing was changed." in info.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


@pytest.mark.parametrize(("text", "key"), [
    (json.dumps({"command": ["apply_patch", ADD], "workdir": "src"}), "workdir"),
    (json.dumps({"input": ADD, "root": "src"}), "root"),
    (json.dumps({"input": ADD, "project_dir": "src"}), "project_dir"),
    (json.dumps({"name": "apply_patch", "arguments": json.dumps({"input": ADD, "cwd": "src"})}),
     "cwd"),
], ids=["workdir", "root", "project_dir", "cwd-in-arguments"])
def test_json_naming_a_working_directory_is_not_unwrapped(text: str, key: str, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    with pytest.raises(PatchtxError) as info:  # (its Add would land in the root, not in src)
        patchtx.apply_patch(text, tmp_path)
    assert f'beside other keys ({key}="src")' in info.value.message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src"]


# Issue 37, item 5: every key of a wrapper but the patch's own and the tool call's name, id and
# type may ask something of the patch that taking it out would lose (Codex refuses each).
OTHER_KEYS = [("dry_run", True), ("check", True), ("reverse", True), ("strip", 1), ("cd", "sub"),
              ("target", "sub"), ("location", "sub"), ("in", "sub"), ("wd", "sub")]


@pytest.mark.parametrize(("key", "value"), OTHER_KEYS, ids=[key for key, _ in OTHER_KEYS])
@pytest.mark.parametrize("nested", [False, True], ids=["beside", "in-arguments"])
def test_json_with_a_key_beside_the_patch_that_may_change_it_is_refused_naming_it(
        key: str, value: object, nested: bool, tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "k.txt").write_text("keep\n")
    patch = envelope("*** Update File: k.txt", "@@", "-keep", "+kept")
    arguments = {"input": patch, key: value}
    text = json.dumps({"type": "function", "id": "call_1", "function": {
        "name": "apply_patch", "arguments": json.dumps(arguments)}} if nested else arguments)
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(text, tmp_path)
    assert info.value.kind == "parse_error"
    assert f"beside other keys ({key}={json.dumps(value)})" in info.value.message
    assert "Nothing was changed" in info.value.message
    assert (tmp_path / "k.txt").read_text() == "keep\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.txt", "sub"]


@pytest.mark.parametrize("call", [
    {"type": "function", "id": "call_1", "function": {"name": "apply_patch", "arguments": "ARGS"}},
    {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "apply_patch",
     "arguments": "ARGS"},
    {"type": "tool_use", "id": "toolu_1", "name": "apply_patch", "input": {"patch": "PATCH"}},
    {"recipient_name": "functions.apply_patch", "parameters": {"input": "PATCH"}},
], ids=["chat-completions", "responses", "anthropic-tool-use", "multi-tool-use"])
def test_json_whose_other_keys_name_and_identify_the_tool_call_is_unwrapped(
        call: dict[str, object], tmp_path: Path) -> None:
    (tmp_path / "k.txt").write_text("keep\n")
    patch = envelope("*** Update File: k.txt", "@@", "-keep", "+kept")
    text = json.dumps(call).replace('"ARGS"', json.dumps(json.dumps({"input": patch}))).replace(
        '"PATCH"', json.dumps(patch))
    result = patchtx.apply_patch(text, tmp_path, durable=False)
    assert [repair.kind for repair in result.plan.repairs] == ["json_wrapper"]
    assert (tmp_path / "k.txt").read_text() == "kept\n"


@pytest.mark.parametrize("text", ["[" * 1000, "[" * 100_000 + "]" * 100_000,
                                  '{"a":' * 5000 + "1" + "}" * 5000,
                                  json.dumps({"input": "x"}).replace('"x"', "[" * 3000 + "]" * 3000)],
                         ids=["open-brackets", "closed-brackets", "objects", "deep-beside-a-key"])
def test_json_nested_deeply_is_a_parse_error_not_an_internal_error(text: str, tmp_path: Path) -> None:
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(text, tmp_path)
    assert info.value.kind == "parse_error"
    assert "Nothing was changed" in info.value.message
    assert list(tmp_path.iterdir()) == []


def test_json_with_an_unterminated_string_of_escaped_quotes_is_refused_in_linear_time(tmp_path: Path) -> None:
    """The depth check skipped strings with a pattern that went back over the rest of the text from
    every quote of a string that never closes: 40 KB of escaped quotes took about a minute to
    refuse, 200 KB most of an hour (a model's reply, an MCP call's argument). One pass now."""
    text = '["' + '\\"' * 100_000
    started = time.monotonic()
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(text, tmp_path)
    assert time.monotonic() - started < 20  # (about 0.1 s; minutes before, on any machine)
    assert info.value.kind == "parse_error" and list(tmp_path.iterdir()) == []


def test_a_header_with_a_long_run_of_spaces_is_read_in_linear_time(tmp_path: Path) -> None:
    """Stars after a header's path are found from the start of a run of white space only: a header
    of 200,000 spaces before a word and ' **' took most of an hour (26 s at 20,000)."""
    name = "a" + " " * 200_000 + "b"
    text = envelope(f"*** Update File: {name} **", "@@", "-x", "+y")
    started = time.monotonic()
    with pytest.raises(PatchtxError):
        patchtx.apply_patch(text, tmp_path)
    assert time.monotonic() - started < 20  # (well under a second; minutes before, on any machine)
    assert list(tmp_path.iterdir()) == []


@settings(max_examples=examples(2000), deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.text(alphabet='[]{}"\\ab', max_size=6),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
                        st.text(alphabet='[]{}"\\a', max_size=3), inner, max_size=3), max_leaves=40),
       st.integers(0, 6))
def test_the_depth_check_counts_the_brackets_outside_strings(value: object, limit: int) -> None:
    """The one-pass depth check agrees with the nesting of the decoded value, whatever brackets,
    quotes and backslashes its strings hold."""
    from patchtx.intake.repair import _nested_deeper

    def depth(item: object) -> int:
        if isinstance(item, list):
            return 1 + max(map(depth, item), default=0)
        if isinstance(item, dict):
            return 1 + max(map(depth, item.values()), default=0)
        return 0

    assert _nested_deeper(json.dumps(value), limit) == (depth(value) > limit)


def test_powershell_text_with_another_backtick_is_refused_saying_why(tmp_path: Path) -> None:
    shape = BY_NAME["powershell_newlines"]
    tree(tmp_path, shape.files)
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(shape.patch.replace("return message", "return `message`"), tmp_path)
    assert "PowerShell" in info.value.message and "real line breaks" in info.value.message


def test_line_numbers_that_disagree_with_the_file_are_named(tmp_path: Path) -> None:
    (tmp_path / "greet.py").write_bytes(BY_NAME["line_numbers_colon"].files["greet.py"])
    patch = envelope("*** Update File: greet.py", "@@", " 7: def greet(name):",
                     "-8:     message = 'hi ' + name", "+8:     message = 'hello ' + name")
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(patch, tmp_path)
    message = info.value.message
    assert "start with a line number ('12: text')" in message
    assert "Without the numbers: Closest region: file lines 1-" in message
    assert "No line of the file resembles" not in message  # (the misleading hint of the issue)


def _last_line_is_a_quoted_file_line(message: str, file_lines: list[str]) -> None:
    last = message.rstrip("\n").split("\n")[-1]
    match = re.fullmatch(r" *(\d+) \| (.*)", last)
    assert match is not None, f"the message does not end with a quoted line: {last!r}"
    assert match.group(2) == file_lines[int(match.group(1)) - 1]


def test_no_hint_on_the_line_of_a_quoted_file_line(tmp_path: Path) -> None:
    lines = [f"line {i}" for i in range(1, 9)]
    (tmp_path / "f.txt").write_text("\n".join(lines) + "\n")
    codex = envelope("*** Update File: f.txt", "@@", " line 2", "-line 3x", "+LINE 3", " line 4")
    unified = "--- a/f.txt\n+++ b/f.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3x\n+LINE 3\n line 4\n"
    for patch in (codex, unified):
        for strict in (False, True):
            with pytest.raises(PatchtxError) as info:
                patchtx.apply_patch(patch, tmp_path, strict=strict)
            _last_line_is_a_quoted_file_line(info.value.message, lines)


def test_tool_calls_name_the_tools_arguments_not_command_line_flags(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 2\n")
    sent = envelope("*** Update File: a.py", "@@", "-x = 1", "+x = 2")
    outcome = run_tool_call({"input": sent}, str(tmp_path))
    assert outcome.payload["error"]["kind"] == "already_applied"
    for text in (outcome.text, outcome.payload["error"]["message"], outcome.payload["error"]["hint"]):
        assert "skip_applied: true" in text
        assert "--skip-applied" not in text and "skip_applied=True" not in text
    prose = "Here you go:\n" + envelope("*** Update File: a.py", "@@", "-x = 2", "+x = 3")
    outcome = run_tool_call({"input": prose}, str(tmp_path))
    assert "extract: true" in outcome.text and "--extract" not in outcome.text
    filled = "--- a/a.py\n+++ b/a.py\n@@ -0,0 +1 @@\n+import os\n"  # (a -U0 diff: git's flag)
    outcome = run_tool_call({"input": filled}, str(tmp_path))
    assert outcome.payload["error"]["kind"] == "file_exists", outcome.text
    assert "'*** Update File:'" in outcome.text and "unidiff_zero=True" not in outcome.text
    for call, words in (
            ({"input": sent, "reverse": True}, "Invalid argument: reverse applies"),
            ({"input": "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n", "strip": 2},
             "Resend with a smaller strip."),
            ({"input": "--- /abs/a.py\n+++ /abs/a.py\n@@ -1 +1 @@\n-x = 2\n+x = 3\n", "strip": 0},
             "resend with the strip that leaves")):
        outcome = run_tool_call(call, str(tmp_path))
        assert not outcome.ok and words in outcome.text, outcome.text
        assert not re.search(r"(?<![\w-])-(-[a-z]|p\b)", outcome.text), outcome.text


def test_repairs_are_in_every_surfaces_result(tmp_path: Path) -> None:
    shape = BY_NAME["json_input_wrapper"]
    tree(tmp_path, shape.files)
    outcome = run_tool_call({"input": shape.patch}, str(tmp_path))  # (MCP's tools run this too)
    assert outcome.ok, outcome.text
    assert [r["kind"] for r in outcome.payload["repairs"]] == ["json_wrapper"]
    assert "Repaired (json_wrapper, the whole text)" in outcome.text
    assert (tmp_path / "greet.py").read_bytes() == shape.intended["greet.py"]  # type: ignore[index]


def _cli(*args: str, cwd: Path, stdin: str) -> subprocess.CompletedProcess[str]:
    bin_dir = Path(sys.executable).parent
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=cwd, input=stdin, text=True,
                          capture_output=True, check=False)


def test_the_command_lines_report_repairs_and_strict_turns_them_off(tmp_path: Path) -> None:
    shape = BY_NAME["begin_marker_decorated"]
    tree(tmp_path, shape.files)
    checked = _cli("patchtx", "check", "--json", "-", cwd=tmp_path, stdin=shape.patch)
    assert checked.returncode == 0, checked.stderr
    assert [r["kind"] for r in json.loads(checked.stdout)["repairs"]] == ["decorated_marker"]
    text = _cli("patchtx", "check", "--no-diff", "-", cwd=tmp_path, stdin=shape.patch)
    assert "Repaired (decorated_marker, patch lines 1, 7)" in text.stdout
    strict = _cli("patchtx", "check", "--strict", "-", cwd=tmp_path, stdin=shape.patch)
    assert strict.returncode == 1 and "must be '*** Begin Patch'" in strict.stderr
    dropin = _cli("apply_patch", cwd=tmp_path, stdin=shape.patch)
    assert dropin.returncode == 0, dropin.stderr
    assert dropin.stdout == "Success. Updated the following files:\nM greet.py\n"  # Codex's text
    assert "Repaired (decorated_marker" in dropin.stderr
    assert (tmp_path / "greet.py").read_bytes() == shape.intended["greet.py"]  # type: ignore[index]


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_mcp_server_reports_repairs_and_its_strict_option_turns_them_off(
        tmp_path: Path, anyio_backend: str) -> None:
    from mcp import Client

    from tests.warm_server import parameters

    shape = BY_NAME["begin_marker_decorated"]
    for strict in (False, True):
        root = tmp_path / ("strict" if strict else "host")
        root.mkdir()
        tree(root, shape.files)
        params = parameters(["--root", str(root), *(["--strict"] if strict else [])], cwd=str(tmp_path))
        async with Client(params) as client:
            result = await client.call_tool("apply_patch", {"patch": shape.patch})
        payload = result.structured_content
        assert isinstance(payload, dict)
        text = result.content[0].text  # type: ignore[union-attr]
        if strict:
            assert result.is_error and payload["error"]["kind"] == "parse_error"
            assert (root / "greet.py").read_bytes() == shape.files["greet.py"]
        else:
            assert not result.is_error, text
            assert [r["kind"] for r in payload["repairs"]] == ["decorated_marker"]
            assert "Repaired (decorated_marker" in text
            assert (root / "greet.py").read_bytes() == shape.intended["greet.py"]  # type: ignore[index]


def test_a_missing_anchor_is_named_not_the_hunks_lines(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a\nx\nb\n")
    patch = envelope("*** Update File: f.txt", "@@ def nowhere():", "-x", "+y")
    with pytest.raises(PatchtxError) as info:
        patchtx.apply_patch(patch, tmp_path)
    message = info.value.message
    assert 'No line of the file equals or resembles the @@ line "def nowhere():"' in message
    assert "leave it out ('@@' alone)" in message
    assert "resembles the hunk's lines" not in message  # (they stand in the file)
