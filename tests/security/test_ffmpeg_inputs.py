"""Files CHIEF did not write reach ffmpeg only as a container their bytes name, with that demuxer forced
(`generation.ffmpeg_input`): every audio and video container CHIEF takes is read; a playlist, manifest, list or text,
whatever its name, is refused in one line before ffmpeg runs, and the local file it names (a tone at a frequency no
good file here has) is never read into anything stored."""

from __future__ import annotations

import numpy as np
import pytest

from app.errors import StudioError
from generation.audio.pcm import RATE, decode
from generation.audio.upload import UploadLimits, UploadRefused, store_track
from generation.ffmpeg_input import AUDIO, VIDEO, InputRefused, container, input_args
from generation.video_io import inspect, run_ffmpeg

HIDDEN_HZ = 1187.0  # the file outside: if this frequency is ever stored, ffmpeg read it
GOOD_HZ = 440.0
LIMITS = UploadLimits(max_seconds=30.0)


def make(path, source: str, *out: str):
    run_ffmpeg(["-v", "error", "-f", "lavfi", "-i", source, *out, "-y", str(path)])
    return path


def tone(path, hz: float = HIDDEN_HZ, *out: str):
    return make(path, f"sine=f={hz}:d=2", *out)


def peak_hz(samples: np.ndarray) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(len(samples))))
    return float(np.argmax(spectrum) * RATE / len(samples))


def refused(tmp_path, path, says: str):
    store = tmp_path / "store"
    with pytest.raises(UploadRefused) as e:
        store_track(path, store, LIMITS)
    line = str(e.value)
    assert "\n" not in line and path.name in line and says in line, line
    assert not store.exists()  # nothing written
    return line


# ------------------------------------------------------------------------------ every container CHIEF takes


AUDIO_FILES = [  # (name, what ffmpeg writes, the demuxer the bytes name)
    ("a.wav", [], "wav"),
    ("a.flac", ["-c:a", "flac"], "flac"),
    ("a.opus", ["-c:a", "libopus", "-f", "ogg"], "ogg"),
    ("a.ogg", ["-c:a", "libvorbis", "-f", "ogg"], "ogg"),
    ("a.mp3", ["-c:a", "libmp3lame"], "mp3"),  # with its ID3v2 tag
    ("bare.mp3", ["-c:a", "libmp3lame", "-id3v2_version", "0", "-write_xing", "0"], "mp3"),  # the frame sync first
    ("a.m4a", ["-c:a", "aac", "-f", "mp4"], "mov"),
    ("a.aac", ["-c:a", "aac", "-f", "adts"], "aac"),
    ("a.mka", ["-c:a", "libopus", "-f", "matroska"], "matroska"),
    ("a.webm", ["-c:a", "libopus", "-f", "webm"], "matroska"),
]


@pytest.mark.parametrize("name, out, demuxer", AUDIO_FILES, ids=[a[0] for a in AUDIO_FILES])
def test_every_audio_container_is_read_by_its_bytes_and_stored(tmp_path, name, out, demuxer):
    """Read with the demuxer its bytes name, whatever the file is called (here: no extension at all)."""
    made = tone(tmp_path / name, GOOD_HZ, *out)
    unnamed = tmp_path / "upload"
    made.rename(unnamed)
    assert container(unnamed) == demuxer
    args = input_args(unnamed)
    assert args[:4] == ["-protocol_whitelist", "file", "-f", demuxer] and args[-1] == f"file:{unnamed.resolve()}"
    track = store_track(unnamed, tmp_path / "store", LIMITS)
    assert track.seconds == pytest.approx(2.0, abs=0.1)
    assert peak_hz(decode(track.path, RATE)) == pytest.approx(GOOD_HZ, abs=2)


VIDEO_FILES = [
    ("c.mp4", ["-c:v", "libx264", "-pix_fmt", "yuv420p"], "mov"),
    ("c.mov", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "mov"], "mov"),
    ("c.mkv", ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-f", "matroska"], "matroska"),
    ("c.webm", ["-c:v", "libvpx", "-f", "webm"], "matroska"),
]


