"""Portable project archives (FILE.chief.zip): a whole project, every version, moved between machines.

Layout of an archive:

- `manifest.json`: format version, app version, created-at, and the sha256 and size of every other member.
- `project.json`: the project and every exported version (storyboard, panel, own personas, critiques, notes,
  proposals, render records, agent usage), plus the clip-cache rows its renders use, so an imported project
  renders with zero re-rendered shots (clip keys hold no project ids).
- `media/<sha[:2]>/<sha>.<ext>`: clips, last frames, films, subtitles, narration, contact sheets and OTIO cuts,
  each stored once, named by content exactly as in the media store.

Import is all or nothing: the whole archive (structure, manifest, sizes, hashes, project.json) is checked
before anything is written; then media go to the (content-addressed) store and the rows to the database in one
transaction. Nothing local leaks out: no API key (the config's key is never read here), no absolute path (OTIO
cuts hold store-relative URLs; a local model folder becomes its name), no home folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy import select

from app.studio import RENDER_MEDIA_EXT, StudioError
from storage.db import AgentCallRow, ClipRow, CritiqueRow, MediaRow, NoteRow, ProjectRow, ProposalRow, RenderRow, VersionRow
from storage.schema import Critique, Persona, Proposal, Storyboard, Usage, first_error, new_id, slug

FORMAT_VERSION = 1
MANIFEST, PROJECT = "manifest.json", "project.json"
# Limits against hostile archives (zip bombs); module constants so a deployment can change them.
MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 16 * 2**30
MAX_TOTAL_BYTES = 64 * 2**30
MAX_JSON_BYTES = 256 * 2**20
MAX_RATIO = 100  # uncompressed / compressed, for members bigger than RATIO_MIN_BYTES
RATIO_MIN_BYTES = 1 << 20
MEDIA_EXTS = ("mp4", "png", "jpg", "srt", "vtt", "wav", "otio")
_STORED = {"mp4", "png", "jpg"}  # already compressed
_MEDIA_NAME = re.compile(r"^media/([0-9a-f]{2})/([0-9a-f]{64})\.([a-z0-9]{1,8})$")
_ID = re.compile(r"\b(?:p|v|c|cb|n|pr|r)_[0-9a-f]{8}\b")
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # members carry no local time: same project, same bytes


class ArchiveError(StudioError):
    """An archive cannot be written or is refused on import; one line that says why."""


# ---------------------------------------------------------------------------------------- schema

class _M(BaseModel):
    model_config = ConfigDict(extra="forbid")


Sha = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class MediaEntry(_M):
    sha256: Sha
    ext: Literal["mp4", "png", "jpg", "srt", "vtt", "wav", "otio"]
    size: int = Field(ge=0)


class ClipEntry(_M):
    key: Sha
    sha256: Sha
    backend: str
    model: str = ""
    num_frames: int = Field(ge=1)
    fps: int = Field(ge=1)
    width: int = Field(ge=1)
    height: int = Field(ge=1)
    seconds: float = 0.0
    last_frame_sha256: Sha | None = None


class ShotRecord(BaseModel):
    model_config = ConfigDict(extra="allow")
    shot_id: str
    key: Sha
    sha256: Sha


class RenderEntry(_M):
    id: str
    created_at: datetime
    backend: str
    model: str = ""
    label: str = ""
    shots: list[ShotRecord]
    rendered: int = Field(ge=0)
    reused: int = Field(ge=0)
    seconds: float
    film_sha256: Sha
    media: dict[str, str] = Field(default_factory=dict)


class NoteEntry(_M):
    id: str
    shot_id: str | None = None
    text: str = Field(min_length=1)
    created_at: datetime


class CritiqueEntry(_M):
    id: str
    render: str
    persona_id: str
    batch: str
    mode: str
    created_at: datetime
    data: Critique
    usage: Usage = Field(default_factory=Usage)


class ProposalEntry(_M):
    id: str
    mode: str
    created_at: datetime
    data: Proposal
    usage: Usage = Field(default_factory=Usage)
    accepted_as: int | None = None


class UsageEntry(_M):
    role: str
    mode: str
    calls: int = Field(ge=0)
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    seconds: float = Field(ge=0)
    created_at: datetime


class VersionEntry(_M):
    id: str
    number: int = Field(ge=1)
    parent: int | None = None
    kind: str
    message: str = ""
    created_at: datetime
    storyboard: Storyboard
    panel: list[str]
    personas: list[Persona] = Field(default_factory=list)
    renders: list[RenderEntry] = Field(default_factory=list)
    notes: list[NoteEntry] = Field(default_factory=list)
    critiques: list[CritiqueEntry] = Field(default_factory=list)
    proposals: list[ProposalEntry] = Field(default_factory=list)
    usage: list[UsageEntry] = Field(default_factory=list)


class ProjectEntry(_M):
    id: str
    title: str = Field(min_length=1, max_length=200)
    idea: str = ""
    created_at: datetime
    current_version: int


class Reparented(_M):
    version: int
    original_parent: int
    parent: int | None = Field(description="the nearest exported ancestor, or None (a new root)")


class ProjectFile(_M):
    format_version: int
    project: ProjectEntry
    versions: list[VersionEntry] = Field(min_length=1)
    reparented: list[Reparented] = Field(default_factory=list)
    media_included: bool
    media: list[MediaEntry] = Field(default_factory=list)
    clips: list[ClipEntry] = Field(default_factory=list)


class MemberEntry(_M):
    sha256: Sha
    size: int = Field(ge=0)


class Manifest(_M):
    format: Literal["chief-archive"]
    format_version: int
    app_version: str
    created_at: str
    members: dict[str, MemberEntry]


# ---------------------------------------------------------------------------------------- export

def export_project(studio, pid: str, out: Path, *, versions: str = "all", include_media: bool = True) -> Path:
    """Write the project (the chosen versions) to `out` (a .chief.zip, or a folder to put one in); returns the path."""
    out = Path(out)
    with studio.db.reader() as s:
        proj = s.get(ProjectRow, pid)
        if proj is None:
            raise ArchiveError(f"no project {pid!r}")
        rows = list(s.scalars(select(VersionRow).where(VersionRow.project_id == pid).order_by(VersionRow.number)))
        chosen = _choose_versions(rows, versions)
        data, media = _project_data(studio, s, proj, rows, chosen, include_media)
    if out.is_dir():
        out = out / f"{slug(proj.title)}.chief.zip"
    scrub = _scrubber(studio)
    return _write_zip(studio, out, scrub(data), media)


def _choose_versions(rows: list[VersionRow], spec: str) -> set[str]:
    spec = (spec or "all").strip().lower()
    if spec == "all":
        return {r.id for r in rows}
    if spec == "latest":
        return {rows[-1].id}
    by_number = {r.number: r.id for r in rows}
    chosen = set()
    for part in (p.strip().lstrip("v") for p in spec.split(",") if p.strip()):
        if not part.isdigit():
            raise ArchiveError(f"--versions: {part!r} is not a version number (use all, latest or 1,3,...)")
        if int(part) not in by_number:
            raise ArchiveError(f"--versions: the project has no version {part} (it has 1..{rows[-1].number})")
        chosen.add(by_number[int(part)])
    if not chosen:
        raise ArchiveError("--versions: no version chosen")
    return chosen


def _project_data(studio, s, proj: ProjectRow, rows: list[VersionRow], chosen: set[str],
                  include_media: bool) -> tuple[dict, dict[str, tuple[str, Path]]]:
    """project.json as a dict, and the media it needs: sha -> (ext, local path)."""
    by_id = {r.id: r for r in rows}
    number = {r.id: r.number for r in rows}
    needed: dict[str, str] = {}  # sha -> ext
    clips: dict[str, ClipRow] = {}
    versions, reparented = [], []
    for r in rows:
        if r.id not in chosen:
            continue
        parent = r.parent_id
        while parent is not None and parent not in chosen:
            parent = by_id[parent].parent_id
        if parent != r.parent_id:
            reparented.append({"version": r.number, "original_parent": number[r.parent_id],
                               "parent": number[parent] if parent else None})

        def attached(model):
            return list(s.scalars(select(model).where(model.version_id == r.id).order_by(model.created_at, model.id)))
        renders = []
        for rr in attached(RenderRow):
            needed[rr.film_sha256] = "mp4"
            for kind, sha in rr.media.items():
                if kind in RENDER_MEDIA_EXT:
                    needed[sha] = RENDER_MEDIA_EXT[kind]
            for shot in rr.shots:
                needed[shot["sha256"]] = "mp4"
                clip = s.get(ClipRow, shot["key"])
                if clip is not None:
                    clips[clip.key] = clip
                    if clip.last_frame_sha256:
                        needed[clip.last_frame_sha256] = "png"
            renders.append({"id": rr.id, "created_at": _iso(rr.created_at), "backend": rr.backend, "model": rr.model,
                            "label": rr.label, "shots": rr.shots, "rendered": rr.rendered, "reused": rr.reused,
                            "seconds": rr.seconds, "film_sha256": rr.film_sha256, "media": rr.media})
        notes = [{"id": n.id, "shot_id": n.shot_id, "text": n.text, "created_at": _iso(n.created_at)}
                 for n in attached(NoteRow)]
        crits = [{"id": c.id, "render": c.render_id, "persona_id": c.persona_id, "batch": c.batch, "mode": c.mode,
                  "created_at": _iso(c.created_at), "data": c.data, "usage": c.usage or {}}
                 for c in sorted(attached(CritiqueRow), key=lambda c: (c.created_at, c.batch, c.persona_id))]
        props = [{"id": p.id, "mode": p.mode, "created_at": _iso(p.created_at), "data": p.data, "usage": p.usage or {},
                  "accepted_as": number[p.accepted_version_id] if p.accepted_version_id in chosen else None}
                 for p in attached(ProposalRow)]
        usage = [{"role": u.role, "mode": u.mode, "calls": u.calls, "prompt_tokens": u.prompt_tokens,
                  "completion_tokens": u.completion_tokens, "seconds": u.seconds, "created_at": _iso(u.created_at)}
                 for u in attached(AgentCallRow)]
        versions.append({"id": r.id, "number": r.number, "parent": number[parent] if parent else None, "kind": r.kind,
                         "message": r.message, "created_at": _iso(r.created_at), "storyboard": r.storyboard,
                         "panel": r.panel, "personas": r.personas, "renders": renders, "notes": notes,
                         "critiques": crits, "proposals": props, "usage": usage})
    current = number.get(proj.current_version_id)
    exported = [v["number"] for v in versions]
    media_rows = {m.sha256: m for m in s.scalars(select(MediaRow).where(MediaRow.sha256.in_(list(needed))))}
    media: dict[str, tuple[str, Path]] = {}
    entries = []
    for sha in sorted(needed):
        ext = media_rows[sha].ext if sha in media_rows else needed[sha]
        path = studio.media.path(sha, ext)
        if include_media and not path.is_file():
            raise ArchiveError(f"media file {sha[:12]}….{ext} is missing from the store; "
                               "render again or export with --no-media")
        size = path.stat().st_size if path.is_file() else (media_rows[sha].size if sha in media_rows else 0)
        entries.append({"sha256": sha, "ext": ext, "size": size})
        media[sha] = (ext, path)
    data = {
        "format_version": FORMAT_VERSION,
        "project": {"id": proj.id, "title": proj.title, "idea": proj.idea, "created_at": _iso(proj.created_at),
                    "current_version": current if current in exported else exported[-1]},
        "versions": versions,
        "reparented": reparented,
        "media_included": include_media,
        "media": entries,
        "clips": [{"key": c.key, "sha256": c.sha256, "backend": c.backend, "model": c.model, "num_frames": c.num_frames,
                   "fps": c.fps, "width": c.width, "height": c.height, "seconds": c.seconds,
                   "last_frame_sha256": c.last_frame_sha256} for c in sorted(clips.values(), key=lambda c: c.key)],
    }
    return data, media if include_media else {}


def _write_zip(studio, out: Path, data: dict, media: dict[str, tuple[str, Path]]) -> Path:
    """Media first, then project.json, then the manifest of every member. OTIO cuts need no rewrite: the
    Studio writes them with store-relative URLs (`../ab/<sha>.mp4`), valid in the archive and in any store."""
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".part")
    os.close(fd)
    members: dict[str, dict] = {}
    try:
        with zipfile.ZipFile(tmp, "w", allowZip64=True) as zf:
            for sha, (ext, path) in sorted(media.items()):
                name = f"media/{sha[:2]}/{sha}.{ext}"
                members[name] = _put_file(zf, name, path, ext not in _STORED)
            blob = json.dumps(data, indent=2, ensure_ascii=False).encode()
            members[PROJECT] = _put_bytes(zf, PROJECT, blob)
            manifest = {"format": "chief-archive", "format_version": FORMAT_VERSION, "app_version": app_version(),
                        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                        "members": dict(sorted(members.items()))}
            _put_bytes(zf, MANIFEST, json.dumps(manifest, indent=2).encode())
        os.replace(tmp, out)
    except OSError as e:
        raise ArchiveError(f"cannot write {out.name}: {e.strerror or e}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return out


def _zinfo(name: str, deflate: bool) -> zipfile.ZipInfo:
    zi = zipfile.ZipInfo(name, date_time=_FIXED_TIME)
    zi.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
    zi.external_attr = (stat.S_IFREG | 0o644) << 16
    zi.create_system = 3
    return zi


def _put_bytes(zf: zipfile.ZipFile, name: str, blob: bytes) -> dict:
    zf.writestr(_zinfo(name, True), blob)
    return {"sha256": hashlib.sha256(blob).hexdigest(), "size": len(blob)}


def _put_file(zf: zipfile.ZipFile, name: str, path: Path, deflate: bool) -> dict:
    h, size = hashlib.sha256(), 0
    with open(path, "rb") as src, zf.open(_zinfo(name, deflate), "w", force_zip64=path.stat().st_size > 2**31) as dst:
        for chunk in iter(lambda: src.read(1 << 20), b""):
            h.update(chunk)
            size += len(chunk)
            dst.write(chunk)
    return {"sha256": h.hexdigest(), "size": size}


def _scrubber(studio):
    """Replace local absolute paths in every string: the data folder, the home folder, a local model folder."""
    subs: list[tuple[str, str]] = []
    model = str(getattr(studio.config, "model", "") or "")
    if model and (os.path.isabs(model) or os.path.exists(model)):
        subs.append((str(Path(model).expanduser().resolve()), f"local-model:{Path(model).name}"))
        subs.append((model, f"local-model:{Path(model).name}"))
    for p, label in ((studio.config.home, "$CHIEF_HOME"), (Path.home(), "~")):
        for form in {str(Path(p).expanduser().absolute()), str(Path(p).expanduser().resolve())}:
            if len(form) > 1:  # only absolute forms: a relative name would match ordinary words
                subs.append((form, label))
    subs.sort(key=lambda kv: -len(kv[0]))

    def scrub(node):
        if isinstance(node, str):
            for a, b in subs:
                if a in node:
                    node = node.replace(a, b)
            return node
        if isinstance(node, dict):
            return {k: scrub(v) for k, v in node.items()}
        if isinstance(node, list):
            return [scrub(v) for v in node]
        return node
    return scrub


def app_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chief")
    except PackageNotFoundError:
        return "0+unknown"


def _iso(dt: datetime) -> str:
    return dt.isoformat()


# ---------------------------------------------------------------------------------------- import

def import_project(studio, path: Path, *, title: str | None = None):
    """A new project from an archive (new ids). Everything is checked before anything is written."""
    path = Path(path)
    scratch = studio.media.scratch()
    try:
        pf, extracted = _read_archive(path, scratch)
        if title is not None and not 1 <= len(title.strip()) <= 200:
            raise ArchiveError("--as: the new title must be 1 to 200 characters")
        for sha, (ext, tmp) in extracted.items():  # content-addressed: harmless if the DB write below fails
            studio.media.put_file(tmp, ext, move=True)
        pid = _write_rows(studio, pf, title.strip() if title else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return studio.version(pid)


def read_archive_info(path: Path) -> dict:
    """Check an archive fully without importing it; returns its manifest and a summary (for the UI)."""
    tmp = Path(tempfile.mkdtemp(prefix="chief-check-"))
    try:
        pf, _ = _read_archive(Path(path), tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"title": pf.project.title, "versions": [v.number for v in pf.versions], "media_included": pf.media_included}


def _read_archive(path: Path, scratch: Path) -> tuple[ProjectFile, dict[str, tuple[str, Path]]]:
    """Validate everything; media members are extracted to `scratch` (outside the store)."""
    if not path.is_file():
        raise ArchiveError(f"{path.name}: no such file")
    try:
        zf = zipfile.ZipFile(path)
    except zipfile.BadZipFile:
        raise ArchiveError(f"{path.name}: not a zip archive, or a truncated one") from None
    except OSError as e:
        raise ArchiveError(f"{path.name}: cannot read ({e.strerror or e})") from None
    with zf:
        try:
            return _check(zf, scratch)
        except zipfile.BadZipFile as e:
            raise ArchiveError(f"corrupt archive ({e})") from None
        except (EOFError, zipfile.LargeZipFile) as e:
            raise ArchiveError(f"truncated or corrupt archive ({type(e).__name__})") from None


def _check_names(infos: list[zipfile.ZipInfo]) -> None:
    if len(infos) > MAX_MEMBERS:
        raise ArchiveError(f"too many members ({len(infos)} > {MAX_MEMBERS})")
    seen: set[str] = set()
    total = 0
    for zi in infos:
        name = zi.filename
        parts = name.replace("\\", "/").split("/")
        if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
            raise ArchiveError(f"member {name!r} has an absolute path")
        if ".." in parts:
            raise ArchiveError(f"member {name!r} climbs out of the archive ('..')")
        if "\\" in name or "\x00" in name:
            raise ArchiveError(f"member {name!r} has a backslash or NUL in its name")
        if name in seen:
            raise ArchiveError(f"member {name!r} appears twice")
        seen.add(name)
        mode = zi.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ArchiveError(f"member {name!r} is a symlink")
        if zi.is_dir() or stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: type not recorded (a plain file)
            raise ArchiveError(f"member {name!r} is not a regular file")
        if zi.flag_bits & 0x1:
            raise ArchiveError(f"member {name!r} is encrypted")
        if zi.file_size > MAX_MEMBER_BYTES:
            raise ArchiveError(f"member {name!r} is too big ({zi.file_size} bytes > {MAX_MEMBER_BYTES})")
        if zi.file_size > RATIO_MIN_BYTES and zi.file_size > MAX_RATIO * max(zi.compress_size, 1):
            raise ArchiveError(f"member {name!r} expands {zi.file_size // max(zi.compress_size, 1)}x "
                               f"(limit {MAX_RATIO}x): refused as a zip bomb")
        total += zi.file_size
        if total > MAX_TOTAL_BYTES:
            raise ArchiveError(f"the archive expands beyond {MAX_TOTAL_BYTES} bytes: refused as a zip bomb")


def _read_json(zf: zipfile.ZipFile, name: str) -> tuple[Any, bytes]:
    zi = zf.getinfo(name)
    if zi.file_size > MAX_JSON_BYTES:
        raise ArchiveError(f"{name} is too big ({zi.file_size} bytes)")
    with zf.open(zi) as f:
        blob = f.read(MAX_JSON_BYTES + 1)
    try:
        return json.loads(blob), blob
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArchiveError(f"{name} is not valid JSON ({str(e).splitlines()[0]})") from None


def _first_error(where: str, e: ValidationError) -> ArchiveError:
    return ArchiveError(f"invalid {where}: {first_error(e)}")


def _check(zf: zipfile.ZipFile, scratch: Path) -> tuple[ProjectFile, dict[str, tuple[str, Path]]]:
    infos = zf.infolist()
    _check_names(infos)
    names = {zi.filename: zi for zi in infos}
    if MANIFEST not in names:
        raise ArchiveError("not a CHIEF archive: manifest.json is missing")
    raw, _ = _read_json(zf, MANIFEST)
    fv = raw.get("format_version") if isinstance(raw, dict) else None
    if isinstance(fv, int) and fv > FORMAT_VERSION:
        raise ArchiveError(f"archive format {fv} is from a newer CHIEF (this one reads up to {FORMAT_VERSION}): "
                           "upgrade to import it")
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as e:
        raise _first_error(MANIFEST, e) from None
    listed = manifest.members
    for name in names:
        if name != MANIFEST and name not in listed:
            raise ArchiveError(f"member {name!r} is not in the manifest")
    for name in listed:
        if name not in names:
            raise ArchiveError(f"member {name!r} is listed in the manifest but missing")
    if PROJECT not in listed:
        raise ArchiveError("not a CHIEF archive: project.json is missing")
    extracted: dict[str, tuple[str, Path]] = {}
    project_blob = b""
    for name, entry in listed.items():
        zi = names[name]
        m = _MEDIA_NAME.match(name)
        if name != PROJECT and not m:
            raise ArchiveError(f"unexpected member {name!r} (only project.json and media/ belong in an archive)")
        if zi.file_size != entry.size:
            raise ArchiveError(f"member {name!r}: size {zi.file_size} does not match the manifest ({entry.size})")
        if m and (m.group(1) != m.group(2)[:2] or m.group(2) != entry.sha256 or m.group(3) not in MEDIA_EXTS):
            raise ArchiveError(f"member {name!r} is not named by its content hash")
        h, size = hashlib.sha256(), 0
        dest = scratch / f"{len(extracted)}.part" if m else None
        out = open(dest, "wb") if dest else None
        chunks = []
        try:
            with zf.open(zi) as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    size += len(chunk)
                    if size > entry.size:
                        break
                    h.update(chunk)
                    (out.write(chunk) if out else chunks.append(chunk))
        finally:
            if out:
                out.close()
        if size != entry.size:
            raise ArchiveError(f"member {name!r}: size does not match the manifest")
        if h.hexdigest() != entry.sha256:
            raise ArchiveError(f"member {name!r}: checksum mismatch (damaged or altered)")
        if m:
            extracted[entry.sha256] = (m.group(3), dest)
        else:
            project_blob = b"".join(chunks)
    try:
        raw = json.loads(project_blob)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ArchiveError(f"project.json is not valid JSON ({str(e).splitlines()[0]})") from None
    if isinstance(raw, dict) and isinstance(raw.get("format_version"), int) and raw["format_version"] > FORMAT_VERSION:
        raise ArchiveError(f"project.json format {raw['format_version']} is from a newer CHIEF: upgrade to import it")
    try:
        pf = ProjectFile.model_validate(raw)
    except ValidationError as e:
        raise _first_error(PROJECT, e) from None
    _check_consistency(pf, extracted)
    return pf, extracted


def _check_consistency(pf: ProjectFile, extracted: dict[str, tuple[str, Path]]) -> None:
    """References inside project.json point at things that are there."""
    numbers = [v.number for v in pf.versions]
    if len(set(numbers)) != len(numbers):
        raise ArchiveError("invalid project.json: duplicate version numbers")
    known = set(numbers)
    for v in pf.versions:
        if v.parent is not None and (v.parent not in known or v.parent >= v.number):
            raise ArchiveError(f"invalid project.json: v{v.number} has parent v{v.parent}, which is not an earlier "
                               "exported version")
        renders = {r.id for r in v.renders}
        for c in v.critiques:
            if c.render not in renders:
                raise ArchiveError(f"invalid project.json: critique {c.id} refers to render {c.render}, not in v{v.number}")
        for p in v.proposals:
            if p.accepted_as is not None and p.accepted_as not in known:
                raise ArchiveError(f"invalid project.json: proposal {p.id} accepted as v{p.accepted_as}, not exported")
    if pf.project.current_version not in known:
        raise ArchiveError(f"invalid project.json: current version v{pf.project.current_version} is not exported")
    media = {m.sha256: m for m in pf.media}
    if len(media) != len(pf.media):
        raise ArchiveError("invalid project.json: a media file is listed twice")
    refs = [c.sha256 for c in pf.clips] + [c.last_frame_sha256 for c in pf.clips if c.last_frame_sha256]
    for v in pf.versions:
        for r in v.renders:
            refs += [r.film_sha256] + [s.sha256 for s in r.shots] + [sha for k, sha in r.media.items()
                                                                      if k in RENDER_MEDIA_EXT]
    for sha in refs:
        if sha not in media:
            raise ArchiveError(f"invalid project.json: media {sha[:12]}… is used but not listed")
    for sha, (ext, _) in extracted.items():
        if sha not in media or media[sha].ext != ext:
            raise ArchiveError(f"media/{sha[:2]}/{sha}.{ext} is not listed in project.json")
    if pf.media_included:
        for sha, m in media.items():
            if sha not in extracted:
                raise ArchiveError(f"media/{sha[:2]}/{sha}.{m.ext} is listed in project.json but not in the archive")
    elif extracted:
        raise ArchiveError("project.json says media are not included, yet the archive holds media files")


def _write_rows(studio, pf: ProjectFile, title: str | None) -> str:
    """Every row of the new project in one transaction, with new ids (references remapped)."""
    pid = new_id("p")
    ids: dict[str, str] = {pf.project.id: pid}
    vid = {v.number: new_id("v") for v in pf.versions}
    for v in pf.versions:
        ids[v.id] = vid[v.number]
        for r in v.renders:
            ids[r.id] = new_id("r")
        for n in v.notes:
            ids[n.id] = new_id("n")
        for c in v.critiques:
            ids[c.id] = new_id("c")
            ids.setdefault(c.batch, new_id("cb"))
        for p in v.proposals:
            ids[p.id] = new_id("pr")

    def remap(text: str) -> str:
        return _ID.sub(lambda m: ids.get(m.group(0), m.group(0)), text)

    with studio.db.session() as s:
        for m in pf.media:
            if s.get(MediaRow, m.sha256) is None:
                s.add(MediaRow(sha256=m.sha256, ext=m.ext, size=m.size))
        s.flush()
        for c in pf.clips:
            if s.get(ClipRow, c.key) is None:
                s.add(ClipRow(**c.model_dump()))
        s.add(ProjectRow(id=pid, title=title or pf.project.title, idea=pf.project.idea,
                         created_at=pf.project.created_at, current_version_id=vid[pf.project.current_version]))
        s.flush()
        for v in sorted(pf.versions, key=lambda v: v.number):  # parents first (foreign keys)
            s.add(VersionRow(id=vid[v.number], project_id=pid, parent_id=vid[v.parent] if v.parent else None,
                             number=v.number, kind=v.kind, message=remap(v.message), created_at=v.created_at,
                             storyboard=v.storyboard.model_dump(mode="json"), panel=v.panel,
                             personas=[p.model_dump(mode="json") for p in v.personas]))
            s.flush()
        for v in pf.versions:
            for r in v.renders:
                s.add(RenderRow(id=ids[r.id], version_id=vid[v.number], created_at=r.created_at, backend=r.backend,
                                model=r.model, label=r.label, shots=[x.model_dump() for x in r.shots],
                                rendered=r.rendered, reused=r.reused, seconds=r.seconds, film_sha256=r.film_sha256,
                                media=r.media))
            for n in v.notes:
                s.add(NoteRow(id=ids[n.id], version_id=vid[v.number], shot_id=n.shot_id, text=n.text,
                              created_at=n.created_at))
            for u in v.usage:
                s.add(AgentCallRow(version_id=vid[v.number], **u.model_dump()))
        s.flush()
        for v in pf.versions:
            for c in v.critiques:
                s.add(CritiqueRow(id=ids[c.id], version_id=vid[v.number], render_id=ids[c.render],
                                  persona_id=c.persona_id, batch=ids[c.batch], mode=c.mode, created_at=c.created_at,
                                  data=c.data.model_dump(mode="json"), usage=c.usage.model_dump()))
            for p in v.proposals:
                data = p.data.model_dump(mode="json")
                for e in data["edits"]:
                    e["sources"] = [ids.get(x, x) for x in e["sources"]]
                s.add(ProposalRow(id=ids[p.id], version_id=vid[v.number], created_at=p.created_at, mode=p.mode,
                                  data=data, usage=p.usage.model_dump(),
                                  accepted_version_id=vid[p.accepted_as] if p.accepted_as else None))
    return pid
