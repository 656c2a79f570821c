"""Whether a clip carries sound is read from its `moov` box only: a sound track found wherever the box sits, and
bytes that merely look like a sound handler outside it (in the media data, in a free box) not taken for one."""

import pytest

from generation.video_io import mp4_has_sound, run_ffmpeg

PICTURE = ["-f", "lavfi", "-i", "testsrc=size=64x36:rate=8:duration=1"]
TONE = ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000:duration=1"]
H264 = ["-c:v", "libx264", "-pix_fmt", "yuv420p"]


@pytest.mark.parametrize("faststart", [False, True])
def test_a_sound_track_is_found_where_the_moov_box_sits(tmp_path, faststart):
    front = ["-movflags", "+faststart"] if faststart else []
    silent, sounding = tmp_path / "silent.mp4", tmp_path / "sounding.mp4"
    run_ffmpeg(["-y", *PICTURE, *H264, *front, str(silent)])
    run_ffmpeg(["-y", *PICTURE, *TONE, *H264, "-c:a", "aac", *front, str(sounding)])
    assert (mp4_has_sound(silent), mp4_has_sound(sounding)) == (False, True)


def test_a_sound_handler_outside_the_moov_box_is_not_a_sound_track(tmp_path):
    silent = tmp_path / "silent.mp4"
    run_ffmpeg(["-y", *PICTURE, *H264, "-movflags", "+faststart", str(silent)])
    lookalike = b"hdlr" + bytes(8) + b"soun"  # what a whole-file search for the handler would take for one
    payload = bytes(64) + lookalike + bytes(64)
    with open(silent, "ab") as f:  # a top-level free box after the media data
        f.write((8 + len(payload)).to_bytes(4, "big") + b"free" + payload)
    assert lookalike in silent.read_bytes() and not mp4_has_sound(silent)
