"""References and keyframes through the Studio, with the embedded defaults (drawn keyframes, animatic, offline
critics): every change goes into the working draft (tests/app/test_drafts.py), every candidate is kept, and a keyframe change re-renders one shot."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from app.errors import StudioError
from generation.video_io import read_frames
from tests.conftest import tiny_board


@pytest.fixture
def project(studio):
    return studio.create_from_storyboard(tiny_board(4)).project_id


def image(path, colour=(200, 30, 30), size=(40, 50), fmt="PNG"):
    Image.fromarray(np.full((size[1], size[0], 3), colour, np.uint8)).save(path, format=fmt)
    return path


def versions(studio, pid) -> int:
    return len(studio.versions(pid))


def test_a_reference_upload_is_a_child_version_and_is_re_encoded(studio, project, tmp_path):
    jpeg = image(tmp_path / "keeper.jpg", fmt="JPEG")
    v = studio.add_reference(project, "Keeper", jpeg)
    assert (v.number, v.kind, v.parent_number) == (2, "reference", 1)
    (sha,) = v.storyboard.characters[0].references
    stored = studio.image_path(sha)
    assert Image.open(stored).format == "PNG" and stored.read_bytes() != jpeg.read_bytes()
    assert studio.version(project, 1).storyboard.characters[0].references == []  # v1 is untouched
    v3 = studio.clear_references(project, "Keeper")
    assert v3.storyboard.characters[0].references == []


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b"not an image at all"), "not a readable PNG, JPEG or WebP image"),
        (lambda p: Image.new("RGB", (8, 8)).save(p, format="GIF"), "a GIF image; use PNG, JPEG or WebP"),
        (lambda p: None, "no such file"),
    ],
)
def test_a_bad_upload_is_refused_in_one_line_and_writes_nothing(studio, project, tmp_path, make, message):
    bad = tmp_path / "bad.png"
    make(bad)
    for action in (
        lambda: studio.add_reference(project, "Keeper", bad),
        lambda: studio.set_keyframe(project, "s1", bad),
    ):
        with pytest.raises(StudioError, match=message) as err:
            action()
        assert "\n" not in str(err.value)
    assert versions(studio, project) == 1 and studio.shot_keyframes(project)[0].candidates == []
    stored = sorted(studio.media.root.rglob("*"))
    with pytest.raises(StudioError, match="no character 'Nobody' in the storyboard"):
        studio.add_reference(project, "Nobody", image(tmp_path / "ok.png"))
    assert sorted(studio.media.root.rglob("*")) == stored  # refused before the image was stored


def test_keyframes_for_every_shot_in_one_version_conditioned_on_references(studio, project, tmp_path):
    studio.add_reference(project, "Keeper", image(tmp_path / "magenta.png", (255, 0, 255)))
    res = studio.render_keyframes(project)
    v = res.version
    assert (v.number, v.kind, v.draft, res.rendered, res.reused) == (2, "reference", True, 4, 0)  # one draft
    assert "animatic keyframes" in res.label
    shots = v.storyboard.shots()
    assert [s.keyframe for s in shots] == [k.sha256 for k in res.keyframes]
    for shot in shots:  # the Keeper's reference is drawn into the shots the Keeper is in, and only there
        pixels = np.asarray(Image.open(studio.image_path(shot.keyframe)).convert("RGB"), dtype=np.int16)
        magenta = ((pixels[..., 0] > 240) & (pixels[..., 1] < 15) & (pixels[..., 2] > 240)).sum()
        assert (magenta > 50) == ("Keeper" in shot.characters), shot.shot_id
    with pytest.raises(StudioError, match="every shot of v2 has a keyframe"):
        studio.render_keyframes(project)
    studio.clear_keyframe(project, "s1")
    studio.clear_keyframe(project, "s2")
    again = studio.render_keyframes(project, shots=["s1", "s2"])  # the same requests again: reused
    assert (again.rendered, again.reused) == (0, 2)


def test_a_keyframe_change_re_renders_exactly_that_shot(studio):
    project = studio.create_from_storyboard(tiny_board(4).model_copy(update={"height": 144})).project_id
    studio.render_keyframes(project)
    first = studio.render(project)
    assert (first.rendered, first.reused) == (4, 0)
    rolled = studio.reroll_keyframe(project, "s2")
    assert rolled.version.kind == "keyframe" and rolled.keyframes[0].seed != 2
    second = studio.render(project)
    assert [s.status for s in second.shots] == ["reused", "rendered", "reused", "reused"]
    # The clip starts on its keyframe: the first frame is the approved still.
    shot = studio.version(project).storyboard.shot("s2")
    clip = read_frames(studio.clip_path(second.shot("s2").sha256))[0][0].astype(np.int16)
    still = np.asarray(
        Image.open(studio.image_path(shot.keyframe)).convert("RGB").resize(clip.shape[1::-1]), dtype=np.int16
    )
    assert np.abs(clip[20:95] - still[20:95]).mean() < 8  # rows between the overlays, through H.264


def test_upload_pick_and_clear_keep_every_candidate(studio, project, tmp_path):
    made = studio.render_keyframes(project)
    original = made.keyframes[0]
    studio.render(project)
    uploaded = studio.set_keyframe(project, "s1", image(tmp_path / "mine.png", size=(64, 36)))
    assert uploaded.kind == "keyframe" and uploaded.storyboard.shot("s1").keyframe != original.sha256
    card = studio.shot_keyframes(project)[0]
    assert [k.source for k in card.candidates] == ["uploaded", "generated"]  # newest first
    assert card.approved == card.candidates[0].sha256
    back = studio.pick_keyframe(project, "s1", original.id)
    assert back.storyboard.shot("s1").keyframe == original.sha256
    assert studio.render(project).rendered == 0  # that clip is in the cache already
    with pytest.raises(StudioError, match="already the approved one"):
        studio.pick_keyframe(project, "s1", original.id)
    with pytest.raises(StudioError, match="belongs to shot s1, not s2"):
        studio.pick_keyframe(project, "s2", original.id)
    cleared = studio.clear_keyframe(project, "s1")
    assert cleared.storyboard.shot("s1").keyframe is None
    # keyframes (rendered: finished) · upload + pick (a draft, rendered: finished) · clear (a new draft)
    assert [(v.kind, v.draft) for v in studio.versions(project)] == [
        ("import", False),
        ("keyframe", False),
        ("keyframe", False),
        ("keyframe", True),
    ]


def test_a_keyframe_takes_the_place_of_the_continuity_frame(studio):
    board = tiny_board(3, shot_overrides={1: {"continuity": True}, 2: {"continuity": True}})
    pid = studio.create_from_storyboard(board).project_id
    studio.render(pid)
    studio.render_keyframes(pid, shots=["s2"])
    r = studio.render(pid)
    # s2 starts from its keyframe now; s3 continues from s2's new last frame; s1 is untouched.
    assert [s.status for s in r.shots] == ["reused", "rendered", "rendered"]


def test_the_panel_screens_the_keyframes_before_any_video(studio, project):
    with pytest.raises(
        StudioError, match=r"4 shot\(s\) have no keyframe \(s1, s2, s3, s4\): draw or upload their keyframes first$"
    ):
        studio.screen_keyframes(project)
    studio.render_keyframes(project)
    crits = studio.screen_keyframes(project)
    v = studio.version(project)
    assert len(crits) == len(v.panel) and {c.screening for c in crits} == {"keyframes"}
    assert all(c.render_id is None for c in crits) and studio.render_info(project) is None  # no video rendered
    stored = studio.critiques(project)
    assert [c.id for c in stored] == [c.id for c in crits] and stored[0].screening == "keyframes"
    studio.add_note(project, "Make the storm scarier", shot_id="s3")
    proposal = studio.refine(project)  # the loop reads a keyframe screening like any critique
    assert proposal.proposal.edits


def test_without_an_image_model_the_diffusers_backend_says_so_in_one_line(tmp_path):
    from app.config import load_config
    from app.studio import Studio

    st = Studio(
        load_config(
            {"home": tmp_path / "home", "narration": False},
            environ={"CHIEF_VIDEO_BACKEND": "diffusers", "CHIEF_VIDEO_MODEL": str(tmp_path / "wan")},
        )
    )
    pid = st.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(StudioError) as err:
        st.render_keyframes(pid)
    assert str(err.value).startswith(
        "no image model: upload a keyframe or reference picture, or set CHIEF_IMAGE_MODEL "
        "to a FLUX, SDXL, SD3 or Qwen-Image"
    )
    assert "chief " not in str(err.value)  # shared by the CLI and the web app: no command named
    assert "\n" not in str(err.value) and len(st.versions(pid)) == 1
    assert st.images_label() == "none (set CHIEF_IMAGE_MODEL)"
    st.db.close()


def test_a_missing_image_model_folder_is_one_line(make_studio, tmp_path):
    st = make_studio(image_model=str(tmp_path / "flux-missing"))
    pid = st.create_from_storyboard(tiny_board(2)).project_id
    with pytest.raises(StudioError) as err:
        st.generate_reference(pid, "Keeper")
    assert str(err.value).startswith("CHIEF_IMAGE_MODEL: model ") and "flux-missing" in str(err.value)
    assert "not found" in str(err.value) and "\n" not in str(err.value) and len(st.versions(pid)) == 1
