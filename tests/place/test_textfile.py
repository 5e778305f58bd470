"""Text model: bytes ⇄ lines with per-line endings, BOM and final-newline state; refusals."""

from __future__ import annotations

import pytest

from patchtx.errors import BinaryFileError, EncodingPatchError, PatchtxError
from patchtx.place.textfile import TextFile, decode

BOM = b"\xef\xbb\xbf"

ROUND_TRIP = [
    b"",
    b"\n",
    b"\n\n\n",
    b"a",
    b"a\n",
    b"a\nb\nc\n",
    b"a\nb\nc",
    b"a\r\nb\r\n",
    b"a\r\nb",
    b"a\rb\rc\r",
    b"a\rb",
    b"\r",
    b"\r\r",
    b"\r\n",
    b"\r\n\r\n",
    b"\n\r",
    b"a\r\r\n",
    b"a\r\nb\rc\nd",
    b"one\r\ntwo\rthree\nfour\r\n",
    b"  indented\t\n\ttab\n trailing  \n",
    "naïve café ✅\n– — ‘’ “” \u00a0…\n".encode(),
    BOM,
    BOM + b"\n",
    BOM + b"a",
    BOM + b"a\r\nb\r\n",
    BOM + BOM + b"x\n",
    b"x" + BOM + b"\n",
    "form\x0cfeed\x0bvt\x1cfs\u2028ls\u0085nel\n".encode(),
]


@pytest.mark.parametrize("data", ROUND_TRIP, ids=lambda d: repr(d)[:40])
def test_round_trip_is_byte_exact(data: bytes) -> None:
    text = decode(data, "f.txt")
    assert text.encode() == data
    # Rebuilding from the parts gives the same bytes again (no hidden state).
    assert TextFile(list(text.texts), list(text.endings), text.bom).encode() == data


@pytest.mark.parametrize(
    ("data", "texts", "endings"),
    [
        (b"", [], []),
        (b"a", ["a"], [""]),
        (b"a\n", ["a"], ["\n"]),
        (b"\n", [""], ["\n"]),
        (b"\n\n", ["", ""], ["\n", "\n"]),
        (b"a\r\nb", ["a", "b"], ["\r\n", ""]),
        (b"a\rb\r", ["a", "b"], ["\r", "\r"]),
        (b"a\r\r\n", ["a", ""], ["\r", "\r\n"]),
        (b"\n\r", ["", ""], ["\n", "\r"]),
        (b"a\r\nb\rc\nd", ["a", "b", "c", "d"], ["\r\n", "\r", "\n", ""]),
        (b"x\x0cy\n", ["x\x0cy"], ["\n"]),
        ("x\u2028y\n".encode(), ["x\u2028y"], ["\n"]),
    ],
)
def test_lines_and_their_endings(data: bytes, texts: list[str], endings: list[str]) -> None:
    text = decode(data, "f.txt")
    assert text.texts == texts
    assert text.endings == endings
    assert text.bom is False


class TestBom:
    def test_bom_is_kept_apart_from_the_first_line(self) -> None:
        text = decode(BOM + b"first\r\nsecond\r\n", "f.txt")
        assert text.bom is True
        assert text.texts == ["first", "second"]
        assert text.encode() == BOM + b"first\r\nsecond\r\n"

    def test_only_one_bom_is_taken(self) -> None:
        text = decode(BOM + BOM + b"x", "f.txt")
        assert text.bom is True
        assert text.texts == ["\ufeffx"]

    def test_bom_only_file(self) -> None:
        text = decode(BOM, "f.txt")
        assert (text.bom, text.texts, text.endings) == (True, [], [])

    def test_bom_in_the_middle_is_text(self) -> None:
        text = decode(b"a\n" + BOM + b"b\n", "f.txt")
        assert text.bom is False
        assert text.texts == ["a", "\ufeffb"]


