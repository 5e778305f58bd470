"""One minimal case per shape of model-written patch (issue 26's table), each its own file and
patch, naming the public thread the shape was seen in.

``intended`` is what the patch means: the tree afterwards (a path mapped to None is absent), or
None when the patch does not determine one edit, and must then be refused with nothing written.
``repairs`` are the repair kinds patchtx reports on the way (empty: the shape applies as it is).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

ROOT = "/WORKSPACE"
"""Stands for the workspace root's absolute path in a patch (replaced when the case is run)."""


@dataclass(frozen=True)
class Shape:
    name: str
    row: str
    """The row of the issue's table."""
    source: str
    """Where the shape was seen (owner/repo#number), or why the case exists."""
    files: dict[str, bytes]
    patch: str
    intended: dict[str, bytes | None] | None
    repairs: tuple[str, ...] = ()
    why: str = ""
    """For a shape that is refused: why its meaning is not determined."""
    options: dict[str, object] = field(default_factory=dict)
    xfail: str = ""
    """Why patchtx does not yet do what the case states (a strict xfail: it fails loudly once it does)."""


def envelope(*lines: str) -> str:
    return "\n".join(("*** Begin Patch", *lines, "*** End Patch")) + "\n"


GREET = b"def greet(name):\n    message = 'hi ' + name\n    return message\n"
GREETED = b"def greet(name):\n    message = 'hello ' + name\n    return message\n"
GREET_PATCH = envelope("*** Update File: greet.py", "@@ def greet(name):",
                       "-    message = 'hi ' + name", "+    message = 'hello ' + name",
                       "     return message")

TWIN = (b"<Target>RAM\n  <Optim>1</Optim>\n  <OneElfS>1</OneElfS>\n  <Strict>0</Strict>\n</Target>\n"
        b"\n<Target>FLASH\n  <Optim>1</Optim>\n  <OneElfS>0</OneElfS>\n  <Strict>0</Strict>\n</Target>\n")

