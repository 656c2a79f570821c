import numpy as np
import pytest

from generation.assembly import assemble, film_info, timeline
from generation.subtitles import Cue, write_srt, write_vtt
from generation.video_io import inspect, read_frames, write_video
from tests.subtitle_streams import soft_subtitles, srt_cues

COLOURS = [(200, 30, 30), (30, 200, 30), (30, 30, 200)]


def _clips(tmp_path, size=(64, 48), fps=8, frames=8, colours=COLOURS, name="c"):
    w, h = size
    paths = []
    for i, c in enumerate(colours):
        p = tmp_path / f"{name}{i}.mp4"
        # a moving bar so frames differ within a clip and P-frames carry real data
        clip = []
        for f in range(frames):
            a = np.full((h, w, 3), c, np.uint8)
            a[:, (f * 4) % w : (f * 4) % w + 4] = 255
            clip.append(a)
        write_video(clip, p, fps)
        paths.append(p)
    return paths


def _decoded(paths):
    return [f for p in paths for f in read_frames(p)[0]]


def test_matching_clips_are_stream_copied_bit_exact(tmp_path):
    clips = _clips(tmp_path)
    res = assemble(clips, tmp_path / "out" / "film.mp4")
    assert res.stream_copied and res.reencoded == []
    assert res.num_frames == 24 and res.duration == 3.0 and res.starts == [0.0, 1.0, 2.0]
    film, fps = read_frames(res.path)
    want = _decoded(clips)
    assert fps == 8 and len(film) == len(want)
    assert all(np.array_equal(a, b) for a, b in zip(film, want))  # no re-encode: identical pixels
    info = inspect(res.path)
    assert (info["codec"], info["pix_fmt"], info["has_audio"]) == ("h264", "yuv420p", False)
    assert [p.name for p in res.path.parent.iterdir()] == ["film.mp4"]  # no temp leftovers


def test_faststart_moov_before_mdat(tmp_path):
    res = assemble(_clips(tmp_path), tmp_path / "film.mp4")
    data = res.path.read_bytes()
    assert data.index(b"moov") < data.index(b"mdat")


def test_different_sizes_force_a_reencode_to_the_first_clip(tmp_path):
    clips = _clips(tmp_path, colours=COLOURS[:2]) + _clips(tmp_path, size=(96, 64), colours=COLOURS[2:], name="big")
    res = assemble(clips, tmp_path / "film.mp4")
    assert not res.stream_copied
    assert any("big0.mp4" in r and "width" in r for r in res.reencoded)
    assert res.num_frames == 24
    info = film_info(res.path)
    assert (info["width"], info["height"], info["frames"]) == (64, 48, 24)
    last = read_frames(res.path)[0][-1]
    assert abs(int(last[24, 10, 2]) - 200) < 20  # the third (blue) clip, letterboxed into 64x48


def test_other_frame_rate_or_encoder_settings_force_a_reencode(tmp_path):
    import imageio_ffmpeg

    clips = _clips(tmp_path, colours=COLOURS[:1]) + _clips(tmp_path, fps=12, frames=12, colours=COLOURS[1:2], name="f")
    res = assemble(clips, tmp_path / "film.mp4")
    assert not res.stream_copied and "fps 12.0 vs 8.0" in res.reencoded[0]
    assert res.num_frames == 16 and res.fps == 8  # 1 s at 8 fps + 1 s resampled to 8 fps

    # same size and rate, but ultrafast disables CABAC: other H.264 parameter sets, so no copy
    odd = tmp_path / "ultrafast.mp4"
    writer = imageio_ffmpeg.write_frames(
        str(odd),
        (64, 48),
        fps=8,
        codec="libx264",
        pix_fmt_out="yuv420p",
        macro_block_size=1,
        output_params=["-preset", "ultrafast"],
    )
    writer.send(None)
    for _ in range(8):
        writer.send(np.full((48, 64, 3), 99, np.uint8))
    writer.close()
    res = assemble(clips[:1] + [odd], tmp_path / "film2.mp4")
    assert not res.stream_copied and "parameter sets" in res.reencoded[0]
    assert res.num_frames == 16


def test_crossfade_reencodes_and_overlaps(tmp_path):
    res = assemble(_clips(tmp_path), tmp_path / "film.mp4", crossfade=0.25)
    assert not res.stream_copied and "crossfade" in res.reencoded[0]
    assert res.num_frames == 24 - 2 * 2  # two overlaps of 2 frames at 8 fps
    assert res.starts == [0.0, 0.75, 1.5]
    mid = read_frames(res.path)[0][7][24, 40].astype(int)  # inside the first fade: red and green mixed
    assert mid[0] > 60 and mid[1] > 60
    with pytest.raises(ValueError, match="shortest clip"):
        assemble(_clips(tmp_path), tmp_path / "x.mp4", crossfade=1.0)


def test_title_card_is_prepended_by_stream_copy(tmp_path):
    clips = _clips(tmp_path)
    res = assemble(clips, tmp_path / "film.mp4", title="The Keeper", title_seconds=1.0)
    assert res.stream_copied, res.reencoded
    assert res.num_frames == 8 + 24 and res.starts == [1.0, 2.0, 3.0]
    frames = read_frames(res.path)[0]
    assert frames[0].mean() < 60 and frames[0].max() > 200  # white text on black
    assert all(np.array_equal(a, b) for a, b in zip(frames[8:], _decoded(clips)))


