"""Hostile .chief.zip archives: valid-looking (every hash in the manifest is right) but wrong inside.

`craft()` rewrites a real archive's project.json or manifest.json and recomputes the manifest, so only the
rule under test can refuse it. `python -m tests.security.hostile_archives` writes the archives kept in
tests/security/data/ from a real export of a tiny rendered project (run it again if the format changes).
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).parent / "data"
BOARD = """\
title: Tiny Lighthouse
width: 96
height: 64
fps: 8
scenes:
  - scene_id: a
    shots:
      - {shot_id: s1, prompt: A lighthouse at dawn, duration: 1, seed: 1}
      - {shot_id: s2, prompt: A whale tail in grey water, duration: 1, seed: 2}
"""


def craft(
    src: Path,
    dst: Path,
    project: Callable[[dict], None] | None = None,
    manifest: Callable[[dict], None] | None = None,
    text: Callable[[str], str] | None = None,
) -> Path:
    """A copy of archive `src` with project.json (as data, then as `text`) and the manifest edited; hashes
    made right again."""
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["project.json"])
    if project:
        project(data)
    blob = json.dumps(data, indent=1)
    members["project.json"] = (text(blob) if text else blob).encode()
    man = json.loads(members["manifest.json"])
    man["members"] = {
        n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in members.items() if n != "manifest.json"
    }
    if manifest:
        manifest(man)
    members["manifest.json"] = json.dumps(man, indent=1).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, b in members.items():
            z.writestr(zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0)), b, compress_type=zipfile.ZIP_DEFLATED)
    return dst


def tiny_export(home: Path, out: Path, include_media: bool = True) -> Path:
    """A real archive of a rendered two-shot project with one note."""
    from app.config import load_config
    from app.studio import Studio
    from storage.files import load_storyboard

    board = home.parent / "tiny.yaml"
    board.write_text(BOARD)
    st = Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ={}))
    pid = st.create_from_storyboard(load_storyboard(board)).project_id
    st.render(pid)
    st.add_note(pid, "the whale should be bigger", "s2")
    path = st.export_project(pid, out, include_media=include_media)
    st.db.close()
    return path


HOSTILE = {
    # the panel names a persona nobody has: every critique of the project would fail
    "unknown_persona.chief.zip": lambda d: d["versions"][0]["version"].update(panel=["nobody_at_all"]),
    # longer than any note the app lets you write (4,000 characters)
    "long_note.chief.zip": lambda d: d["versions"][0]["notes"][0].update(text="x" * 5000),
    # a note about a shot the version does not have
    "note_on_missing_shot.chief.zip": lambda d: d["versions"][0]["notes"][0].update(shot_id="s99"),
    # the format version as a string
    "format_version_string.chief.zip": lambda d: d.update(format_version="99"),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        source = tiny_export(Path(tmp) / "home", Path(tmp) / "source.chief.zip")
        for name, edit in HOSTILE.items():
            craft(source, DATA / name, project=edit)
        craft(source, DATA / "manifest_version_string.chief.zip", manifest=lambda m: m.update(format_version="99"))
        # nested deeper than any record: the JSON parser would recurse until Python gives up
        craft(
            source,
            DATA / "deep_project.chief.zip",
            project=lambda d: d["project"].update(idea="DEEP"),
            text=lambda t: t.replace('"DEEP"', "[" * 5000 + "]" * 5000),
        )
    print(f"wrote {len(HOSTILE) + 2} archives to {DATA}", file=sys.stderr)


if __name__ == "__main__":
    main()
