"""Portable project archives (FILE.chief.zip): a whole project, every version, moved between machines.

Layout of an archive:

- `manifest.json`: format version, app version, created-at, and the sha256 and size of every other member.
- `project.json`: the domain records of storage.records as JSON (`ProjectFile`): the project, every exported
  version with what hangs off it (`VersionBundle`: renders, notes, critiques, proposals, agent usage, keyframe
  candidates, takes and take screenings), the clip-cache entries its renders and takes use (so an imported
  project re-renders nothing; they serve that project only, since nothing proves a clip's pixels match its
  key), the media it lists, and those it lists as `absent` (a store that never had them: the project came
  from an archive without media). Format 4 made a shot's dialogue a list of lines (and added sounds and a
  scene's music), format 5 a creator's uploaded music tracks (a scene's or the film's `music_track`, FLAC media),
  with scenes' music and effects levels, shots' descriptions, the captions and described-track film options,
  critiques' `sound` score and a version's draft flag (each with a default, so format 4 reads as it is); format 3 added the stills (reference images, keyframes) and takes; formats 2 and 3 are
  upgraded to lines (`_upgrade_lines`), format 1 (before the records) is upgraded to format 3 first.
- `media/<sha[:2]>/<sha>.<ext>`: clips, last frames, films, subtitles, narration, contact sheets, OTIO cuts,
  reference images and keyframes, uploaded music tracks, each stored once, named by content exactly as in the media store.

Import is all or nothing: the whole archive (structure, manifest, sizes, hashes, project.json) is checked
before anything is written (and the caller's `check`: the app's rules, and each media file checked as an upload is
by what it is, in app/services/archive_media.py); then media go to the (content-addressed) store and the records to the database in one
transaction (through the repository). Nothing local leaks out: no API key (no configuration is read here), no
absolute path (the caller names the local paths to redact; OTIO cuts hold store-relative URLs).
"""

from __future__ import annotations

import contextlib
import glob
import hashlib
import json
import re
import shutil
import stat
import time
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, StrictInt, ValidationError

from storage.fileio import atomic_path
from storage.media import STALE_SECONDS, MediaStore
from storage.parsing import ParseError, parse_json
from storage.records import (
    MEDIA_EXTS,
    RENDER_MEDIA_EXT,
    ClipRecord,
    MediaExt,
    MediaRecord,
    Project,
    Sha,
    VersionBundle,
)
from storage.repository import Repository
from storage.schema import MAX_PERSONA_BYTES, Strict, first_error, lines_from_script, new_id, slug

FORMAT_VERSION = 5
MANIFEST, PROJECT = "manifest.json", "project.json"
# Limits against hostile archives (zip bombs); module constants so a deployment can change them.
MAX_MEMBERS = 100_000
MAX_MEMBER_BYTES = 16 * 2**30
MAX_TOTAL_BYTES = 64 * 2**30
MAX_JSON_BYTES = 256 * 2**20
MAX_TEXT_CHARS = 20_000  # the longest text the app takes (an idea); storyboard and note fields have lower caps
MAX_RATIO = 100  # uncompressed / compressed, for members bigger than RATIO_MIN_BYTES
RATIO_MIN_BYTES = 1 << 20
_STORED = {"mp4", "png", "jpg", "wav"}  # already compressed; a WAV barely deflates, and a mostly silent stem would
# deflate past MAX_RATIO and be refused on import as a zip bomb
_MEDIA_NAME = re.compile(r"^media/([0-9a-f]{2})/([0-9a-f]{64})\.([a-z0-9]{1,11})$")
_ID = re.compile(r"\b[a-z]{1,4}_[0-9a-f]{8}\b")  # any new_id; replaced only when it is one of the archive's
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # members carry no local time: same project, same bytes


class ArchiveError(ValueError):
    """An archive cannot be written or is refused on import; one line that says why."""


# ---------------------------------------------------------------------------------------- format


class Reparented(Strict):
    version: int
    original_parent: int
    parent: int | None = Field(description="the nearest exported ancestor, or None (a new root)")


