"""storage.fileio: a file is replaced whole or left as it was, and hashed by its bytes."""

from __future__ import annotations

import hashlib

import pytest

from storage.fileio import atomic_path, atomic_write, file_sha256


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    dest = tmp_path / "out" / "a.txt"
    atomic_write(dest, b"old")
    with pytest.raises(RuntimeError), atomic_path(dest) as tmp:
        tmp.write_bytes(b"half of the n")
        raise RuntimeError("killed")
    assert dest.read_bytes() == b"old" and sorted(p.name for p in dest.parent.iterdir()) == ["a.txt"]
    with atomic_path(dest, ".npy") as tmp:
        assert tmp.name.startswith(".a.txt.") and tmp.suffix == ".npy"  # hidden, with the extension a tool wants
        tmp.write_bytes(b"new")
    assert dest.read_bytes() == b"new" and sorted(p.name for p in dest.parent.iterdir()) == ["a.txt"]


def test_file_sha256_is_the_sha256_of_the_bytes(tmp_path):
    blob = bytes(range(256)) * 9000  # over one read chunk
    (tmp_path / "b").write_bytes(blob)
    assert file_sha256(tmp_path / "b") == hashlib.sha256(blob).hexdigest()