class TestFinalNewline:
    @pytest.mark.parametrize(
        ("data", "expected"),
        [(b"", True), (b"a", False), (b"a\n", True), (b"a\r", True), (b"a\r\n", True),
         (b"a\nb", False), (BOM, True), (BOM + b"x", False), (b"\n", True)],
    )
    def test_ends_with_newline(self, data: bytes, expected: bool) -> None:
        assert decode(data, "f.txt").ends_with_newline is expected


class TestDominantEnding:
    @pytest.mark.parametrize(
        ("data", "expected"),
        [
            (b"", "\n"),
            (b"no ending", "\n"),
            (b"a\nb\n", "\n"),
            (b"a\r\nb\r\n", "\r\n"),
            (b"a\rb\r", "\r"),
            (b"a\r\nb\r\nc\n", "\r\n"),  # majority, not the first seen
            (b"a\nb\r\nc\r\n", "\r\n"),
            (b"a\rb\nc\n", "\n"),
            (b"a\r\nb\n", "\r\n"),  # tie: the first seen
            (b"a\nb\r\n", "\n"),
            (b"a\nb\r\nc", "\n"),  # an unterminated last line does not count
            (b"one\r\ntwo\rthree\nfour\r\n", "\r\n"),
        ],
    )
    def test_dominant_ending(self, data: bytes, expected: str) -> None:
        assert decode(data, "f.txt").dominant_ending == expected


class TestRefusals:
    @pytest.mark.parametrize(
        "data",
        [b"\x00", b"abc\x00def\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"a" * 8191 + b"\x00",
         "text\n".encode("utf-16")],
        ids=["nul", "nul-inside", "png", "nul-at-8191", "utf-16"],
    )
    def test_binary_is_refused(self, data: bytes) -> None:
        with pytest.raises(BinaryFileError) as info:
            decode(data, "/w/bin.dat")
        exc = info.value
        assert exc.kind == "binary_file"
        assert exc.path == "/w/bin.dat"
        assert "/w/bin.dat" in exc.headline
        assert "binary" in exc.headline
        assert "Nothing was changed." in exc.message

    @pytest.mark.parametrize(
        ("data", "length", "index", "line"),
        [
            (b"caf\xe9\n", 1, 3, 1),  # Latin-1 é
            (b"a\xe9b\n", 1, 1, 1),  # [R: 34]
            (b"ok\nna\xefve\n", 1, 5, 2),  # Latin-1 ï on line 2
            (b"one\ntwo\n\xff\n", 1, 8, 3),
            (b"\xe2\x82x\n", 2, 0, 1),  # a three-byte sequence cut short by an ASCII byte
            (b"\xed\xa0\x80\n", 1, 0, 1),  # an encoded surrogate
            (b"\xc0\xaf\n", 1, 0, 1),  # an overlong encoding
        ],
    )
    def test_non_utf8_is_refused_with_codex_text(self, data: bytes, length: int, index: int,
                                                 line: int) -> None:
        with pytest.raises(EncodingPatchError) as info:
            decode(data, "/w/latin1.txt")
        exc = info.value
        assert exc.kind == "not_utf8"
        assert exc.headline == (f"Failed to read file to update /w/latin1.txt: invalid utf-8 sequence "
                                f"of {length} bytes from index {index}")
        assert exc.details["byte_offset"] == index
        assert exc.details["file_line"] == line
        assert f"line {line}" in exc.hint
        assert "UTF-8" in exc.hint
        assert "Nothing was changed." in exc.message
        assert exc.to_json()["kind"] == "not_utf8"

    def test_truncated_sequence_at_end_uses_codex_text(self) -> None:
        with pytest.raises(EncodingPatchError) as info:
            decode(b"abc\xe2\x82", "/w/cut.txt")
        assert info.value.headline == ("Failed to read file to update /w/cut.txt: "
                                       "incomplete utf-8 byte sequence from index 3")

    def test_binary_check_comes_before_the_encoding_check(self) -> None:
        with pytest.raises(BinaryFileError):
            decode(b"\xff\x00", "x")

    def test_refusals_are_patchtx_errors(self) -> None:
        for data in (b"\x00", b"\xff"):
            with pytest.raises(PatchtxError):
                decode(data, "x")