@pytest.mark.parametrize("name, out, demuxer", VIDEO_FILES, ids=[v[0] for v in VIDEO_FILES])
def test_every_video_container_is_read_as_a_clip(tmp_path, name, out, demuxer):
    from generation.frames import sample_frames

    clip = make(tmp_path / name, "testsrc=s=64x48:r=8:d=1", *out)
    assert input_args(clip, VIDEO, "a video file")[:4] == ["-protocol_whitelist", "file", "-f", demuxer]
    info = inspect(clip)
    assert (info["width"], info["height"]) == (64, 48)
    assert len(sample_frames(clip, 3)) == 3


@pytest.mark.parametrize("name", ["clip.mp4", "clip.mkv", "clip.webm"])
def test_a_clip_that_is_a_manifest_of_a_local_video_is_refused(tmp_path, name):
    """A stored clip (an archive's) that is a DASH manifest naming a local video: refused by every reader."""
    from generation.frames import sample_frames

    outside = make(tmp_path / "outside.mp4", "testsrc=s=64x48:r=8:d=1", "-c:v", "libx264", "-pix_fmt", "yuv420p")
    clip = tmp_path / name
    clip.write_text(dash(tmp_path, "x.mpd", outside).read_text().replace("audio/mp4", "video/mp4"))
    for read in (inspect, lambda c: sample_frames(c, 2)):
        with pytest.raises(InputRefused, match=rf"^{name}: not a video file \(a DASH manifest; CHIEF reads MP4"):
            read(clip)


def test_an_audio_only_container_is_not_a_clip(tmp_path):
    wav = tone(tmp_path / "clip.mp4", GOOD_HZ, "-f", "wav")  # a WAV, whatever its name
    with pytest.raises(InputRefused, match=r"clip.mp4: not a video file \(WAV; CHIEF reads MP4/M4A/MOV, Matroska"):
        inspect(wav)


# ------------------------------------------------------------------------------ what names another file


def hls(tmp_path, name: str, segment) -> object:
    path = tmp_path / name
    path.write_text(f"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:2,\n{segment.name}\n#EXT-X-ENDLIST\n")
    return path


def dash(tmp_path, name: str, segment) -> object:
    path = tmp_path / name
    path.write_text(
        '<?xml version="1.0"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" type="static" '
        'mediaPresentationDuration="PT2S" minBufferTime="PT1S" profiles="urn:mpeg:dash:profile:isoff-on-demand:2011">'
        '<Period><AdaptationSet mimeType="audio/mp4"><Representation id="a" bandwidth="128000" codecs="mp4a.40.2">'
        f"<BaseURL>{segment.name}</BaseURL></Representation></AdaptationSet></Period></MPD>\n"
    )
    return path


SEGMENTS = {  # the local file a manifest names: the hidden tone in several containers
    "flac": ["-c:a", "flac"],
    "mp3": ["-c:a", "libmp3lame"],
    "m4a": ["-c:a", "aac", "-f", "mp4"],
    "ts": ["-c:a", "aac", "-f", "mpegts"],
    "mkv": ["-c:a", "flac", "-f", "matroska"],
}


@pytest.mark.parametrize("name", ["list.m3u8", "list.m3u", "song.mp3", "song.flac", "song.wav"])
@pytest.mark.parametrize("segment", ["flac", "ts", "mp3"])
def test_an_hls_playlist_of_a_local_file_is_refused_by_any_name(tmp_path, name, segment):
    seg = tone(tmp_path / f"outside.{segment}", HIDDEN_HZ, *SEGMENTS[segment])
    refused(tmp_path, hls(tmp_path, name, seg), "not an audio file (an HLS playlist")


@pytest.mark.parametrize("name", ["song.mp3", "song.flac", "track.m4a", "manifest.mpd"])
@pytest.mark.parametrize("segment", ["m4a", "mkv"])
def test_a_dash_manifest_of_a_local_file_is_refused_by_any_name(tmp_path, name, segment):
    seg = tone(tmp_path / f"outside.{segment}", HIDDEN_HZ, *SEGMENTS[segment])
    refused(tmp_path, dash(tmp_path, name, seg), "not an audio file (a DASH manifest")