SHAPES: list[Shape] = [
    Shape(
        "crlf_file_lf_patch", "CRLF file, patch with LF lines",
        "openai/codex#4003, anomalyco/opencode#45926",
        {"greet.py": GREET.replace(b"\n", b"\r\n")}, GREET_PATCH,
        {"greet.py": GREETED.replace(b"\n", b"\r\n")}),
    Shape(
        "crlf_patch_text", "CRLF file, patch with LF lines",
        "openai/codex#35789 (a patch saved on Windows: CRLF lines in the patch itself)",
        {"greet.py": GREET}, GREET_PATCH.replace("\n", "\r\n"), {"greet.py": GREETED}),
    Shape(
        "unified_inside_envelope", "a different patch format (unified diff inside the envelope)",
        "artokun/comfyui-mcp PR#2650, holon-run/holon#3041",
        {"greet.py": GREET},
        envelope("--- a/greet.py", "+++ b/greet.py", "@@ -1,3 +1,3 @@", " def greet(name):",
                 "-    message = 'hi ' + name", "+    message = 'hello ' + name",
                 "     return message"),
        {"greet.py": GREETED}, ("unified_in_envelope",)),
    Shape(
        "unified_headers_inside_update", "a different patch format (unified diff inside the envelope)",
        "holon-run/holon#3041 (file headers repeated under the Update line)",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "--- a/greet.py", "+++ b/greet.py",
                 "@@ -1,3 +1,3 @@", " def greet(name):",
                 "-    message = 'hi ' + name", "+    message = 'hello ' + name",
                 "     return message"),
        {"greet.py": GREETED}, ("unified_headers_in_update",)),
    Shape(
        "bare_unified_body_in_update", "a different patch format (a bare unified body)",
        "minorcell/memo-code#122 (an Update section written with '@@ -N,M +N,M @@' headers)",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@ -1,3 +1,3 @@", " def greet(name):",
                 "-    message = 'hi ' + name", "+    message = 'hello ' + name",
                 "     return message"),
        {"greet.py": GREETED}),
    Shape(
        "bare_unified_body_no_file", "a different patch format (a bare unified body)",
        "holon-run/holon#3041 (bare '@@' hunks with no file named)",
        {"greet.py": GREET, "other.py": GREET},
        "@@ -1,3 +1,3 @@\n def greet(name):\n-    message = 'hi ' + name\n"
        "+    message = 'hello ' + name\n     return message\n",
        None, why="No file is named: the hunk could be for any file holding those lines."),
    Shape(
        "begin_marker_decorated", "envelope markers decorated",
        "lidge-jun/opencodex#372 (grok: '*** Begin Patch ***' ... '*** End Patch ***', 47 calls)",
        {"greet.py": GREET},
        GREET_PATCH.replace("*** Begin Patch", "*** Begin Patch ***")
        .replace("*** End Patch", "*** End Patch ***"),
        {"greet.py": GREETED}, ("decorated_marker",)),
    Shape(
        "file_header_decorated", "envelope markers decorated",
        "lidge-jun/opencodex#372 and its adapters' tests ('*** Update File: a.py ***' from grok)",
        {"greet.py": GREET},
        GREET_PATCH.replace("*** Begin Patch", "*** Begin Patch ***").replace(
            "*** Update File: greet.py", "*** Update File: greet.py ***"),
        {"greet.py": GREETED}, ("decorated_marker",)),
    Shape(
        "add_header_decorated", "envelope markers decorated",
        "lidge-jun/opencodex#372 (grok decorates every marker line, file headers included): the "
        "patch parses as written, and Codex names the new file 'notes.md ***'",
        {"greet.py": GREET},
        envelope("*** Add File: notes.md ***", "+# Notes"),
        {"greet.py": GREET, "notes.md": b"# Notes\n"}, ("decorated_marker",)),
    Shape(
        "end_of_file_decorated", "envelope markers decorated",
        "grok's '*** End of File ***' (normalised by proxies' adapters, as its '*** End Patch ***')",
        {"greet.py": GREET},
        GREET_PATCH.replace("*** Begin Patch", "*** Begin Patch ***").replace(
            "     return message\n", "     return message\n*** End of File ***\n"),
        {"greet.py": GREETED}, ("decorated_marker",)),
    Shape(
        "end_marker_missing", "envelope markers missing (no '*** End Patch')",
        "openai/codex#35361 (gemma via vLLM), code-yeongyu/oh-my-openagent#3041",
        {"greet.py": GREET},
        GREET_PATCH.replace("*** End Patch\n", ""),
        None, why="A bare text without '*** End Patch' may have been cut off at a line boundary: "
                  "after its last context line, sections or whole files may have followed "
                  "(review of 03:50, finding 7)."),
    Shape(
        "end_marker_missing_in_fence", "envelope markers missing (no '*** End Patch')",
        "openai/codex#35361's shape inside a markdown fence (as chat replies send it): the "
        "fence's closing line shows that nothing was cut",
        {"greet.py": GREET},
        "```\n" + GREET_PATCH.replace("*** End Patch\n", "") + "```\n",
        {"greet.py": GREETED}, ("code_fence", "missing_end_marker")),
    Shape(
        "end_marker_missing_cut_after_context", "envelope markers missing (no '*** End Patch')",
        "a reply cut off right after a context line (review of 03:50, finding 7): the section's "
        "next change and the next file's update were lost",
        {"cfg.py": b'TIMEOUT = 30\nRETRIES = 3\nHOSTS = ["a"]\n', "main.py": b'print("v1")\n'},
        "*** Begin Patch\n*** Update File: cfg.py\n@@\n-TIMEOUT = 30\n+TIMEOUT = 60\n RETRIES = 3\n",
        None, why="Ending on a context line is no evidence that the patch is whole."),
    Shape(
        "end_marker_missing_cut_in_fence", "envelope markers missing (no '*** End Patch')",
        "issue 37, item 4: a patch cut inside its last added line ('+kee' for '+keep'), a code "
        "fence closed around it (as a client completes a cut reply)",
        {"k.txt": b"keep\n"},
        "```diff\n*** Begin Patch\n*** Update File: k.txt\n@@\n-keep\n+kee\n```\n",
        None, why="The closed fence shows nothing: the last line is an added line, which a cut "
                  "shortens into another whole line the file cannot check."),
    Shape(
        "begin_marker_missing", "envelope markers missing (no '*** Begin Patch')",
        "github/copilot-cli#1109 (a patch that starts at its '*** Update File:' line)",
        {"greet.py": GREET},
        GREET_PATCH.replace("*** Begin Patch\n", ""),
        {"greet.py": GREETED}, ("missing_begin_marker",)),
    Shape(
        "end_marker_missing_truncated", "envelope markers missing (no '*** End Patch')",
        "a reply cut off in the middle of its patch: the last section may have lost lines",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@ def greet(name):",
                 "-    message = 'hi ' + name", "+    message = 'hello ' + name")
        .replace("*** End Patch\n", ""),
        None, why="Without '*** End Patch' and without trailing context, a patch cut off after "
                  "its last '+' line cannot be told from a complete one."),
    Shape(
        "end_marker_after_escaped_newline", "envelope markers decorated",
        "farion1231/cc-switch#4554 (a patch whose last line was '+    print(...)\\n*** End Patch')",
        {"greet.py": GREET},
        GREET_PATCH.replace("\n*** End Patch\n", "\\n*** End Patch\n"),
        {"greet.py": GREETED}, ("decorated_marker",)),
    Shape(
        "absolute_path_inside_root", "absolute paths (inside the workspace)",
        "openai/codex#25958, letta-ai/letta-code#1566, anomalyco/opencode#10360",
        {"src/greet.py": GREET},
        GREET_PATCH.replace("greet.py", f"{ROOT}/src/greet.py"),
        {"src/greet.py": GREETED}),
    Shape(
        "absolute_paths_in_unified_diff", "absolute paths (inside the workspace)",
        "boozedog/pi-codemode#58 (the tool printed diffs as '--- a//home/...', and agents patched "
        "from them); openai/codex#25958 (absolute paths inside the workspace)",
        {"src/greet.py": GREET},
        f"--- a/{ROOT}/src/greet.py\n+++ b/{ROOT}/src/greet.py\n@@ -1,3 +1,3 @@\n def greet(name):\n"
        "-    message = 'hi ' + name\n+    message = 'hello ' + name\n     return message\n",
        {"src/greet.py": GREETED}, ("absolute_paths",)),
    Shape(
        "absolute_path_outside_root_unified", "absolute paths (inside the workspace)",
        "a unified diff naming a file outside the workspace by its absolute path",
        {"src/greet.py": GREET},
        "--- /tmp/elsewhere/src/greet.py\n+++ /tmp/elsewhere/src/greet.py\n@@ -1,3 +1,3 @@\n"
        " def greet(name):\n-    message = 'hi ' + name\n+    message = 'hello ' + name\n"
        "     return message\n",
        None, why="The file it names is outside the root: refused, naming the path."),
    Shape(
        "json_command_wrapper", "the patch wrapped in JSON ({\"command\": [\"apply_patch\", ...]})",
        "openai/codex#35361 (gemma via vLLM sent the shell tool's arguments)",
        {"greet.py": GREET},
        json.dumps({"command": ["apply_patch", GREET_PATCH]}),
        {"greet.py": GREETED}, ("json_wrapper",)),
    Shape(
        "json_input_wrapper", "the patch wrapped in JSON ({\"input\": ...})",
        "nearai/ironclaw#7922, anomalyco/opencode#20227",
        {"greet.py": GREET},
        json.dumps({"input": GREET_PATCH}),
        {"greet.py": GREETED}, ("json_wrapper",)),
    Shape(
        "json_string_wrapper", "the patch wrapped in JSON (a JSON string)",
        "openclaw/openclaw#109478 (arguments encoded once more as a JSON string)",
        {"greet.py": GREET},
        json.dumps(GREET_PATCH),
        {"greet.py": GREETED}, ("json_wrapper",)),
    Shape(
        "line_numbers_colon", "line numbers copied from a numbered file view (12: text)",
        "anomalyco/opencode#27282, FMXExpress/PasClaw PR#419 ('N: text' reads)",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@", " 1: def greet(name):",
                 "-2:     message = 'hi ' + name", "+2:     message = 'hello ' + name",
                 " 3:     return message"),
        {"greet.py": GREETED}, ("line_number_prefixes",)),
    Shape(
        "line_numbers_bar", "line numbers copied from a numbered file view (12 | text)",
        "cline/cline PR#14194 ('-1 | status=pending' / '+1 | status=verified')",
        {"status.cfg": b"mode=fast\nstatus=pending\nretries=3\n"},
        envelope("*** Update File: status.cfg", "@@", "-2 | status=pending",
                 "+2 | status=verified"),
        {"status.cfg": b"mode=fast\nstatus=verified\nretries=3\n"}, ("line_number_prefixes",)),
    Shape(
        "line_numbers_cat_n", "line numbers copied from a numbered file view (cat -n: '    12\\ttext')",
        "anomalyco/opencode#27282 (a read tool's 'cat -n' view)",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@", "      1\tdef greet(name):",
                 "-     2\t    message = 'hi ' + name", "+     2\t    message = 'hello ' + name",
                 "      3\t    return message"),
        {"greet.py": GREETED}, ("line_number_prefixes",)),
    Shape(
        "line_numbers_disagree", "line numbers copied from a numbered file view (12: text)",
        "numbers that do not agree with the file: the text after them may be meant literally",
        {"notes.txt": b"1: one\n2: two\n7: seven\n"},
        envelope("*** Update File: notes.txt", "@@", " 1: one", "-2: two", "+2: TWO"),
        {"notes.txt": b"1: one\n2: TWO\n7: seven\n"},
        why="The lines hold numbers of their own: the patch is read as written."),
    Shape(
        "context_without_space", "context lines without their leading space",
        "use-agent-os/agent-os#2296, openai/codex#4320",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@", "def greet(name):",
                 "-    message = 'hi ' + name", "+    message = 'hello ' + name",
                 "    return message"),
        {"greet.py": GREETED}, ("context_without_space",)),
    Shape(
        "context_without_space_not_in_file", "context lines without their leading space",
        "a prefix-less line that is not in the file there: an added line missing its '+'?",
        {"calc.py": b"x = 1\ny = 2\n"},
        envelope("*** Update File: calc.py", "@@", " x = 1", "z = 3", " y = 2"),
        None, why="The line stands nowhere in the file: it may be an added line that lost its '+'."),
    Shape(
        "added_line_without_plus_indented", "context lines without their leading space",
        "an added line that lost its '+' and starts with a space reads as a context line",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@", " def greet(name):",
                 "-    message = 'hi ' + name", "    message = 'hello ' + name",
                 "     return message"),
        None, why="The grammar reads it as a context line, which the file does not have there."),
    Shape(
        "stale_context", "stale context (the file changed since the model read it)",
        "holon-run/holon#2741, ymichael/open-codex#24, griffinwork40/agent-afk#2028",
        {"greet.py": b"def greet(name):\n    text = 'hi ' + name\n    return text\n"},
        GREET_PATCH, None,
        why="The lines the patch replaces are not in the file: only the model can say what the "
            "edit means now."),
    Shape(
        "pure_addition_under_anchor", "a pure addition anchored only by an @@ line",
        "openai/codex#30946",
        {"shop.py": b"class Cart:\n    def total(self):\n        return 0\n"},
        envelope("*** Update File: shop.py", "@@ class Cart:", "+    '''A cart.'''"),
        {"shop.py": b"class Cart:\n    '''A cart.'''\n    def total(self):\n        return 0\n"}),
    Shape(
        "trailing_whitespace_every_line", "trailing white space added to every line",
        "TokenRhythm/opensquilla PR#957, gptme/gptme#767",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@ def greet(name): ",
                 "-    message = 'hi ' + name ", "+    message = 'hello ' + name ",
                 "     return message "),
        {"greet.py": GREETED}, ("trailing_whitespace",)),
    Shape(
        "markdown_fence", "markdown fences around the patch",
        "openai/codex#593, Aider-AI/aider#830",
        {"greet.py": GREET}, "```diff\n" + GREET_PATCH + "```\n",
        {"greet.py": GREETED}, ("code_fence",)),
    Shape(
        "smart_quotes_in_context", "smart quotes",
        "openai/codex PR#674, earendil-works/pi#4198",
        {"say.py": b"def say():\n    print(\"it's here\")\n    return 1\n"},
        envelope("*** Update File: say.py", "@@", " def say():",
                 "     print(\u201cit\u2019s here\u201d)", "-    return 1", "+    return 2"),
        {"say.py": b"def say():\n    print(\"it's here\")\n    return 2\n"}),
    Shape(
        "wrong_indentation", "wrong indentation (the block's common indentation dropped)",
        "Aider-AI/aider#306, mcdonc/klangk#2958",
        {"shop.py": b"class Cart:\n    def total(self):\n        x = 0\n        return x\n"},
        envelope("*** Update File: shop.py", "@@", " def total(self):", "-    x = 0",
                 "+    x = 1", "     return x"),
        {"shop.py": b"class Cart:\n    def total(self):\n        x = 1\n        return x\n"},
        ("indentation",)),
    Shape(
        "wrong_indentation_addition_only", "wrong indentation (the block's common indentation dropped)",
        "context with the block's indentation dropped and lines added after it (issue 37, item 2)",
        {"shop.py": b"class Cart:\n    def total(self):\n        return 0\n"},
        envelope("*** Update File: shop.py", "@@", " return 0", "+", "+print(1)", "+return 1"),
        None, why="Two readings write different lines: the hunk shifted as a whole (the added lines "
                  "8 spaces deeper), or its context line having lost its prefix space (7 deeper)."),
    Shape(
        "hunk_applied_beside_new", "a hunk already applied beside a new one",
        "Aider-AI/aider#462, Aider-AI/aider#4098 (a patch resent after a partial apply)",
        {"app.py": b"import os\nimport sys\nimport json\n\n\ndef main():\n    return 0\n"},
        envelope("*** Update File: app.py", "@@", " import os", "+import sys", " import json",
                 "@@ def main():", "-    return 0", "+    return 1"),
        {"app.py": b"import os\nimport sys\nimport json\n\n\ndef main():\n    return 1\n"},
        ("applied_hunk_skipped",)),
    Shape(
        "hunk_applied_beside_new_blank_context", "a hunk already applied beside a new one",
        "Aider-AI/aider#462: the applied hunk's last context line is blank, which Codex's rule "
        "drops when the hunk does not match with it",
        {"app.py": b"import os\nimport sys\n\n\ndef main():\n    return 0\n"},
        envelope("*** Update File: app.py", "@@", " import os", "+import sys", " ", "@@ def main():",
                 "-    return 0", "+    return 1"),
        {"app.py": b"import os\nimport sys\n\n\ndef main():\n    return 1\n"},
        ("applied_hunk_skipped",)),
    Shape(
        "bom_in_file", "a BOM",
        "openai/codex#27784, anomalyco/opencode#45924",
        {"greet.py": b"\xef\xbb\xbf" + GREET}, GREET_PATCH,
        {"greet.py": b"\xef\xbb\xbf" + GREETED}),
    Shape(
        "bom_in_patch", "a BOM",
        "openai/codex#27784 (a patch file saved by a Windows editor, U+FEFF before its first line)",
        {"greet.py": GREET}, "\ufeff" + GREET_PATCH,
        {"greet.py": GREETED}, ("byte_order_mark",)),
    Shape(
        "one_file_several_updates", "one file in several '*** Update File' sections",
        "anomalyco/opencode#48474",
        {"greet.py": GREET},
        envelope("*** Update File: greet.py", "@@", "-    message = 'hi ' + name",
                 "+    message = 'hello ' + name", "*** Update File: greet.py", "@@",
                 "-    return message", "+    return message.upper()"),
        {"greet.py": GREETED.replace(b"return message", b"return message.upper()")}),
    Shape(
        "new_file_as_update", "a new file written as an update ('--- a/x' + '@@ -0,0')",
        "boozedog/pi-codemode#58",
        {"greet.py": GREET},
        "--- a/notes.md\n+++ b/notes.md\n@@ -0,0 +1,2 @@\n+# Notes\n+first\n",
        {"greet.py": GREET, "notes.md": b"# Notes\nfirst\n"},
        why="Read as git reads it (issue 25): '@@ -0,0' without 'new file mode' creates the file."),
    Shape(
        "unified_hunks_out_of_order", "unified hunks out of order",
        "vybestack/llxprt-code#3597",
        {"nums.txt": b"".join(b"%d\n" % i for i in range(1, 21))},
        "--- a/nums.txt\n+++ b/nums.txt\n"
        "@@ -15,3 +15,3 @@\n 14\n-15\n+fifteen\n 16\n"
        "@@ -2,3 +2,3 @@\n 1\n-2\n+two\n 3\n",
        {"nums.txt": b"".join(b"%d\n" % i for i in range(1, 21))
         .replace(b"\n2\n", b"\ntwo\n").replace(b"\n15\n", b"\nfifteen\n")},
        ("hunks_reordered",)),
    Shape(
        "codex_sections_out_of_order", "unified hunks out of order",
        "openai/codex (R: 27, chunks out of order fail); vybestack/llxprt-code#3597",
        {"nums.txt": b"".join(b"%d\n" % i for i in range(1, 21))},
        envelope("*** Update File: nums.txt", "@@", " 14", "-15", "+fifteen", " 16",
                 "@@", " 1", "-2", "+two", " 3"),
        {"nums.txt": b"".join(b"%d\n" % i for i in range(1, 21))
         .replace(b"\n2\n", b"\ntwo\n").replace(b"\n15\n", b"\nfifteen\n")},
        ("hunks_reordered",)),
    Shape(
        "doubled_prefixes", "doubled prefixes (+-)",
        "holon-run/holon#2439 ('-- text' / '+- text')",
        {"notes.md": b"# Plan\nkeep the primary\nthen rest\n"},
        envelope("*** Update File: notes.md", "@@", " # Plan", "--keep the primary",
                 "+-move off the primary", " then rest"),
        None, why="'+-move' may add '-move' (a list item) or 'move': the file cannot say which."),
    Shape(
        "powershell_newlines", "PowerShell's `n for newlines",
        "openai/codex#31776 (patch text passed through PowerShell quoting)",
        {"greet.py": GREET}, GREET_PATCH.rstrip("\n").replace("\n", "`n"),
        {"greet.py": GREETED}, ("powershell_newlines",)),
    # -- shapes of the real patches read for the corpus (benchmarks/model_patches.py) ---------
    Shape(
        "range_headers_as_anchors", "field: '@@ -314,7 +314,7 @@' headers in a Codex patch",
        "a Codex session transcript (Keil project, two targets' identical option blocks): Codex "
        "answered 'Failed to find context '-314,7 +314,7 @@''",
        {"proj.xml": TWIN},
        envelope("*** Update File: proj.xml", "@@ -2,5 +2,5 @@", "   <Optim>1</Optim>",
                 "-  <OneElfS>1</OneElfS>", "+  <OneElfS>0</OneElfS>", "   <Strict>0</Strict>",
                 "@@ -9,5 +9,5 @@", "   <Optim>1</Optim>", "-  <OneElfS>0</OneElfS>",
                 "+  <OneElfS>1</OneElfS>", "   <Strict>0</Strict>"),
        {"proj.xml": TWIN.replace(b"S>1<", b"S>x<").replace(b"S>0<", b"S>1<").replace(b"S>x<", b"S>0<")}),
    Shape(
        "first_match_twin_blocks", "field: a hunk whose lines stand in two places",
        "the same transcript: '-<OneElfS>0</OneElfS>' meant for the second target; Codex changed "
        "the first",
        {"proj.xml": TWIN.replace(b"S>1<", b"S>0<")},
        envelope("*** Update File: proj.xml", "@@", "-  <OneElfS>0</OneElfS>", "+  <OneElfS>1</OneElfS>"),
        None, why="Both blocks hold the line: only more context says which is meant."),
    Shape(
        "homoglyph_in_removed_line", "field: a look-alike letter copied into a removed line",
        "Nelpro250911/smartmoney-bot c01ad97 (a model's patch: 'sig.liquidity_us\u0434' for 'usd')",
        {"calc.py": b"def score(sig):\n    return calc(sig.roi,\n                sig.liquidity_usd)\n"},
        envelope("*** Update File: calc.py", "@@", " def score(sig):", "-    return calc(sig.roi,",
                 "-                sig.liquidity_us\u0434)", "+    return calc(sig.roi, sig.liquidity_usd)"),
        None, why="The removed line is not in the file (a Cyrillic letter for a Latin one): the "
                  "refusal names the code points."),
    Shape(
        "end_of_file_last_occurrence", "field: '*** End of File' on a repeated block",
        "anomalyco/opencode#43331 (an End of File hunk edited the first occurrence)",
        {"eof.txt": b"marker\nend\nmiddle\nmarker\nend\n"},
        envelope("*** Update File: eof.txt", "@@", "-marker", "-end", "+marker-changed", "+end",
                 "*** End of File"),
        {"eof.txt": b"marker\nend\nmiddle\nmarker-changed\nend\n"}),
    Shape(
        "triple_at_header_and_bare_line", "field: '@@@ ... @@@' and a line without a prefix",
        "use-agent-os/agent-os#2296 (the line without a prefix was dropped silently there)",
        {"foo.py": b"line1\n"},
        envelope("*** Update File: foo.py", "@@@ -1,1 +1,3 @@@", " line1", "+added_line",
                 "malformed_line_no_prefix"),
        None, why="'@@@ ...' is no marker of the format and the unprefixed line is not in the file."),
    Shape(
        "blank_context_line_without_space", "context lines without their leading space",
        "use-agent-os/agent-os PR#1851 (a blank context line written as an empty line: editors "
        "and models strip the trailing space)",
        {"calc.py": b"x = 1\n\ny = 2\n"},
        envelope("*** Update File: calc.py", "@@", " x = 1", "", "-y = 2", "+y = 3"),
        {"calc.py": b"x = 1\n\ny = 3\n"}),
    Shape(
        "anchor_scopes_identical_bodies", "field: identical hunk bodies told apart by the @@ line",
        "patchloom/patchloom#2506 ('@@ fn b()' over a body that fn a() has too)",
        {"f.rs": b"fn a() {\n    x\n}\nfn b() {\n    x\n}\n"},
        envelope("*** Update File: f.rs", "@@ fn b() {", "-    x", "+    y"),
        {"f.rs": b"fn a() {\n    x\n}\nfn b() {\n    y\n}\n"}),
    Shape(
        "anchor_only_insertion_in_scope", "a pure addition anchored only by an @@ line",
        "patchloom/patchloom#2506, NousResearch/hermes-agent PR#3081 (an insert-only hunk under "
        "'@@ fn b()')",
        {"f.rs": b"fn a() {\n    x\n}\nfn b() {\n    x\n}\n"},
        envelope("*** Update File: f.rs", "@@ fn b() {", "+    z"),
        {"f.rs": b"fn a() {\n    x\n}\nfn b() {\n    z\n    x\n}\n"}),
    Shape(
        "double_bare_section_marker", "field: two bare '@@' lines in a row",
        "github/copilot-cli#1109 (Codex 5.2 editing HTML: Unexpected line found in update hunk: '@@')",
        {"greet.py": GREET},
        GREET_PATCH.replace("@@ def greet(name):", "@@\n@@"),
        {"greet.py": GREETED}, ("empty_section",)),
]

BY_NAME = {shape.name: shape for shape in SHAPES}
assert len(BY_NAME) == len(SHAPES)

