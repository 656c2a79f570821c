"""Content-addressed media store: every file is named by its sha256 and stored once.

Files land under a temporary name in the store's folder and are renamed into place, so a
crash or a full disk never leaves a partial file under a content name.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path


class MediaError(OSError):
    """A file could not be stored (disk full, permissions): an OSError, so callers report it in one line."""


class MediaStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

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
        sha = _sha256_file(src)
        dest = self.path(sha, ext)
        if dest.exists():
            if move:
                src.unlink(missing_ok=True)
            return sha, dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".incoming-")
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

    def put_bytes(self, data: bytes, ext: str) -> tuple[str, Path]:
        sha = hashlib.sha256(data).hexdigest()
        dest = self.path(sha, ext)
        if dest.exists():
            return sha, dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, dest)
        except OSError as e:
            Path(tmp).unlink(missing_ok=True)
            raise MediaError(f"could not store media file ({e.strerror or e})") from e
        return sha, dest

    def scratch(self) -> Path:
        """A folder on the same filesystem for work in progress (renames into the store are atomic)."""
        d = self.root.parent / "scratch"
        d.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=d))

    def clean_scratch(self, older_than: float = 6 * 3600) -> int:
        """Remove work folders left by killed processes (untouched for `older_than` seconds)."""
        import time

        d = self.root.parent / "scratch"
        removed = 0
        for p in d.glob("tmp*") if d.exists() else ():
            try:
                if time.time() - p.stat().st_mtime > older_than:
                    shutil.rmtree(p, ignore_errors=True)
                    removed += 1
            except OSError:
                continue
        for p in self.root.glob("*/.incoming-*"):  # a copy into the store cut short by a kill
            try:
                if time.time() - p.stat().st_mtime > older_than:
                    p.unlink()
            except OSError:
                continue
        return removed


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()
