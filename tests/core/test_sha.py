"""SHA-256 digests: the same as hashlib's at every size, with hashlib (OpenSSL) loaded only for
work large enough to repay its import."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from patchtx._sha import OPENSSL_FROM_BYTES, hexdigest, sha256_for

_SIZES = [0, 1, 55, 56, 63, 64, 65, 4096, OPENSSL_FROM_BYTES - 1, OPENSSL_FROM_BYTES, OPENSSL_FROM_BYTES + 1]


@pytest.mark.parametrize("size", _SIZES)
def test_hexdigest_is_hashlibs_at_every_size(size: int) -> None:
    data = os.urandom(size)
    assert hexdigest(data) == hashlib.sha256(data).hexdigest()


def test_openssl_from_the_threshold_on_or_once_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "_hashlib", raising=False)
    assert sha256_for(OPENSSL_FROM_BYTES - 1) is not hashlib.sha256
    assert sha256_for(OPENSSL_FROM_BYTES) is hashlib.sha256
    monkeypatch.setitem(sys.modules, "_hashlib", sys.modules["hashlib"])
    assert sha256_for(10) is hashlib.sha256


def _hashlib_loaded_after(code: str, cwd: Path | None = None) -> bool:
    """Whether running ``code`` in a new process loads hashlib (that the interpreter had not)."""
    program = f"import sys\nbefore = set(sys.modules)\n{code}\nprint('hashlib' in set(sys.modules) - before)\n"
    done = subprocess.run([sys.executable, "-c", program], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()[-1] == "True"


def test_small_work_does_not_load_hashlib_and_large_work_does() -> None:
    small = "from patchtx._sha import hexdigest\nhexdigest(bytes(100_000))"
    assert not _hashlib_loaded_after(small)
    assert _hashlib_loaded_after(f"from patchtx._sha import hexdigest\nhexdigest(bytes({OPENSSL_FROM_BYTES}))")


def test_a_commit_chooses_by_the_bytes_it_hashes_in_all(tmp_path: Path) -> None:
    # Many files each under the threshold, together over it: one commit's before and after images.
    count, size = 8, OPENSSL_FROM_BYTES // 8
    for i in range(count):
        (tmp_path / f"f{i}.txt").write_bytes(b"first\n" + b"x\n" * (size // 2))
    patch = "*** Begin Patch\n" + "".join(f"*** Update File: f{i}.txt\n@@\n-first\n+edited\n" for i in range(count))
    code = f"import patchtx\npatchtx.apply_patch({patch + '*** End Patch'!r}, '.')"
    assert _hashlib_loaded_after(code, cwd=tmp_path)
    assert (tmp_path / "f0.txt").read_bytes() == b"edited\n" + b"x\n" * (size // 2)


def test_a_python_without_a_builtin_sha256_uses_hashlibs() -> None:
    code = ("sys.modules['_sha2'] = sys.modules['_sha256'] = None\n"
            "from patchtx._sha import hexdigest, hmac_sha256_hex\n"
            "assert hexdigest(b'abc') == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'\n"
            "import hmac\nassert hmac_sha256_hex(b'k', b'm') == hmac.new(b'k', b'm', 'sha256').hexdigest()")
    assert _hashlib_loaded_after(code)


def test_an_undo_chooses_by_the_bytes_it_checks_in_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # It hashes what the transaction left (to refuse an undo over later edits) and every
    # before-image (to refuse a damaged one): many files under the threshold, together over it.
    import patchtx
    from patchtx import _sha, history

    count, size = 8, OPENSSL_FROM_BYTES // 8
    for i in range(count):
        (tmp_path / f"f{i}.txt").write_bytes(b"first\n" + b"x\n" * (size // 2))
    patch = "*** Begin Patch\n" + "".join(f"*** Update File: f{i}.txt\n@@\n-first\n+edited\n" for i in range(count))
    patchtx.apply_patch(patch + "*** End Patch", str(tmp_path), durable=False)
    before = [(tmp_path / f"f{i}.txt").read_bytes() for i in range(count)]
    asked: list[int] = []

    def recording(size: int):  # type: ignore[no-untyped-def]
        asked.append(size)
        return _sha.sha256_for(size)

    monkeypatch.setattr(history, "sha256_for", recording)
    history.undo(tmp_path, durable=False)
    checked = sum(map(len, before)) + count * (size + 6)
    assert asked == [checked] and checked >= OPENSSL_FROM_BYTES
    assert (tmp_path / "f0.txt").read_bytes().startswith(b"first\n")
