"""Files written whole or not at all, and hashed by content.

Every writer names its temporary file with a leading dot beside the final name (`.NAME.<pid>-<thread>.part`) and
renames it over the final name when done, so a reader sees the old or the new file, never half of one; a writer
killed mid-write leaves only a hidden file that `storage.media.remove_stale_temp_files` and the archive export
clean up.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(dest: Path, suffix: str = "") -> Iterator[Path]:
    """A hidden temporary path beside `dest` to write to (ending in `suffix`, for tools that read the format from
    the name); renamed over `dest` when the block ends, removed when it raises."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}-{threading.get_ident()}.part{suffix}")
    try:
        yield tmp
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)


def atomic_write(dest: Path, blob: bytes) -> None:
    """Write `blob` to `dest` whole (flushed to disk before the rename) or not at all."""
    with atomic_path(dest) as tmp, open(tmp, "wb") as f:
        f.write(blob)
        f.flush()
        os.fsync(f.fileno())


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes, read in chunks (`hashlib.file_digest`)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