class ProjectFile(Strict):
    """project.json: the project's records, as the repository returns them."""

    format_version: StrictInt
    project: Project
    versions: list[VersionBundle] = Field(min_length=1)
    reparented: list[Reparented] = Field(default_factory=list)
    media_included: bool
    media: list[MediaRecord] = Field(default_factory=list)
    clips: list[ClipRecord] = Field(default_factory=list)
    absent: list[Sha] = Field(
        default_factory=list,
        description=(
            "media listed but not in an archive that includes media: the exporting store never had them (written only "
            "when not empty, so older readers still read the rest)"
        ),
    )


class MemberEntry(Strict):
    sha256: Sha
    size: int = Field(ge=0)


class Manifest(Strict):
    format: Literal["chief-archive"]
    format_version: StrictInt
    app_version: str
    created_at: str
    members: dict[str, MemberEntry]


@dataclass
class Archive:
    """A fully checked archive: its records, and its media extracted to a scratch folder (sha -> (ext, path))."""

    file: ProjectFile
    media: dict[str, tuple[str, Path]]


# ---------------------------------------------------------------------------------------- export


def export_project(
    repo: Repository,
    store: MediaStore,
    pid: str,
    out: Path,
    *,
    versions: str = "all",
    include_media: bool = True,
    redact: Sequence[tuple[str, str]] = (),
) -> Path:
    """Write the project (the chosen versions) to `out` (a .chief.zip, or a folder to put one in); returns the path.
    `redact` lists (local path, replacement) for every string in the records (the data folder, a model folder)."""
    out = Path(out)
    with repo.read() as u:
        project = u.project(pid)
        nodes = u.version_nodes(pid)
        chosen = _choose_versions([n.number for n in nodes], versions)
        bundles = [u.bundle(u.version(pid, n)) for n in chosen]
        parents = {n.number: n.parent for n in nodes}
        data, media = _project_file(u, store, project, bundles, parents, include_media)
    if out.is_dir():
        out = out / f"{slug(project.title)}.chief.zip"
    return _write_zip(out, _scrubber(redact)(data), media)


def _choose_versions(numbers: list[int], spec: str) -> list[int]:
    spec = (spec or "all").strip().lower()
    if spec == "all":
        return numbers
    if spec == "latest":
        return [numbers[-1]]
    chosen = set()
    for part in (p.strip().lstrip("v") for p in spec.split(",") if p.strip()):
        if not part.isdigit():
            raise ArchiveError(f"--versions: {part!r} is not a version number (use all, latest or 1,3,...)")
        if int(part) not in numbers:
            raise ArchiveError(f"--versions: the project has no version {part} (it has 1..{numbers[-1]})")
        chosen.add(int(part))
    if not chosen:
        raise ArchiveError("--versions: no version chosen")
    return sorted(chosen)


def _project_file(
    u,
    store: MediaStore,
    project: Project,
    bundles: list[VersionBundle],
    parents: dict[int, int | None],
    include_media: bool,
) -> tuple[dict, dict[str, tuple[str, Path]]]:
    """project.json as a dict, and the media it needs: sha -> (ext, local path)."""
    exported = {b.version.number for b in bundles}
    needed: dict[str, MediaExt] = {}  # sha -> ext
    clips: dict[str, ClipRecord] = {}
    reparented, out_bundles = [], []
    for b in bundles:
        v = b.version
        parent = v.parent_number
        while parent is not None and parent not in exported:
            parent = parents[parent]
        if v.parent_number is not None and parent != v.parent_number:
            reparented.append(Reparented(version=v.number, original_parent=v.parent_number, parent=parent))
        used = [(shot.key, shot.sha256) for r in b.renders for shot in r.shots] + [(t.key, t.sha256) for t in b.takes]
        for r in b.renders:
            needed[r.film_sha256] = "mp4"
            needed.update({sha: RENDER_MEDIA_EXT[kind] for kind, sha in r.media.items()})
        for key, sha in used:
            needed[sha] = "mp4"
            clip = u.clip(key, project.id)
            if clip is not None:
                clips[clip.key] = clip
                if clip.last_frame_sha256:
                    needed[clip.last_frame_sha256] = "png"
        needed.update({sha: "png" for sha in [*v.storyboard.images(), *(k.sha256 for k in b.keyframes)]})
        needed.update({sha: "flac" for sha in v.storyboard.tracks()})
        needed.update({sha: "safetensors" for sha in v.storyboard.lora_files()})
        proposals = [
            p.model_copy(update={"accepted_as": p.accepted_as if p.accepted_as in exported else None})
            for p in b.proposals
        ]
        out_bundles.append(
            b.model_copy(update={"version": v.model_copy(update={"parent_number": parent}), "proposals": proposals})
        )
    known = u.media(list(needed))
    entries: list[MediaRecord] = []
    media: dict[str, tuple[str, Path]] = {}
    for sha in sorted(needed):
        ext = known[sha].ext if sha in known else needed[sha]
        path = store.path(sha, ext)
        present = path.is_file()
        size = path.stat().st_size if present else (known[sha].size if sha in known else 0)
        entries.append(MediaRecord(sha256=sha, ext=ext, size=size))
        if include_media and present:
            media[sha] = (ext, path)
    # A file the store lacks (the project came from an archive without media) is listed as absent rather than
    # failing every later export; a clip-cache entry is only worth exporting with its files.
    absent = sorted(sha for sha in needed if sha not in media) if include_media else []
    usable = [c for c in clips.values() if c.sha256 in media and (c.last_frame_sha256 or c.sha256) in media]
    current = project.current_version if project.current_version in exported else max(exported)
    pf = ProjectFile(
        format_version=FORMAT_VERSION,
        project=project.model_copy(update={"current_version": current, "versions": len(exported)}),
        versions=out_bundles,
        reparented=reparented,
        media_included=include_media,
        media=entries,
        clips=sorted(usable, key=lambda c: c.key),
        absent=absent,
    )
    return pf.model_dump(mode="json", exclude={"absent"} if not absent else None), media


