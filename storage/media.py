"""Content-addressed media store: every file is named by its sha256 and stored once.

Files are written under a temporary name in the scratch folder beside the store (the same
filesystem) and renamed into place, so a crash or a full disk never leaves a partial file under a
content name, and never leaves anything inside the store.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from storage.fileio import file_sha256
from storage.records import MediaExt, MediaRecord

STALE_SECONDS = 6 * 3600  # what a killed process left behind is removed once it is this old


class MediaError(OSError):
    """A file could not be stored (disk full, permissions): an OSError, so callers report it in one line."""


class MediaStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)
        self.scratch_root = self.root.parent / "scratch"
        self._watchers: list[Callable[[str], None]] = []

    def on_store(self, watcher: Callable[[str], None]) -> None:
        """Call `watcher(sha256)` whenever a file is stored (or found already stored) by `put_file`, in the thread that
        stored it: the web server's file check learns which account made a file nothing names yet (a voice sample)."""
        self._watchers.append(watcher)

    def path(self, sha256: str, ext: str) -> Path:
        return self.root / sha256[:2] / f"{sha256}.{ext.lstrip('.')}"

    def find(self, sha256: str) -> Path | None:
        folder = self.root / sha256[:2]
        for p in folder.glob(f"{sha256}.*") if folder.exists() else ():
            return p
        return None

    def put_file(self, src: Path, ext: str | None = None, move: bool = False) -> tuple[str, Path]:
        """Store a file; returns (sha256, stored path). Reuses the stored copy when it exists."""
        src = Path(src)
        ext = (ext or src.suffix.lstrip(".") or "bin").lower()
        sha = file_sha256(src)
        dest = self.path(sha, ext)
        for watcher in self._watchers:
            watcher(sha)
        if dest.exists():
            if move:
                src.unlink(missing_ok=True)
            return sha, dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        self.scratch_root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.scratch_root, prefix=".incoming-")
        os.close(fd)
        try:
            if move:
                shutil.move(str(src), tmp)
            else:
                shutil.copyfile(src, tmp)
            os.replace(tmp, dest)
        except OSError as e:
            Path(tmp).unlink(missing_ok=True)
            raise MediaError(f"could not store media file ({e.strerror or e})") from e
        return sha, dest

    def put(self, src: Path, ext: MediaExt, move: bool = True) -> MediaRecord:
        """Store a file and describe it for the database."""
        sha, stored = self.put_file(src, ext, move=move)
        return MediaRecord(sha256=sha, ext=ext, size=stored.stat().st_size)

    def scratch(self) -> Path:
        """A folder on the same filesystem for work in progress (renames into the store are atomic)."""
        self.scratch_root.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=self.scratch_root))

    def collect(self, known: Callable[[], set[str]], older_than: float = STALE_SECONDS) -> int:
        """Remove stored files that no media row names (`known()` gives the rows' sha256s): what a killed or
        failed import or render stored before its transaction wrote nothing. Only files older than
        `older_than` go (a running import stores its files first), and the store is listed at most once per
        `older_than` (the time of the last listing is a marker file beside the store)."""
        marker = self.root.parent / ".media-collected"
        try:
            if marker.exists() and time.time() - marker.stat().st_mtime < older_than:
                return 0
            marker.touch()
        except OSError:
            return 0
        names, removed = known(), 0
        for folder in self.root.iterdir():
            for p in folder.iterdir() if folder.is_dir() else ():
                if p.name.split(".", 1)[0] in names:
                    continue
                try:
                    if time.time() - p.stat().st_mtime > older_than:
                        p.unlink()
                        removed += 1
                except OSError:
                    continue
        return removed

    def clean_scratch(self, older_than: float = STALE_SECONDS) -> int:
        """Remove work folders and half-copied files left by killed processes (untouched for `older_than`
        seconds). Only the scratch folder is listed, never the store."""
        removed = 0
        for p in self.scratch_root.iterdir() if self.scratch_root.exists() else ():
            try:
                if time.time() - p.stat().st_mtime <= older_than:
                    continue
                if p.is_dir():
                    shutil.rmtree(p, ignore_errors=True)
                else:
                    p.unlink()
                removed += 1
            except OSError:
                continue
        return removed


def remove_stale_temp_files(folder: Path, older_than: float = STALE_SECONDS) -> int:
    """Remove the hidden temporary files (`.name.part…`) that writers killed mid-write left in `folder` and
    below; every writer here names its temporary file with a leading dot and renames it when done."""
    removed = 0
    for p in Path(folder).rglob(".*") if Path(folder).is_dir() else ():
        try:
            if p.is_file() and time.time() - p.stat().st_mtime > older_than:
                p.unlink()
                removed += 1
        except OSError:
            continue
    return removed
