"""A creator's track: hostile files refused in one line with nothing written; a good one stored once by content."""

import pytest

from generation.audio.pcm import decode
from generation.audio.upload import UploadLimits, UploadRefused, header_bytes, store_track
from generation.video_io import run_ffmpeg

LIMITS = UploadLimits(max_seconds=30.0, max_header_bytes=4 << 20)


def make(tmp_path, name, *args):
    out = tmp_path / name
    run_ffmpeg(["-v", "error", "-f", "lavfi", *args, "-y", str(out)])
    return out


def test_a_good_track_is_stored_once_by_content(tmp_path):
    mp3 = make(tmp_path, "song.mp3", "-i", "sine=f=440:d=2", "-c:a", "libmp3lame")
    store = tmp_path / "store"
    track = store_track(mp3, store, LIMITS)
    assert track.path == store / f"{track.sha256}.flac" and track.codec == "mp3"
    assert track.seconds == pytest.approx(2.0, abs=0.1)
    assert len(decode(track.path, 48000)) == pytest.approx(2 * 48000, abs=4800)
    again = store_track(mp3, store, LIMITS)
    assert again.path == track.path and sorted(p.name for p in store.iterdir()) == [track.path.name]


def refused(tmp_path, path, match, limits=LIMITS):
    store = tmp_path / "store"
    with pytest.raises(UploadRefused, match=match) as e:
        store_track(path, store, limits)
    assert "\n" not in str(e.value)  # one line
    assert not store.exists()  # nothing written


def test_not_audio_is_refused(tmp_path):
    text = tmp_path / "notes.mp3"
    text.write_text("this is not a song\n" * 100)
    refused(tmp_path, text, "not an audio file")
    png = make(tmp_path, "still.png", "-i", "color=c=red:s=32x32", "-frames:v", "1")
    refused(tmp_path, png, "not an audio file")


def test_too_long_is_refused(tmp_path):
    wav = make(tmp_path, "long.wav", "-i", "sine=f=220:d=3")
    refused(tmp_path, wav, r"3 s is longer than 2 s", UploadLimits(max_seconds=2.0))


def test_a_decompression_bomb_is_stopped_at_the_cap(tmp_path):
    """Two minutes of silence in a few kB of FLAC whose header no longer states its length."""
    flac = make(tmp_path, "bomb.flac", "-i", "anullsrc=r=48000:cl=stereo", "-t", "120", "-c:a", "flac")
    data = bytearray(flac.read_bytes())
    bits = int.from_bytes(data[18:26], "big") & ~((1 << 36) - 1)  # STREAMINFO's total samples: 0, unknown
    data[18:26] = bits.to_bytes(8, "big")
    flac.write_bytes(bytes(data))
    assert flac.stat().st_size < 200_000  # tiny: 120 s of 48 kHz stereo decodes to 23 MB
    refused(tmp_path, flac, "decompression bomb")


def test_a_huge_header_is_refused_before_ffmpeg_reads_it(tmp_path):
    mp3 = make(tmp_path, "tagged.mp3", "-i", "sine=f=440:d=1", "-c:a", "libmp3lame", "-id3v2_version", "0")
    padding = 6 << 20
    size = bytes((padding >> shift) & 0x7F for shift in (21, 14, 7, 0))  # ID3v2 syncsafe size
    bloated = tmp_path / "bloated.mp3"
    bloated.write_bytes(b"ID3\x04\x00\x00" + size + b"\x00" * padding + mp3.read_bytes())
    assert header_bytes(bloated) == 10 + padding
    refused(tmp_path, bloated, r"6.0 MiB header")


def test_a_wav_with_a_huge_chunk_before_its_samples_is_refused(tmp_path):
    wav = make(tmp_path, "a.wav", "-i", "sine=f=440:d=1")
    data = wav.read_bytes()
    junk = b"LIST" + (5 << 20).to_bytes(4, "little") + b"\x00" * (5 << 20)
    body = data[12:]
    out = tmp_path / "b.wav"
    out.write_bytes(b"RIFF" + (4 + len(junk) + len(body)).to_bytes(4, "little") + b"WAVE" + junk + body)
    assert header_bytes(out) > 5 << 20
    refused(tmp_path, out, "MiB header")
