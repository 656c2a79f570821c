"""Archives are checked with the rules of the live app, and what they bring is trusted no further than the
project they bring: a crafted clip-cache entry cannot stand in for another project's shot."""

from __future__ import annotations

import hashlib
import json
import random
import zipfile
from pathlib import Path

import pytest

from tests.security.conftest import DATA, chief, one_line_error
from tests.security.hostile_archives import craft


@pytest.mark.parametrize(
    "name, says",
    [
        ("unknown_persona.chief.zip", "v1: unknown persona(s) ['nobody_at_all']"),
        ("long_note.chief.zip", "versions.0.notes.0.text: String should have at most 4000 characters"),
        ("note_on_missing_shot.chief.zip", "v1: a note is about shot 's99', which the version does not have"),
        ("format_version_string.chief.zip", "project.json: format_version must be a whole number"),
        ("manifest_version_string.chief.zip", "manifest.json: format_version: Input should be a valid integer"),
        ("deep_project.chief.zip", "project.json: nested more than 64 levels deep"),
    ],
)
def test_hostile_archives_are_refused_in_one_line_and_write_nothing(tmp_path, name, says):
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "import", str(DATA / name)))
    assert says in line, line
    assert chief(home, "projects", "--json").stdout.strip() == "[]"
    assert not [p for p in (home / "media").rglob("*") if p.is_file()]


def test_an_archive_over_the_caps_is_refused(tmp_path):
    line = one_line_error(
        chief(tmp_path / "home", "import", str(DATA / "unknown_persona.chief.zip"), env={"CHIEF_MAX_SHOTS": "1"})
    )
    assert "v1: 2 shots is over the limit CHIEF_MAX_SHOTS=1" in line, line


def test_an_imported_clip_cache_entry_serves_only_its_own_project(make_studio, board_file, tmp_path):
    """An attacker exports a rendered project of their own, then rewrites its clip-cache entries to the keys
    of shots a victim will render (keys are predictable: they hash the shot's text, seed and settings).
    Importing it must not make the victim's new project "reuse" the attacker's clips."""
    from storage.files import load_storyboard

    board = load_storyboard(board_file)
    lab = make_studio(home=tmp_path / "lab")  # where the attacker computes the victim's keys
    victim_keys = {s.shot_id: s.key for s in lab.render(lab.create_from_storyboard(board).project_id).shots}
    other = board.model_copy(deep=True)
    for shot in other.shots():
        shot.prompt = "ATTACKER " + shot.prompt
    apid = lab.create_from_storyboard(other).project_id
    lab.render(apid)
    attacker_clips = {s.shot_id: s.sha256 for s in lab.render_info(apid).shots}
    source = lab.export_project(apid, tmp_path / "attacker.chief.zip")

    def swap(data):
        for clip in data["clips"]:
            shot = next(s for s, sha in attacker_clips.items() if sha == clip["sha256"])
            clip["key"] = victim_keys[shot]

    crafted = craft(source, tmp_path / "crafted.chief.zip", project=swap)

    victim = make_studio(home=tmp_path / "victim")
    victim.import_project(crafted)
    pid = victim.create_from_storyboard(board).project_id
    render = victim.render(pid)
    assert [s.status for s in render.shots] == ["rendered", "rendered"]
    assert not {s.sha256 for s in render.shots} & set(attacker_clips.values())
    # an honest archive's project still reuses the clips it brought: it re-renders nothing
    honest = victim.import_project(source).project_id
    assert [s.status for s in victim.render(honest).shots] == ["reused", "reused"]