def test_burned_subtitles_draw_on_the_picture(tmp_path):
    clips = _clips(tmp_path, size=(160, 120), colours=[(20, 20, 120)] * 2)
    srt = write_srt([Cue(0.0, 1.0, "HELLO WORLD")], tmp_path / "s.srt")
    res = assemble(clips, tmp_path / "film.mp4", subtitles_srt=srt, burn_subtitles=True)
    assert not res.stream_copied and res.reencoded == ["subtitles burned into the picture"]
    frames, plain = read_frames(res.path)[0], _decoded(clips)

    def changed(i):  # pixels of the lower half that the burn-in turned bright
        diff = frames[i][60:].astype(int) - plain[i][60:].astype(int)
        return int((diff.sum(axis=2) > 150).sum())

    assert changed(2) > 20  # during the cue (0-1 s)
    assert changed(12) == 0  # after it
    with pytest.raises(ValueError, match="needs subtitles_srt"):
        assemble(clips, tmp_path / "x.mp4", burn_subtitles=True)


def test_subtitles_not_burned_are_a_soft_stream_and_change_no_pixels(tmp_path):
    """The WebVTT is muxed as a mov_text stream a player turns on: the film is still a stream copy, its text (angle
    brackets and ampersands too) and times read back from the file are the cues'."""
    clips = _clips(tmp_path)
    cues = [Cue(0.0, 1.25, "Now. It has to be now."), Cue(1.5, 2.9, "KEEPER: Go & see <the> whale.")]
    srt, vtt = write_srt(cues, tmp_path / "s.srt"), write_vtt(cues, tmp_path / "s.vtt")
    res = assemble(clips, tmp_path / "film.mp4", soft_subtitles=vtt, language="eng", subtitles_title="Captions (SDH)")
    assert res.stream_copied, res.reencoded
    assert all(np.array_equal(a, b) for a, b in zip(read_frames(res.path)[0], _decoded(clips)))
    stream, text = soft_subtitles(res.path)
    assert "mov_text" in stream and "(eng)" in stream, stream
    assert srt_cues(text) == [
        ("00:00:00,000 --> 00:00:01,250", cues[0].text),
        ("00:00:01,500 --> 00:00:02,900", cues[1].text),
    ]
    burned = assemble(clips, tmp_path / "burned.mp4", subtitles_srt=srt, burn_subtitles=True)
    assert soft_subtitles(burned.path)[0] == ""  # burned in: not twice


def test_audio_is_muxed_without_reencoding_video_and_fits_the_film(tmp_path):
    import wave

    wav = tmp_path / "tone.wav"
    with wave.open(str(wav), "wb") as w:  # 2 s of tone for a 3 s film: padded with silence
        w.setnchannels(1), w.setsampwidth(2), w.setframerate(22050)
        w.writeframes((np.sin(np.arange(44100) / 10) * 8000).astype("<i2").tobytes())
    res = assemble(_clips(tmp_path), tmp_path / "film.mp4", audio=wav)
    assert res.stream_copied
    info = film_info(res.path)
    assert info["has_audio"] and info["frames"] == 24
    assert abs(info["audio_duration"] - info["duration"]) < 0.05
    assert inspect(res.path)["has_audio"]


def test_errors_are_clear(tmp_path):
    with pytest.raises(ValueError, match="no clips"):
        assemble([], tmp_path / "f.mp4")
    with pytest.raises(FileNotFoundError):
        assemble([tmp_path / "missing.mp4"], tmp_path / "f.mp4")


def test_timeline():
    assert timeline([2.0, 3.0, 1.0]) == [0.0, 2.0, 5.0]
    assert timeline([2.0, 3.0], title_seconds=1.0, crossfade=0.5) == [0.5, 2.0]


def test_otio_export_round_trips(tmp_path):
    import opentimelineio as otio

    from generation.otio_export import export_otio

    clips = _clips(tmp_path)
    items = [("s1", clips[0], 1.0, 8), ("s2", clips[1], 2.5, 8), ("s3", clips[2], 0.5, 24)]
    out = export_otio(items, tmp_path / "cut.otio", "The Keeper", relative_to=tmp_path)
    tl = otio.adapters.read_from_file(str(out))
    assert tl.name == "The Keeper"
    got = list(tl.find_clips())
    assert [c.name for c in got] == ["s1", "s2", "s3"]
    assert [c.duration().to_seconds() for c in got] == [1.0, 2.5, 0.5]
    assert [c.media_reference.target_url for c in got] == ["c0.mp4", "c1.mp4", "c2.mp4"]
    assert [c.metadata["chief"]["shot_id"] for c in got] == ["s1", "s2", "s3"]
    assert [c.markers[0].name for c in got] == ["s1", "s2", "s3"]
    assert tl.duration().to_seconds() == 4.0
    absolute = otio.adapters.read_from_file(str(export_otio(items[:1], tmp_path / "a.otio", "t")))
    assert absolute.find_clips()[0].media_reference.target_url == clips[0].resolve().as_uri()
