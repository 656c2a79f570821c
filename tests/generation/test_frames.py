import numpy as np
import pytest
from PIL import Image

from generation.frames import contact_sheet, decode, sample_frames, save_jpeg, timecode
from generation.video_io import write_video


@pytest.fixture
def ramp(tmp_path):
    """10 frames at 8 fps whose grey level encodes the frame index (i * 25)."""
    path = tmp_path / "ramp.mp4"
    write_video([np.full((48, 64, 3), i * 25, np.uint8) for i in range(10)], path, fps=8)
    return path


def _level(img):
    return int(np.asarray(img)[24, 32, 0])


def test_sample_frames_are_evenly_spaced_with_first_and_last(ramp):
    got = sample_frames(ramp, 4, offset=10.0)
    assert [i for i, _, _ in got] == [0, 3, 6, 9]
    assert [t for _, t, _ in got] == [10.0, 10.375, 10.75, 11.125]
    assert all(im.size == (64, 48) for _, _, im in got)
    for i, _, im in got:
        assert abs(_level(im) - i * 25) <= 3  # the decoded frame is the one asked for


def test_sample_more_frames_than_the_clip_has_gives_each_once(ramp):
    got = sample_frames(ramp, 50)
    assert [i for i, _, _ in got] == list(range(10))
    assert [i for i, _, _ in sample_frames(ramp, 1)] == [0]


def test_contact_sheet_has_one_row_per_shot(tmp_path, ramp):
    frames = [im for _, _, im in sample_frames(ramp, 3)]
    out = contact_sheet(
        [("s01\n" + timecode(0), frames), ("s02\n" + timecode(1.25), frames[:2])],
        tmp_path / "sheet.jpg",
        thumb_height=96,
        label_width=150,
        pad=4,
    )
    sheet = Image.open(out)
    assert sheet.size == (150 + 3 * (128 + 4) + 4, 2 * (96 + 4) + 4)
    label = np.asarray(sheet.convert("L"))[4:100, 0:150]
    assert label.max() > 200  # the label text is drawn


def test_timecode_format():
    assert timecode(0) == "00:00.000"
    assert timecode(75.5) == "01:15.500"
    assert timecode(3725.25) == "1:02:05.250"


def test_save_jpeg_limits_the_longer_side(tmp_path):
    out = save_jpeg(Image.new("RGB", (1000, 500), "red"), tmp_path / "x.jpg", max_side=200)
    assert Image.open(out).size == (200, 100)
    assert not list(tmp_path.glob(".*part*"))


@pytest.mark.parametrize(
    "fps, size, frames", [(8, (64, 48), 9), (12, (160, 90), 13), (24, (96, 96), 25), (30, (48, 64), 7)]
)
def test_a_written_clips_boxes_say_what_ffmpeg_reads_in_it(tmp_path, fps, size, frames):
    """A clip CHIEF has just written is described from its mp4 boxes (`written_facts`, no ffmpeg run): its fps, size
    and frame count as `inspect` reads them. Anything else is not described so."""
    from generation.video_io import inspect, written_facts

    w, h = size
    clip = tmp_path / "c.mp4"
    write_video((np.full((h, w, 3), 8 * i, np.uint8) for i in range(frames)), clip, fps)
    read = inspect(clip)
    assert written_facts(clip) == {k: read[k] for k in ("fps", "width", "height", "frames")}
    other = tmp_path / "other.mp4"
    other.write_bytes(b"\0" * 64)
    assert written_facts(other) is None


def test_a_rendered_shots_pictures_are_cut_without_reading_its_header_again(make_studio, monkeypatch, tmp_path):
    """Rendering cuts each new clip's thumbnail, sampled frames and last frame with its boxes' facts: the header is
    not read again by `inspect` for them."""
    import traceback

    from generation import video_io
    from tests.conftest import tiny_board

    st = make_studio()
    pid = st.create_from_storyboard(tiny_board(2)).project_id
    callers: list[str] = []
    inspect = video_io.inspect
    monkeypatch.setattr(
        video_io, "inspect", lambda path: callers.append(traceback.extract_stack()[-2].name) or inspect(path)
    )
    st.render(pid)
    shots = st.render_info(pid, 1).shots
    assert len(shots) == 2 and "prepare" not in callers
    for shot in shots:  # the thumbnail is the middle frame, as cut with the header `inspect` reads
        clip = st.ctx.media.path(shot.sha256, "mp4")
        read = inspect(clip)
        middle = decode(clip, [read["frames"] // 2], read)[0]
        again = save_jpeg(middle, tmp_path / f"{shot.sha256}.jpg", max_side=320)
        assert st.thumbnail(shot.sha256).read_bytes() == again.read_bytes()