def test_a_no_media_archive_does_not_break_later_full_exports(make_studio, board_file, tmp_path):
    """Imported without media, then edited and rendered again: a full export still works (the files the
    store never had are listed as absent), and that archive imports and renders again."""
    from storage.files import load_storyboard

    src = make_studio(home=tmp_path / "a")
    pid = src.create_from_storyboard(load_storyboard(board_file)).project_id
    src.render(pid)
    light = src.export_project(pid, tmp_path / "light.chief.zip", include_media=False)

    st = make_studio(home=tmp_path / "b")
    v1 = st.import_project(light)
    board = v1.storyboard.model_copy(deep=True)
    board.scenes[0].shots[1].prompt = "A whale tail in silver water"
    v2, _ = st.save_storyboard(v1.project_id, board, 1)
    render = st.render(v1.project_id, v2.number)
    assert [s.status for s in render.shots] == ["rendered", "rendered"]  # no imported entry without its file
    full = st.export_project(v1.project_id, tmp_path / "full.chief.zip")
    with zipfile.ZipFile(full) as zf:
        data = json.loads(zf.read("project.json"))
    old_film = st.render_info(v1.project_id, 1).film_sha256
    assert data["media_included"] and old_film in data["absent"]
    assert render.film_sha256 not in data["absent"]

    again = make_studio(home=tmp_path / "c")
    pid3 = again.import_project(full).project_id
    assert again.render(pid3, 2).rendered == 0  # v2's clips came with the archive
    assert again.render(pid3, 1).shots  # v1's did not: rendered afresh


def test_an_archive_that_lies_about_absent_media_is_refused(make_studio, board_file, tmp_path):
    from storage.files import load_storyboard

    st = make_studio(home=tmp_path / "a")
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    st.render(pid)
    src = st.export_project(pid, tmp_path / "p.chief.zip")
    film = st.render_info(pid).film_sha256
    bad = craft(src, tmp_path / "bad.chief.zip", project=lambda d: d.update(absent=[film]))
    line = one_line_error(chief(tmp_path / "other", "import", str(bad)))
    assert "is in the archive but listed as absent" in line, line


def _persona(**fields) -> dict:
    from storage.schema import Persona

    return Persona(**{"id": "big", "name": "Big", "who": "a viewer", "source": "custom", **fields}).model_dump(
        mode="json"
    )


def _with_persona(persona: dict):
    def edit(d: dict) -> None:
        d["versions"][0]["version"]["personas"] = [persona]
        d["versions"][0]["version"]["panel"] = ["big"]

    return edit


@pytest.mark.parametrize(
    "edit, says",
    [
        # one field of 6 MB: the persona cap (a persona file or paste may be 256 KB), naming the field
        (
            _with_persona(_persona(who=random.randbytes(3_000_000).hex())),
            "v1: persona 'big' is 6,00",
        ),  # noise: no zip bomb
        # every field small, the persona too big: 40 evidence lists of 100 comments of 100 characters
        (
            _with_persona(_persona(evidence={f"trait{i}": ["y" * 100] * 100 for i in range(40)})),
            "more than the 262,144 a persona may be (its 'evidence' holds",
        ),
        # any text longer than the app takes anywhere: a version message of 30,000 characters
        (
            lambda d: d["versions"][0]["version"].update(message="m" * 30_000, panel=["film_critic"]),
            "v1: version.message is 30,000 characters",
        ),
    ],
    ids=["6 MB field", "many small fields", "long message"],
)
def test_archives_are_held_to_the_apps_size_caps_field_by_field(tmp_path, edit, says):
    """A 6 MB persona was imported (critique then failed at 1.5M tokens; Screening showed 6 MB of text)."""
    bad = craft(DATA / "unknown_persona.chief.zip", tmp_path / "bad.chief.zip", project=edit)
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "import", str(bad)))
    assert says in line, line
    assert chief(home, "projects", "--json").stdout.strip() == "[]"
    assert not [p for p in (home / "media").rglob("*") if p.is_file()]


# ------------------------------------------------------------------ the media an archive brings, checked as uploads


