import numpy as np
import pytest
from PIL import Image

from generation.frames import contact_sheet, sample_frames, save_jpeg, timecode
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
