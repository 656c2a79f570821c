"""A render that changes nothing takes the film cut before (issue 57.3): no cut, no mix, no ffmpeg; the record says
so and names the same film. Anything that decides the film (a line, an option) or a missing file cuts it again; an option
changed back finds the film cut before."""

from __future__ import annotations

import pytest

from app.services.rendering import FILM_AGAIN
from storage.schema import Character, Line, Scene, Shot, Storyboard

pytestmark = pytest.mark.slow  # renders films with Piper lines


def _board() -> Storyboard:
    shots = [
        Shot(
            shot_id=f"k{i}",
            prompt=f"A greenhouse at dusk, pane {i}",
            duration=2.0,
            seed=40 + i,
            characters=["Wren"],
            dialogue=[Line(character="Wren", line=f"The orchids open tonight, pane {i}.")],
            sounds="a sprinkler hissing",
        )
        for i in range(3)
    ]
    return Storyboard(
        title="Again",
        characters=[Character(name="Wren", description="a gardener")],
        scenes=[Scene(scene_id="g", music="a music box, slow", shots=shots)],
        fps=8,
        width=64,
        height=36,
    )


@pytest.fixture
def cutting(studio, monkeypatch):
    """Counts the film's cuts and mixes, and every program the process starts (ffmpeg and ffprobe among them)."""
    import subprocess

    runs = {"cuts": 0, "mixes": 0, "programs": 0}
    film, sound, popen = studio._rendering.film.assemble, studio._audio.film_sound, subprocess.Popen

    def counted(name, fn):
        def call(*a, **kw):
            runs[name] += 1
            return fn(*a, **kw)

        return call

    monkeypatch.setattr(studio._rendering.film, "assemble", counted("cuts", film))
    monkeypatch.setattr(studio._audio, "film_sound", counted("mixes", sound))
    monkeypatch.setattr(subprocess, "Popen", counted("programs", popen))
    return runs


def test_a_render_that_changes_nothing_takes_the_film_cut_before(studio, cutting):
    v = studio.create_from_storyboard(_board())
    first = studio.render(v.project_id, v.number)
    assert (cutting["cuts"], cutting["mixes"]) == (1, 1) and cutting["programs"] > 0
    before = dict(cutting)
    again = studio.render(v.project_id, v.number)
    assert cutting == before  # nothing cut, mixed or run: not one program started
    assert again.id != first.id and again.film_sha256 == first.film_sha256 and again.media == first.media
    assert FILM_AGAIN in again.label and again.rendered == 0
    assert again.audio is not None and again.audio.parts_mixed == 0 and again.audio.lines_voiced == 0
    assert studio.render_info(v.project_id).id == again.id  # the version's latest render

    w, _ = studio.edit_shot(v.project_id, "k1", [("line.1", "The orchids stay shut, pane 1.")], v.number)
    edited = studio.render(w.project_id, w.number)  # a line changed: the film is cut again
    assert cutting["cuts"] == before["cuts"] + 1 and edited.film_sha256 != first.film_sha256
    assert FILM_AGAIN not in edited.label and edited.audio is not None and edited.audio.lines_voiced == 1


def test_an_option_changed_and_changed_back_finds_the_first_film_and_a_lost_file_is_cut_again(studio, cutting):
    v = studio.create_from_storyboard(_board())
    first = studio.render(v.project_id, v.number)
    ebu, _ = studio.set_film_options(v.project_id, {"loudness": "ebu"}, v.number)
    quieter = studio.render(ebu.project_id, ebu.number)  # an option that decides the sound: mixed and cut again
    assert cutting["cuts"] == 2 and FILM_AGAIN not in quieter.label and quieter.film_sha256 != first.film_sha256
    web, _ = studio.set_film_options(v.project_id, {"loudness": "web"}, ebu.number)
    back = studio.render(web.project_id, web.number)  # as the first version was: its film, on the new version
    assert cutting["cuts"] == 2 and FILM_AGAIN in back.label and back.film_sha256 == first.film_sha256
    assert back.version == web.number
    path = studio.ctx.media.find(first.film_sha256)
    assert path is not None
    path.unlink()  # the film's file removed behind the studio's back
    again = studio.render(web.project_id, web.number)
    assert cutting["cuts"] == 3 and FILM_AGAIN not in again.label
    assert studio.ctx.media.find(again.film_sha256) is not None


def _picture_md5(path, out) -> str:
    """The film's video stream, packet for packet, as ffmpeg's md5 muxer hashes it."""
    from generation.ffmpeg import run_ffmpeg

    run_ffmpeg(["-v", "error", "-i", str(path), "-map", "0:v:0", "-c", "copy", "-f", "md5", "-y", str(out)])
    text = out.read_text().strip()
    assert text.startswith("MD5=")
    return text


def test_a_change_to_the_sound_alone_keeps_the_picture_it_had(studio, monkeypatch, tmp_path):
    """A title card and crossfades make the picture a re-encode; a line edited after it copies the picture of the
    film cut before instead of encoding it again, and the film still says the line anew."""
    import generation.assembly as assembly

    encodes = []
    reencode = assembly._reencode_args
    monkeypatch.setattr(assembly, "_reencode_args", lambda *a, **kw: encodes.append(1) or reencode(*a, **kw))
    v = studio.create_from_storyboard(_board())
    v, _ = studio.set_film_options(v.project_id, {"title_card": True, "crossfade": 0.5}, v.number)
    first = studio.render(v.project_id, v.number)
    assert len(encodes) == 1 and not first.stream_copied
    w, _ = studio.edit_shot(v.project_id, "k2", [("line.1", "The orchids close at dawn, pane 2.")], v.number)
    edited = studio.render(w.project_id, w.number)
    assert len(encodes) == 1  # the picture was not encoded again
    assert edited.film_sha256 != first.film_sha256 and edited.audio is not None and edited.audio.lines_voiced == 1
    films = [studio.ctx.media.find(r.film_sha256) for r in (first, edited)]
    assert _picture_md5(films[0], tmp_path / "a.md5") == _picture_md5(films[1], tmp_path / "b.md5")
    s, _ = studio.edit_shot(w.project_id, "k2", [("prompt", "A greenhouse at night, pane 2")], w.number)
    studio.render(s.project_id, s.number)  # a clip changed: the picture is cut (and encoded) again
    assert len(encodes) == 2