def _write_zip(out: Path, data: dict, media: dict[str, tuple[str, Path]]) -> Path:
    """Media first, then project.json, then the manifest of every member. OTIO cuts need no rewrite: the
    Studio writes them with store-relative URLs (`../ab/<sha>.mp4`), valid in the archive and in any store."""
    out.parent.mkdir(parents=True, exist_ok=True)
    for stale in out.parent.glob(f".{glob.escape(out.name)}.*.part"):  # an export of this name that was killed
        with contextlib.suppress(OSError):
            if time.time() - stale.stat().st_mtime > STALE_SECONDS:
                stale.unlink()
    members: dict[str, dict] = {}
    try:
        with atomic_path(out) as tmp, zipfile.ZipFile(tmp, "w", allowZip64=True) as zf:
            for sha, (ext, path) in sorted(media.items()):
                name = f"media/{sha[:2]}/{sha}.{ext}"
                members[name] = _put_file(zf, name, path, ext not in _STORED)
            blob = json.dumps(data, indent=2, ensure_ascii=False).encode()
            members[PROJECT] = _put_bytes(zf, PROJECT, blob)
            manifest = {
                "format": "chief-archive",
                "format_version": FORMAT_VERSION,
                "app_version": app_version(),
                "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "members": dict(sorted(members.items())),
            }
            _put_bytes(zf, MANIFEST, json.dumps(manifest, indent=2).encode())
    except OSError as e:
        raise ArchiveError(f"cannot write {out.name}: {e.strerror or e}") from None
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


def _scrubber(redact: Sequence[tuple[str, str]]):
    """Replace local absolute paths in every string (longest first; only absolute forms, since a relative
    name would match ordinary words)."""
    subs: list[tuple[str, str]] = []
    for path, label in redact:
        for form in {str(Path(path).expanduser().absolute()), str(Path(path).expanduser().resolve())}:
            if len(form) > 1:
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


# ---------------------------------------------------------------------------------------- import