def test_a_concat_list_text_and_other_bytes_are_refused(tmp_path):
    seg = tone(tmp_path / "outside.flac", HIDDEN_HZ, "-c:a", "flac")
    concat = tmp_path / "mix.wav"
    concat.write_text(f"ffconcat version 1.0\nfile '{seg.name}'\n")
    refused(tmp_path, concat, "not an audio file (an ffmpeg concat list")
    text = tmp_path / "notes.flac"
    text.write_text("v=0\no=- 0 0 IN IP4 127.0.0.1\ns=a session description\nm=audio 5004 RTP/AVP 0\n")
    refused(tmp_path, text, "not an audio file (a text file")
    png = make(tmp_path / "still.mp3", "color=c=red:s=32x32", "-frames:v", "1", "-f", "image2", "-c:v", "png")
    refused(tmp_path, png, "not an audio file (unknown bytes")
    tagged = tmp_path / "tagged.mp3"  # an ID3 tag in front of a playlist
    tagged.write_bytes(b"ID3\x04\x00\x00\x00\x00\x00\x00" + hls(tmp_path, "x.m3u8", seg).read_bytes())
    refused(tmp_path, tagged, "not an audio file (an HLS playlist")


def test_an_mp4_that_takes_its_samples_from_another_file_is_refused(tmp_path):
    """An M4A whose data reference (an `alis` dref) names a file beside it: ffmpeg with drefs on plays that file's
    tone (the carrier's own samples are zeros); here the upload is refused and nothing of the tone is stored."""
    folder = tmp_path / "uploads"
    folder.mkdir()
    outside = tone(folder / "beside.m4a", HIDDEN_HZ, "-c:a", "aac")
    carrier = folder / "carrier.m4a"
    carrier.write_bytes(_with_external_dref(outside.read_bytes(), b"/elsewhere/beside.m4a"))
    assert container(carrier) == "mov"
    line = refused(tmp_path, carrier, "its media are in another file (an external reference)")
    assert "beside" not in line
    try:  # decoding it as a render would reads its own zeros (or nothing), never the file beside it
        samples = decode(carrier, RATE)
    except ValueError:
        samples = np.zeros(0)
    assert len(samples) == 0 or abs(peak_hz(samples) - HIDDEN_HZ) > 5


def _with_external_dref(m4a: bytes, path: bytes) -> bytes:
    """`m4a` (mdat before moov) with its media data zeroed and its data reference replaced by a Mac alias record
    naming `path` one folder level up/down (what ffmpeg's mov demuxer resolves beside the file when drefs are on)."""
    fixed = bytearray(150)
    fixed[130:134] = (1).to_bytes(2, "big") * 2  # nlvl_from, nlvl_to
    name = path + (b"\0" if len(path) % 2 else b"")
    record = (2).to_bytes(2, "big") + len(path).to_bytes(2, "big") + name + b"\xff\xff\x00\x00"  # absolute path; end
    body = b"alis" + b"\0\0\0\0" + bytes(fixed) + record  # flags 0: not self-contained
    entry = (4 + len(body)).to_bytes(4, "big") + body

    def rewrite(data: bytes) -> bytes:
        out, pos = b"", 0
        while pos + 8 <= len(data):
            size, kind = int.from_bytes(data[pos : pos + 4], "big"), data[pos + 4 : pos + 8]
            inner = data[pos + 8 : pos + size]
            if kind in (b"moov", b"trak", b"mdia", b"minf", b"dinf"):
                inner = rewrite(inner)
            elif kind == b"dref":
                inner = b"\0\0\0\0" + (1).to_bytes(4, "big") + entry
            elif kind == b"mdat":
                inner = bytes(len(inner))
            out += (8 + len(inner)).to_bytes(4, "big") + kind + inner
            pos += size
        return out

    return rewrite(m4a)


# ------------------------------------------------------------------------------ channels


@pytest.mark.parametrize("layout, channels", [("9.1.6", 16), ("hexadecagonal", 16), ("22.2", 24), ("7.1.4", 12)])
@pytest.mark.parametrize("ext, out", [("wav", []), ("mka", ["-c:a", "pcm_s16le"]), ("mov", ["-c:a", "pcm_s16le"])])
def test_more_than_8_channels_in_a_named_layout_is_refused(tmp_path, layout, channels, ext, out):
    """ffmpeg names these layouts (9.1.6, 22.2); the channels are counted in the decoded stream, not read from
    the name."""
    path = make(tmp_path / f"surround.{ext}", f"aevalsrc=0.1*sin(2*PI*440*t):c={layout}:d=1", *out)
    refused(tmp_path, path, f"{channels} channels at 44100 Hz is over the limit (8 channels")


# ------------------------------------------------------------------------------ the paths an upload takes


