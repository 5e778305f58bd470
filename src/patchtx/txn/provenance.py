"""Provenance of the state patchtx leaves in a workspace: a keyed MAC with a per-user secret.

Everything inside a workspace, its ``.patchtx`` folder included, may have been written by someone
else: a cloned repository can commit a journal. A journal (and so an undo-history entry, which is
a kept journal) is acted on automatically only if it carries a valid HMAC-SHA256 made with this
user's secret, which lives outside every workspace:

    $PATCHTX_STATE_HOME/secret, else $XDG_STATE_HOME/patchtx/secret, else
    ~/.local/state/patchtx/secret

The MAC binds the workspace: it is made over the workspace's real path and the journal's body
together, so a journal or history entry copied into another workspace does not verify there.

The folder is created 0700 and the secret 0600, written whole to a temporary, made durable, then
linked into place (``link(2)`` never replaces: of two processes creating it at once, one secret
wins and both use it); so a crash or a full disk leaves no secret or a whole one, never an empty
one. A secret that another user owns or others may read or write is refused, as is a folder others
may write, and a secret that lies inside the workspace being edited (a patch could replace it).
"""

from __future__ import annotations

import errno
import hmac
import os
import stat

from ..errors import FilesystemError
from ..workspace.paths import within

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


def user_secret(workspace: str | None = None) -> bytes:
    """This user's secret, created on first use (cached per process and per state folder);
    refused if it lies inside ``workspace`` (a real path), which patches can write."""
    home = state_home()
    if workspace is not None:
        _check_outside(home, workspace)
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


_outside: set[tuple[str, str]] = set()


def check_outside(workspace: str) -> None:
    """Refuse (FilesystemError) a workspace, given by its real path, that holds the per-user
    secret: a patch could replace the secret, and with it every signature."""
    _check_outside(state_home(), workspace)


def _check_outside(home: str, workspace: str) -> None:
    """Refuse a state folder inside the workspace (checked once per pair and process)."""
    if (home, workspace) in _outside:
        return
    real = os.path.realpath(home)
    for folder in {home, real}:
        if within(workspace, folder):
            raise _secret_error(
                os.path.join(home, SECRET_NAME),
                f"it lies inside the workspace {workspace}, where a patch could replace it (and the"
                " signatures with it)")
    _outside.add((home, workspace))


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
        if st.st_size == 0:
            return None  # left by a version that wrote it in place and was interrupted: replaced
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
    """Write a new secret to a temporary, make it durable, link it into place (never replacing
    one another process made meanwhile: then that one is used), and make the link durable."""
    secret = os.urandom(_SECRET_BYTES)
    folder = os.path.dirname(path)
    temp = os.path.join(folder, f".{SECRET_NAME}-{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            data = secret.hex().encode("ascii") + b"\n"
            if os.write(fd, data) != len(data):
                raise OSError(errno.EIO, "short write")
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            if os.stat(path, follow_symlinks=False).st_size == 0:
                os.unlink(path)  # an empty one, from an interrupted older version
        except FileNotFoundError:
            pass
        try:
            os.link(temp, path, follow_symlinks=False)
        except FileExistsError:
            found = _read_secret(path)  # another process created it first
            if found is None:
                raise _secret_error(path, "it is empty") from None
            return found
        _fsync_folder(folder)
    except OSError as exc:
        raise _secret_error(path, exc.strerror or str(exc)) from None
    finally:
        try:
            os.unlink(temp)
        except OSError:
            pass
    return secret


def _fsync_folder(folder: str) -> None:
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


_DOMAIN = b"patchtx journal 2\0"
"""What a signature says it is, ahead of the workspace and the body: signatures made before the
workspace was bound (over the body alone) never verify as these."""


def _message(text: bytes, workspace: str) -> bytes:
    return _DOMAIN + os.fsencode(workspace) + b"\0" + text


def sign(text: bytes, workspace: str) -> str:
    """HMAC-SHA256, with this user's secret, of ``text`` as the state of the workspace whose real
    path is ``workspace``, in hex."""
    return hmac.new(user_secret(workspace), _message(text, workspace), "sha256").hexdigest()


def verify(text: bytes, mac: object, workspace: str) -> bool:
    """Whether ``mac`` is this user's signature of ``text`` in ``workspace`` (compared in
    constant time)."""
    return isinstance(mac, str) and mac.isascii() and hmac.compare_digest(sign(text, workspace), mac)
