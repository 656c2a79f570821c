import pytest

from generation.subtitles import Cue, cues_for, timecode, wrap, write_srt, write_vtt


def test_timecodes_are_exact_to_the_millisecond():
    assert timecode(1.5) == "00:00:01,500"
    assert timecode(3661.007) == "01:01:01,007"
    assert timecode(59.9996) == "00:01:00,000"
    assert timecode(2.25, ".") == "00:00:02.250"


def test_srt_for_known_cues(tmp_path):
    cues = [Cue(0.0, 1.5, "Dawn over the harbour."), Cue(1.5, 4.0, "She waits.")]
    text = write_srt(cues, tmp_path / "a.srt").read_text()
    assert text == (
        "1\n00:00:00,000 --> 00:00:01,500\nDawn over the harbour.\n\n2\n00:00:01,500 --> 00:00:04,000\nShe waits.\n"
    )


def test_vtt_for_known_cues(tmp_path):
    cues = [Cue(0.0, 1.5, "Dawn over the harbour."), Cue(61.25, 62.0, "She waits.")]
    text = write_vtt(cues, tmp_path / "a.vtt").read_text()
    assert text == (
        "WEBVTT\n\n00:00:00.000 --> 00:00:01.500\nDawn over the harbour.\n\n"
        "00:01:01.250 --> 00:01:02.000\nShe waits.\n\n"
    )


def test_long_text_wraps_to_two_balanced_lines(tmp_path):
    long = "The lighthouse keeper climbs the spiral stairs one last time before the storm arrives at dusk"
    lines = wrap(long)
    assert len(lines) == 2 and " ".join(lines) == long
    assert abs(len(lines[0]) - len(lines[1])) < 12
    assert wrap("Short line.") == ["Short line."]
    assert len(wrap("word " * 200)) == 2
    srt = write_srt([Cue(0, 2, long)], tmp_path / "b.srt").read_text()
    assert srt.splitlines()[2:4] == lines


def test_cues_for_skips_blank_text_and_rejects_reversed_times():
    cues = cues_for([(0, 2, "  one  "), (2, 4, ""), (4, 6, "three\nlines")])
    assert cues == [Cue(0.0, 2.0, "one"), Cue(4.0, 6.0, "three lines")]
    with pytest.raises(ValueError, match="ends before it starts"):
        cues_for([(3, 2, "oops")])


def test_a_shots_lines_share_its_window_by_word_count():
    from generation.subtitles import split_window

    cues = split_window(2.0, 8.0, ["One two three four.", "", "Five six."])
    assert cues == [(2.0, 6.0, "One two three four."), (6.0, 8.0, "Five six.")]  # 4 words then 2: 4 s then 2 s
    assert split_window(0.0, 3.0, []) == []
    assert split_window(0.0, 3.0, ["Only."]) == [(0.0, 3.0, "Only.")]