def _crc8(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


def _crc16(data: bytes) -> int:
    crc = 0
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def flac_bomb(hours: float, declared: bool) -> bytes:
    """A FLAC of `hours` of silence, 8 kHz mono, in frames of 65,535 constant samples (about 10 bytes each): 10
    hours (36,003 s: whole frames) in ~45 kB. Its STREAMINFO states the length, or (declared False) says it is unknown."""
    rate, block = 8000, 65535
    frames = round(hours * 3600 * rate / block)
    total = frames * block if declared else 0
    info = block.to_bytes(2, "big") * 2 + bytes(6)  # min/max block size, min/max frame size unknown
    info += ((rate << 44) | (0 << 41) | (15 << 36) | total).to_bytes(8, "big") + bytes(16)  # rate, mono, 16 bit
    out = bytearray(b"fLaC" + b"\x80\x00\x00\x22" + info)
    for n in range(frames):
        number = (
            n.to_bytes(1, "big")
            if n < 0x80
            else bytes([0xC0 | n >> 6, 0x80 | n & 0x3F])
            if n < 0x800
            else (bytes([0xE0 | n >> 12, 0x80 | (n >> 6) & 0x3F, 0x80 | n & 0x3F]))
        )
        head = b"\xff\xf8" + bytes([0x74, 0x08]) + number + (block - 1).to_bytes(2, "big")  # 16-bit size, 8 kHz
        frame = head + bytes([_crc8(head)]) + b"\x00\x00\x00"  # one CONSTANT subframe of value 0
        out += frame + _crc16(frame).to_bytes(2, "big")
    return bytes(out)


def swap_media(src: Path, dst: Path, old: str, blob: bytes) -> Path:
    """A copy of archive `src` whose media `old` is replaced by `blob` (named by its own sha256 everywhere, so the
    archive's hashes, sizes and references are all right)."""
    new = hashlib.sha256(blob).hexdigest()
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    [name] = [n for n in members if old in n]
    del members[name]
    members[name.replace(old, new).replace(f"media/{old[:2]}/", f"media/{new[:2]}/")] = blob
    data = json.loads(members["project.json"].decode().replace(old, new))
    for m in data["media"]:
        if m["sha256"] == new:
            m["size"] = len(blob)
    members["project.json"] = json.dumps(data).encode()
    man = json.loads(members["manifest.json"])
    man["members"] = {
        n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in members.items() if n != "manifest.json"
    }
    members["manifest.json"] = json.dumps(man).encode()
    with zipfile.ZipFile(dst, "w") as z:
        for n, b in members.items():
            z.writestr(n, b, compress_type=zipfile.ZIP_DEFLATED)
    return dst


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """A rendered two-shot project whose scene plays an uploaded track (so its archive holds a FLAC track, the
    sound stems as WAV, clips and the film as MP4), exported; and a 1,187 Hz tone outside any data folder."""
    import os

    from app.config import load_config
    from app.studio import Studio
    from generation.video_io import run_ffmpeg
    from storage.files import load_storyboard
    from tests.security.hostile_archives import BOARD

    root = tmp_path_factory.mktemp("scored")
    board, song, tone = root / "b.yaml", root / "song.wav", root / "outside.m4a"
    board.write_text(BOARD)
    run_ffmpeg(["-v", "error", "-f", "lavfi", "-i", "sine=f=440:d=2", "-y", str(song)])
    run_ffmpeg(["-v", "error", "-f", "lavfi", "-i", "sine=f=1187:d=2", "-c:a", "aac", "-y", str(tone)])
    cfg = {
        "home": root / "home",
        "narration": False,
        "agents": "offline",
        "sound_cache": os.environ["CHIEF_SOUND_CACHE"],
    }
    st = Studio(load_config(cfg, environ={}))
    pid = st.create_from_storyboard(load_storyboard(board)).project_id
    v, _ = st.set_music_track(pid, "a", song)
    render = st.render(pid)
    still = root / "still.png"
    run_ffmpeg(["-v", "error", "-f", "lavfi", "-i", "color=c=blue:s=96x64", "-frames:v", "1", "-y", str(still)])
    keyframe = st.set_keyframe(pid, "s1", still).storyboard.shots()[0].keyframe
    archive = st.export_project(pid, root / "scored.chief.zip")
    track = v.storyboard.scenes[0].music_track
    st.db.close()
    return {"archive": archive, "track": track, "render": render, "tone": tone, "keyframe": keyframe}


def _imports_nothing(make_studio, home, archive, says: str) -> str:
    from storage.archives import ArchiveError

    st = make_studio(home=home)
    with pytest.raises(ArchiveError) as e:
        st.import_project(archive)
    line = str(e.value)
    assert says in line and "\n" not in line, line
    assert st.projects() == [] and not [p for p in (home / "media").rglob("*") if p.is_file()]
    return line


def _dash(segment: Path) -> bytes:
    return (
        '<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'mediaPresentationDuration="PT2S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">'
        '<Period><AdaptationSet mimeType="audio/mp4"><Representation id="a" bandwidth="128000" codecs="mp4a.40.2">'
        f"<BaseURL>{segment}</BaseURL></Representation></AdaptationSet></Period></MPD>\n"
    ).encode()


def test_an_archive_whose_track_is_a_dash_manifest_is_refused_in_one_line(scored, tmp_path):
    """The track names a file outside (the tone): refused at import, by the CLI, in one line; nothing written."""
    bad = swap_media(scored["archive"], tmp_path / "dash.chief.zip", scored["track"], _dash(scored["tone"]))
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "import", str(bad)))
    assert "(a music track): not a FLAC track (a DASH manifest; CHIEF reads FLAC)" in line, line
    assert chief(home, "projects", "--json").stdout.strip() == "[]"
    assert not [p for p in (home / "media").rglob("*") if p.is_file()]


