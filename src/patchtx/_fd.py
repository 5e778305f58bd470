"""Reading a whole file from a descriptor: shared by the workspace (planning) and fsops (commit)."""

from __future__ import annotations

import os


def read_whole(fd: int, size: int) -> bytes:
    """The file's bytes to EOF, given fstat's ``size``.

    One read of the whole file: 1 MiB blocks cost a second copy of a 10 MB file. Exactly ``size``
    bytes in answer to a request for one byte more is EOF, so no read(2) that returns 0; any other
    length (the file grew or shrank, a size-0 /proc file, the kernel's 2 GiB cap on one read)
    reads on to EOF.
    """
    data = os.read(fd, max(size + 1, 1 << 16))
    if len(data) != size:
        chunks = [data]
        while block := os.read(fd, max(size + 1, 1 << 16)):
            chunks.append(block)
        data = b"".join(chunks)
    return data