def test_the_music_command_and_the_web_track_buttons_refuse_a_manifest_and_store_nothing(make_studio, tmp_path):
    """`chief music`, the scene headers' and the film options' track buttons all place a track through
    `Studio.set_music_track`: a playlist named .m3u8 (what the scene button took unchecked) and a DASH manifest
    named .mp3 are refused in one line; no version, no media."""
    from storage.files import load_storyboard
    from tests.security.hostile_archives import BOARD

    board = tmp_path / "b.yaml"
    board.write_text(BOARD)
    st = make_studio()
    pid = st.create_from_storyboard(load_storyboard(board)).project_id
    media = st.config.home / "media"
    before = sorted(p.name for p in media.rglob("*") if p.is_file())
    seg = tone(tmp_path / "outside.flac", HIDDEN_HZ, "-c:a", "flac")
    m4a = tone(tmp_path / "outside.m4a", HIDDEN_HZ, "-c:a", "aac")
    for scene, upload, says in [
        ("a", hls(tmp_path, "scene.m3u8", seg), "an HLS playlist"),
        (None, dash(tmp_path, "film.mp3", m4a), "a DASH manifest"),
    ]:
        with pytest.raises(StudioError) as e:
            st.set_music_track(pid, scene, upload)
        line = str(e.value)
        assert line.startswith(f"track refused: {upload.name}: not an audio file ({says}") and "\n" not in line, line
    assert [v.number for v in st.versions(pid)] == [1]
    assert sorted(p.name for p in media.rglob("*") if p.is_file()) == before


def test_a_manifest_already_stored_as_a_track_is_not_followed_by_the_render(make_studio, tmp_path):
    """Defence in depth: an old data folder may hold a manifest where a track's FLAC should be (stored before the
    checks). The render refuses it in one line; the tone it names is never read."""
    from storage.files import load_storyboard
    from tests.security.hostile_archives import BOARD

    board_file = tmp_path / "b.yaml"
    board_file.write_text(BOARD)
    st = make_studio()
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    seg = tone(tmp_path / "outside.m4a", HIDDEN_HZ, "-c:a", "aac")
    rec = st.media.put(dash(tmp_path, "old.flac", seg), "flac", move=False)
    v = st.version(pid)
    board = v.storyboard.model_copy(update={"film": v.storyboard.film.model_copy(update={"music_track": rec.sha256})})
    with st.ctx.repo.write() as u:
        u.add_media([rec])
        u.add_child(u.version(pid, v.number), board, "edit", "an old track")
    with pytest.raises(StudioError) as e:
        st.render(pid)
    line = str(e.value)
    assert f"{rec.sha256}.flac: not an audio file (a DASH manifest" in line and "\n" not in line, line


def test_the_name_in_a_refusal_is_one_line_on_the_command_line_and_escaped_on_the_page(make_studio, tmp_path):
    """A name with a newline and markup: the CLI's line replaces the control character, the page's toast escapes
    the markup (the web's track buttons raise through `guard`)."""
    import gradio as gr

    from app.ui.common import guard
    from storage.files import load_storyboard
    from tests.security.hostile_archives import BOARD

    board = tmp_path / "b.yaml"
    board.write_text(BOARD)
    st = make_studio()
    pid = st.create_from_storyboard(load_storyboard(board)).project_id
    seg = tone(tmp_path / "outside.flac", HIDDEN_HZ, "-c:a", "flac")
    upload = hls(tmp_path, "<img src=x onerror=alert(1)>\nsong.mp3", seg)
    with pytest.raises(StudioError, match=r"^track refused: <img src=x onerror=alert\(1\)>\?song.mp3: not an audio"):
        st.set_music_track(pid, "a", upload)
    with pytest.raises(gr.Error) as e:
        guard(lambda: st.set_music_track(pid, "a", upload))()
    assert "&lt;img src=x onerror=alert(1)&gt;?song.mp3: not an audio file (an HLS playlist" in e.value.message
    assert "<img" not in e.value.message and "\n" not in e.value.message


def test_a_tag_that_reads_like_ffmpegs_warning_is_not_a_reference(tmp_path):
    """The external-reference refusal reads ffmpeg's own log line, not a title a file carries."""
    title = "[in#0 @ 0x1] Skipped opening external track: stream 0, alias: path='/x'"
    m4a = tone(tmp_path / "tagged.m4a", GOOD_HZ, "-c:a", "aac", "-metadata", f"title={title}")
    assert store_track(m4a, tmp_path / "store", LIMITS).seconds == pytest.approx(2.0, abs=0.1)