def import_project(repo: Repository, store: MediaStore, path: Path, *, title: str | None = None, check=None) -> str:
    """A new project (new ids) from an archive; returns its id. Everything is checked before anything is
    written; `check(archive)` lets the caller add its own rules (it raises to refuse)."""
    if title is not None and not 1 <= len(title.strip()) <= 200:
        raise ArchiveError("--as: the new title must be 1 to 200 characters")
    scratch = store.scratch()
    try:
        archive = open_archive(Path(path), scratch)
        if check is not None:
            check(archive)
        for ext, tmp in archive.media.values():  # content-addressed: harmless if the database write fails
            store.put_file(tmp, ext, move=True)
        return _write(repo, archive.file, title.strip() if title else None)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def open_archive(path: Path, scratch: Path) -> Archive:
    """Validate everything; media members are extracted to `scratch` (outside the store)."""
    return Archive(*_read_archive(path, scratch))


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
            raise ArchiveError(
                f"member {name!r} expands {zi.file_size // max(zi.compress_size, 1)}x "
                f"(limit {MAX_RATIO}x): refused as a zip bomb"
            )
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
        return parse_json(blob, name, max_bytes=MAX_JSON_BYTES), blob
    except ParseError as e:
        raise ArchiveError(str(e)) from None


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
        raise ArchiveError(
            f"archive format {fv} is from a newer CHIEF (this one reads up to {FORMAT_VERSION}): upgrade to import it"
        )
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
        if m and dest is not None:
            extracted[entry.sha256] = (m.group(3), dest)
        else:
            project_blob = b"".join(chunks)
    try:
        raw = parse_json(project_blob, PROJECT)
    except ParseError as e:
        raise ArchiveError(str(e)) from None
    fv = raw.get("format_version") if isinstance(raw, dict) else None
    if type(fv) is not int or fv < 1:
        raise ArchiveError("invalid project.json: format_version must be a whole number")
    if fv > FORMAT_VERSION:
        raise ArchiveError(f"project.json format {fv} is from a newer CHIEF: upgrade to import it")
    try:
        if fv == 1:
            raw = _upgrade_v1(raw)
        if raw["format_version"] < 4:
            raw = _upgrade_lines(raw)
        pf = ProjectFile.model_validate(raw)
    except (KeyError, TypeError, AttributeError) as e:
        raise ArchiveError(f"invalid project.json (format {fv}): {type(e).__name__} {e}") from None
    except ValidationError as e:
        raise _first_error(PROJECT, e) from None
    _check_consistency(pf, extracted)
    _check_sizes(pf)
    return pf, extracted


def _check_sizes(pf: ProjectFile) -> None:
    """The app's size caps, field by field: a persona is at most MAX_PERSONA_BYTES (as a persona file or paste is),
    and no text anywhere in a version (a message, a critique, a proposal, a persona's field) is longer than the
    longest text the app takes (MAX_TEXT_CHARS). The schema's own field caps (notes, storyboards) hold already."""
    for b in pf.versions:
        v = b.version
        for p in v.personas:
            fields = {k: len(json.dumps(x, ensure_ascii=False).encode()) for k, x in p.model_dump(mode="json").items()}
            size = sum(fields.values())
            if size > MAX_PERSONA_BYTES:
                big = max(fields, key=fields.__getitem__)
                raise ArchiveError(
                    f"v{v.number}: persona {p.id!r} is {size:,} bytes, more than the {MAX_PERSONA_BYTES:,} a persona "
                    f"may be (its {big!r} holds {fields[big]:,})"
                )
        stack: list[tuple[str, Any]] = [("", b.model_dump(mode="json"))]
        while stack:
            path, node = stack.pop()
            if isinstance(node, str):
                if len(node) > MAX_TEXT_CHARS:
                    raise ArchiveError(
                        f"v{v.number}: {path.lstrip('.')} is {len(node):,} characters, more than the {MAX_TEXT_CHARS:,} "
                        "any text may be"
                    )
            elif isinstance(node, dict):
                stack += [(f"{path}.{k}", x) for k, x in node.items()]
            elif isinstance(node, list):
                stack += [(f"{path}.{i}", x) for i, x in enumerate(node)]


