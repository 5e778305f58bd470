"""Provenance of the state patchtx leaves in a workspace: a keyed MAC with a per-user secret.

Everything inside a workspace, its ``.patchtx`` folder included, may have been written by someone
else: a cloned repository can commit a journal. A journal (and so an undo-history entry, which is
a kept journal) is acted on automatically only if it carries a valid HMAC-SHA256 made with this
user's secret, which lives outside every workspace:

    $PATCHTX_STATE_HOME/secret, else $XDG_STATE_HOME/patchtx/secret, else
    ~/.local/state/patchtx/secret

The folder is created 0700 and the secret 0600 with ``O_EXCL`` (32 random bytes, hex); a secret
that another user owns or others may read or write is refused, as is a folder others may write.
"""

from __future__ import annotations

import hmac
import os
import stat

from ..errors import FilesystemError

STATE_HOME_ENV = "PATCHTX_STATE_HOME"
SECRET_NAME = "secret"
_SECRET_BYTES = 32

_cache: dict[str, bytes] = {}


def state_home() -> str:
    """The per-user folder that holds the secret (never inside a workspace)."""
    explicit = os.environ.get(STATE_HOME_ENV)
    if explicit:
        return os.path.abspath(explicit)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = xdg if xdg and os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "patchtx")


def _secret_error(path: str, why: str) -> FilesystemError:
    return FilesystemError(
        f"Cannot use the per-user secret {path}: {why}.",
        hint=(
            "patchtx signs its journals with this secret so that it never acts on state written by"
            f" someone else. Fix the file or folder (owned by you, mode 0600 / 0700), or set"
            f" {STATE_HOME_ENV} to a private folder of yours."
        ),
        path=path,
    )


def user_secret() -> bytes:
    """This user's secret, created on first use (cached per process and per state folder)."""
    home = state_home()
    cached = _cache.get(home)
    if cached is not None:
        return cached
    path = os.path.join(home, SECRET_NAME)
    try:
        os.makedirs(home, mode=0o700, exist_ok=True)
        folder = os.stat(home, follow_symlinks=False)
    except OSError as exc:
        raise _secret_error(home, exc.strerror or str(exc)) from None
    if not stat.S_ISDIR(folder.st_mode):
        raise _secret_error(home, "it is not a folder")
    if folder.st_uid != os.geteuid():
        raise _secret_error(home, f"the folder belongs to user id {folder.st_uid}, not to you")
    if folder.st_mode & 0o022:
        raise _secret_error(home, f"others may write into the folder (mode {stat.S_IMODE(folder.st_mode):o})")
    secret = _read_secret(path)
    if secret is None:
        secret = _create_secret(path)
    _cache[home] = secret
    return secret


def _read_secret(path: str) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _secret_error(path, exc.strerror or str(exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise _secret_error(path, "it is not a regular file")
        if st.st_uid != os.geteuid():
            raise _secret_error(path, f"it belongs to user id {st.st_uid}, not to you")
        if st.st_mode & 0o077:
            raise _secret_error(path, f"others may read or write it (mode {stat.S_IMODE(st.st_mode):o})")
        text = os.read(fd, 4 * _SECRET_BYTES).strip()
    finally:
        os.close(fd)
    try:
        secret = bytes.fromhex(text.decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        secret = b""
    if len(secret) < 16:
        raise _secret_error(path, "it does not hold a secret written by patchtx")
    return secret


def _create_secret(path: str) -> bytes:
    secret = os.urandom(_SECRET_BYTES)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    except FileExistsError:
        found = _read_secret(path)  # another process created it first
        if found is None:
            raise _secret_error(path, "it vanished while being created") from None
        return found
    except OSError as exc:
        raise _secret_error(path, exc.strerror or str(exc)) from None
    try:
        os.write(fd, secret.hex().encode("ascii") + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return secret


def sign(text: bytes) -> str:
    """HMAC-SHA256 of ``text`` with this user's secret, in hex."""
    return hmac.new(user_secret(), text, "sha256").hexdigest()


def verify(text: bytes, mac: object) -> bool:
    """Whether ``mac`` is this user's signature of ``text`` (compared in constant time)."""
    return isinstance(mac, str) and mac.isascii() and hmac.compare_digest(sign(text), mac)