@pytest.mark.parametrize(
    "blob, says",
    [
        (b"la la la, the words of a song\n" * 40, "(a music track): not a FLAC track (a text file"),
        (b"#EXTM3U\n#EXTINF:2,\n/etc/hostname.flac\n", "(a music track): not a FLAC track (an HLS playlist"),
        (flac_bomb(10, declared=True), "(a music track): 36003 s is longer than 1200 s"),
        (flac_bomb(10, declared=False), "(a music track): decodes to more than 1200 s (no length): a decompression"),
    ],
    ids=["text", "hls", "10-hour-bomb", "hidden-10-hour-bomb"],
)
def test_an_archive_whose_track_is_not_a_sound_is_refused_at_import(scored, make_studio, tmp_path, blob, says):
    bad = swap_media(scored["archive"], tmp_path / "bad.chief.zip", scored["track"], blob)
    _imports_nothing(make_studio, tmp_path / "home", bad, says)


def test_the_bomb_is_ten_hours_of_sound():
    """The bomb above is what it claims: ffmpeg decodes the undeclared one past the cap in seconds."""
    import subprocess
    import tempfile

    from generation.audio.upload import probe
    from generation.video_io import ffmpeg_exe

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.flac"
        path.write_bytes(flac_bomb(10, declared=True))
        assert path.stat().st_size < 100_000
        assert probe(path)["seconds"] == pytest.approx(36000, abs=10)
        path.write_bytes(flac_bomb(10, declared=False))
        cmd = [ffmpeg_exe(), "-v", "error", "-f", "flac", "-i", str(path), "-t", "1300", "-f", "u8", "-ar", "8000", "-"]
        assert len(subprocess.run(cmd, capture_output=True).stdout) == 1300 * 8000


@pytest.mark.parametrize("kind", ["clip", "stem", "still"])
def test_an_archive_whose_clip_stem_or_still_is_a_manifest_or_text_is_refused(scored, make_studio, tmp_path, kind):
    render = scored["render"]
    if kind == "clip":
        old, blob, says = render.shots[0].sha256, _dash(scored["tone"]), "(a clip or film): not an MP4 video (a DASH"
    elif kind == "stem":
        old, blob, says = render.media["music"], b"RIFF? no, words\n" * 20, "(narration or a sound stem): not a WAV"
    else:
        old, blob, says = scored["keyframe"], b"#EXTM3U\n#EXTINF:1,\nx.png\n", "(a still): not a readable PNG image"
    bad = swap_media(scored["archive"], tmp_path / f"{kind}.chief.zip", old, blob)
    _imports_nothing(make_studio, tmp_path / "home", bad, says)


def test_the_scored_archive_itself_imports(scored, make_studio, tmp_path):
    st = make_studio(home=tmp_path / "home")
    v = st.import_project(scored["archive"])
    assert v.storyboard.scenes[0].music_track == scored["track"]