def _check_consistency(pf: ProjectFile, extracted: dict[str, tuple[str, Path]]) -> None:
    """References inside project.json point at things that are there."""
    numbers = [b.version.number for b in pf.versions]
    if len(set(numbers)) != len(numbers):
        raise ArchiveError("invalid project.json: duplicate version numbers")
    known = set(numbers)
    for b in pf.versions:
        v = b.version
        if v.parent_number is not None and (v.parent_number not in known or v.parent_number >= v.number):
            raise ArchiveError(
                f"invalid project.json: v{v.number} has parent v{v.parent_number}, which is not an "
                "earlier exported version"
            )
        renders = {r.id for r in b.renders}
        for c in b.critiques:
            if c.render_id not in renders and not (c.render_id is None and c.screening == "keyframes"):
                raise ArchiveError(
                    f"invalid project.json: critique {c.id} refers to render {c.render_id}, not in v{v.number}"
                )
        takes = {t.id for t in b.takes}
        for ts in b.take_screenings:
            named = {*ts.takes, *(t for vote in ts.votes for t in (vote.take_id, *vote.scores) if t is not None)}
            if not named <= takes:
                raise ArchiveError(f"invalid project.json: take screening {ts.id} refers to a take not in v{v.number}")
        for p in b.proposals:
            if p.accepted_as is not None and p.accepted_as not in known:
                raise ArchiveError(f"invalid project.json: proposal {p.id} accepted as v{p.accepted_as}, not exported")
    if pf.project.current_version not in known:
        raise ArchiveError(f"invalid project.json: current version v{pf.project.current_version} is not exported")
    media = {m.sha256: m for m in pf.media}
    if len(media) != len(pf.media):
        raise ArchiveError("invalid project.json: a media file is listed twice")
    refs = [c.sha256 for c in pf.clips] + [c.last_frame_sha256 for c in pf.clips if c.last_frame_sha256]
    for b in pf.versions:
        for r in b.renders:
            refs += [r.film_sha256, *[s.sha256 for s in r.shots], *r.media.values()]
        refs += [*b.version.storyboard.images(), *(k.sha256 for k in b.keyframes), *(t.sha256 for t in b.takes)]
        refs += b.version.storyboard.lora_files()
        refs += b.version.storyboard.tracks()
    for sha in refs:
        if sha not in media:
            raise ArchiveError(f"invalid project.json: media {sha[:12]}… is used but not listed")
    for sha, (ext, _) in extracted.items():
        if sha not in media or media[sha].ext != ext:
            raise ArchiveError(f"media/{sha[:2]}/{sha}.{ext} is not listed in project.json")
    absent = set(pf.absent)
    if absent - set(media):
        raise ArchiveError("invalid project.json: a media file is absent but not listed")
    if pf.media_included:
        for sha, m in media.items():
            if sha not in extracted and sha not in absent:
                raise ArchiveError(f"media/{sha[:2]}/{sha}.{m.ext} is listed in project.json but not in the archive")
            if sha in extracted and sha in absent:
                raise ArchiveError(f"media/{sha[:2]}/{sha}.{m.ext} is in the archive but listed as absent")
    elif extracted or absent:
        raise ArchiveError("project.json says media are not included, yet lists media files in or absent from it")


# The id prefix of each kind of record a version bundle holds (`new_id`): import gives every one a fresh id.
ID_PREFIXES = {
    "version": "v",
    "renders": "r",
    "notes": "n",
    "critiques": "c",
    "proposals": "pr",
    "keyframes": "kf",
    "takes": "tk",
    "take_screenings": "ts",
}
BATCH_PREFIX = "cb"  # a panel run: the critiques that share it


def fresh_ids(pf: ProjectFile) -> dict[str, str]:
    """Old id -> new id for the project and every record of every bundle (critique batches included)."""
    ids: dict[str, str] = {pf.project.id: new_id("p")}
    for b in pf.versions:
        for kind, prefix in ID_PREFIXES.items():
            held = getattr(b, kind)
            for record in held if isinstance(held, list) else [held]:
                ids[record.id] = new_id(prefix)
        for c in b.critiques:
            ids.setdefault(c.batch, new_id(BATCH_PREFIX))
    return ids


def _remapped(value: Any, ids: dict[str, str]) -> Any:
    """`value` (JSON) with every id of `ids` replaced, as a whole string, a dict key or a word in a text."""
    if isinstance(value, str):
        return ids[value] if value in ids else _ID.sub(lambda m: ids.get(m.group(0), m.group(0)), value)
    if isinstance(value, list):
        return [_remapped(v, ids) for v in value]
    if isinstance(value, dict):
        return {_remapped(k, ids): _remapped(v, ids) for k, v in value.items()}
    return value


def _write(repo: Repository, pf: ProjectFile, title: str | None) -> str:
    """Every record of the new project in one transaction, with new ids: every id anywhere in a bundle (a
    record's own, a reference to another, a word in a message) is remapped the same way."""
    ids = fresh_ids(pf)
    pid = ids[pf.project.id]
    bundles = [VersionBundle.model_validate(_remapped(b.model_dump(mode="json"), ids)) for b in pf.versions]
    project = pf.project.model_copy(update={"id": pid, "title": title or pf.project.title, "trashed_at": None})
    present = {m.sha256 for m in pf.media} - set(pf.absent) if pf.media_included else set()
    clips = [c for c in pf.clips if c.sha256 in present and (c.last_frame_sha256 or c.sha256) in present]
    with repo.write() as u:
        u.add_media(pf.media)
        u.add_clips(clips, pid)  # for this project's renders only: nothing proves the pixels match the keys
        return u.import_project(project, bundles)


# ---------------------------------------------------------------------------------------- format 1


def _upgrade_v1(raw: dict) -> dict:
    """A format-1 project.json (before the domain records) in the format-2 shape; validation follows."""

    def version(v: dict) -> dict:
        return {
            "id": v["id"],
            "project_id": raw["project"]["id"],
            "number": v["number"],
            "parent_number": v.get("parent"),
            "kind": v["kind"],
            "message": v.get("message", ""),
            "created_at": v["created_at"],
            "storyboard": v["storyboard"],
            "panel": v["panel"],
            "personas": v.get("personas", []),
        }

    def render(r: dict, number: int) -> dict:
        media = {k: sha for k, sha in (r.get("media") or {}).items() if k in RENDER_MEDIA_EXT}
        return {
            **{
                k: r[k]
                for k in (
                    "id",
                    "created_at",
                    "backend",
                    "model",
                    "label",
                    "rendered",
                    "reused",
                    "seconds",
                    "film_sha256",
                )
                if k in r
            },
            "version": number,
            "media": media,
            "stream_copied": (r.get("media") or {}).get("stream_copied") == "yes",
            "shots": [
                {k: s[k] for k in ("shot_id", "key", "sha256", "status", "duration", "num_frames", "fps") if k in s}
                for s in r.get("shots", [])
            ],
        }

    bundles = []
    for v in raw.get("versions", []):
        n = v["number"]
        bundles.append(
            {
                "version": version(v),
                "renders": [render(r, n) for r in v.get("renders", [])],
                "notes": v.get("notes", []),
                "critiques": [
                    {
                        "id": c["id"],
                        "version": n,
                        "render_id": c["render"],
                        "persona_id": c["persona_id"],
                        "batch": c["batch"],
                        "mode": c["mode"],
                        "created_at": c["created_at"],
                        "critique": c["data"],
                        "usage": c.get("usage") or {},
                    }
                    for c in v.get("critiques", [])
                ],
                "proposals": [
                    {
                        "id": p["id"],
                        "version": n,
                        "created_at": p["created_at"],
                        "mode": p["mode"],
                        "proposal": p["data"],
                        "usage": p.get("usage") or {},
                        "accepted_as": p.get("accepted_as"),
                    }
                    for p in v.get("proposals", [])
                ],
                "usage": v.get("usage", []),
            }
        )
    project = {**raw["project"], "versions": len(bundles)}
    return {**raw, "format_version": 3, "project": project, "versions": bundles}


# ---------------------------------------------------------------------------------------- formats 2 and 3


def _upgrade_lines(raw: dict) -> dict:
    """A format-2/3 project.json in the format-4 shape: every shot's dialogue text becomes lines
    (`storage.schema.lines_from_script`: "NAME: text" is NAME's, else the shot's single character's, else
    unattributed). Validation follows."""

    def shot(s):
        if isinstance(s, dict) and isinstance(s.get("dialogue"), str):
            names = [c for c in s.get("characters") or [] if isinstance(c, str)]
            return {**s, "dialogue": [ln.model_dump() for ln in lines_from_script(s["dialogue"], names)]}
        return s

    def board(b):
        if not isinstance(b, dict) or not isinstance(b.get("scenes"), list):
            return b
        scenes = [
            {**sc, "shots": [shot(x) for x in sc["shots"]]}
            if isinstance(sc, dict) and isinstance(sc.get("shots"), list)
            else sc
            for sc in b["scenes"]
        ]
        return {**b, "scenes": scenes}

    bundles = [
        {**bd, "version": {**bd["version"], "storyboard": board(bd["version"].get("storyboard"))}}
        if isinstance(bd, dict) and isinstance(bd.get("version"), dict)
        else bd
        for bd in raw.get("versions", [])
    ]
    return {**raw, "format_version": FORMAT_VERSION, "versions": bundles}
