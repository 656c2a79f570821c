"""The offline critics on synthetic clips (dark, bright, strobing, static), repeated shots, a missing beat, personas
that notice different things in their own voices, and story findings that do not depend on the animatic's palette."""

from __future__ import annotations

import re

import numpy as np
import pytest

from agents.base import FilmView, SampledFrame
from agents.offline import OfflineCritic, describe_frames
from agents.offline.critic import TOPICS, judge
from agents.offline.voice import Voice
from agents.personas import builtin_personas
from generation.frames import sample_frames
from generation.video_io import write_video
from storage.schema import Character, Scene, Shot, Storyboard

FPS = 8
W, H = 64, 36


def moving(level: float, n: int = 16, seed: int = 0) -> list[np.ndarray]:
    """A mid-structured picture at `level` brightness with a square sliding across it."""
    rng = np.random.default_rng(seed)
    base = np.clip(level * 255 + rng.normal(0, 18, (H, W, 1)), 0, 255).repeat(3, axis=2)
    frames = []
    for i in range(n):
        f = base.copy()
        x = 4 + i * 3
        f[10:22, x : x + 10] = 255 - level * 200
        frames.append(f.astype(np.uint8))
    return frames


def still(level: float, n: int = 16) -> list[np.ndarray]:
    return [moving(level, 1)[0]] * n


def strobe(n: int = 17) -> list[np.ndarray]:
    """Black and white on alternate frames: every even frame black, so 3 evenly sampled frames (0, 8, 16) are black."""
    return [np.full((H, W, 3), 255 if i % 2 else 0, np.uint8) for i in range(n)]


def board(prompts: list[str], logline: str = "A keeper and a whale", n: int = 16, **shot) -> Storyboard:
    shots = [
        Shot(
            shot_id=f"s{i + 1}",
            prompt=p,
            duration=n / FPS,
            seed=i,
            characters=["Keeper"],
            narration="The keeper keeps watch." if i == 0 else "",
            **shot,
        )
        for i, p in enumerate(prompts)
    ]
    return Storyboard(
        title="Synthetic",
        logline=logline,
        characters=[Character(name="Keeper", description="old")],
        scenes=[Scene(scene_id="a", shots=shots)],
        fps=FPS,
    )


def film(tmp_path, b: Storyboard, clips: dict[str, list[np.ndarray]], with_clips: bool = True) -> FilmView:
    """The storyboard's shots encoded as real H.264 clips, with 3 frames sampled per shot as the panel samples them."""
    paths, sampled = {}, []
    for shot, start, _ in b.timeline():
        p = tmp_path / f"{shot.shot_id}.mp4"
        write_video(clips[shot.shot_id], p, FPS)
        paths[shot.shot_id] = str(p)
        for k, (_, t, img) in enumerate(sample_frames(p, 3, offset=start)):
            fp = tmp_path / f"{shot.shot_id}_{k}.png"
            img.save(fp)
            sampled.append(SampledFrame(shot.shot_id, k, t, str(fp)))
    return FilmView(b, sampled, intent=b.logline, renderer_label="synthetic clips", clips=paths if with_clips else {})


@pytest.fixture(scope="module")
def personas():
    return builtin_personas()


def kinds(critic, persona, view) -> dict[str, tuple[str, ...]]:
    return {f.kind: f.shot_ids for f in critic.findings(persona, view)}


def test_strobing_is_measured_between_consecutive_frames(tmp_path, personas):
    b = board(["a quiet harbour at noon", "the keeper at the lamp", "the lamp room"])
    view = film(tmp_path, b, {"s1": moving(0.5), "s2": strobe(), "s3": moving(0.5, seed=2)})
    sam = personas["captions_reader"]
    critic = OfflineCritic()
    found = kinds(critic, sam, view)
    assert found["flash"] == ("s2",)
    top = critic.critique(sam, view).value.top_issues[0]
    assert top.shot_ids == ["s2"] and top.urgency == 5 and "take the flashing out of s2" in top.suggestion
    # the same film seen only through its 3 sampled frames per shot: the strobing is invisible there
    (tmp_path / "x").mkdir()
    blind = film(tmp_path / "x", b, {"s1": moving(0.5), "s2": strobe(), "s3": moving(0.5, seed=2)}, with_clips=False)
    assert "flash" not in kinds(OfflineCritic(), sam, blind)
    assert "flashes not measured" in describe_frames(blind)["s2"]
    assert "FLASHING" in describe_frames(view)["s2"]


def grey_clip(levels: list[int]) -> np.ndarray:
    """Whole frames of these grey levels at the measuring size."""
    from agents.offline import measure

    return np.stack([np.full((measure.H, measure.W, 3), v, np.uint8) for v in levels])


def test_a_flash_is_a_pair_of_opposing_changes():
    """Dark to bright in three steps and back (each step a general-flash change) is one flash, not three: at
    12 fps a second holds two such pulses and a bit, not six flashes. A black-white strobe at 12 fps is six."""
    from agents.offline.measure import flashes_per_second, measure_frames

    pulse = [0, 128, 190, 255, 190, 128] * 4
    rates = flashes_per_second([measure_frames("s1", grey_clip(pulse), 12, every_frame=True)])
    assert rates == {"s1": 2.5}  # +++---+++---+: five turns in the worst second
    strobing = flashes_per_second([measure_frames("s1", grey_clip([0, 255] * 12), 12, every_frame=True)])
    assert strobing == {"s1": 6.0}


def test_each_clip_counts_flashes_in_its_own_seconds():
    """A 4 fps clip alternating black and white flashes twice a second, even next to a 30 fps clip: a second of
    it is 4 frames, not 30."""
    from agents.offline.measure import flashes_per_second, measure_frames

    slow = measure_frames("s1", grey_clip([0, 255] * 6), 4, every_frame=True)
    steady = measure_frames("s2", grey_clip([128] * 30), 30, every_frame=True)
    assert flashes_per_second([slow, steady]) == {"s1": 2.0, "s2": 0.0}


def test_dark_and_washed_out_are_judged_by_taste(tmp_path, personas):
    b = board(["a night scene at the harbour", "a sunlit beach at noon", "the keeper at the lamp"])
    view = film(tmp_path, b, {"s1": moving(0.06), "s2": moving(0.97), "s3": moving(0.5)})
    critic = OfflineCritic()
    parent, fan = kinds(critic, personas["parent_with_kids"], view), kinds(critic, personas["genre_fan"], view)
    assert parent["dark"] == ("s1",) and fan["washed_out"] == ("s2",)
    raised = {
        p: [i.summary for i in critic.critique(personas[p], view).value.top_issues]
        for p in ("parent_with_kids", "genre_fan")
    }
    assert any("too dark" in s for s in raised["parent_with_kids"])
    assert not any("too dark" in s for s in raised["genre_fan"])  # he loves dark, high-contrast lighting
    assert any("washed out" in s for s in raised["genre_fan"])
    assert not any("washed out" in s for s in raised["parent_with_kids"])  # she wants warm, bright images


def test_static_shots_bother_the_scroller_not_the_critic(tmp_path, personas):
    b = board(["the harbour wall", "the lamp", "the sea", "the stairs"])
    view = film(tmp_path, b, {"s1": still(0.5), "s2": still(0.45), "s3": still(0.55), "s4": moving(0.5)})
    critic = OfflineCritic()
    teen = critic.critique(personas["teen_scroller"], view).value
    prof = critic.critique(personas["film_critic"], view).value
    assert any("hardly anything moves in 3 shot(s)" in i.summary for i in teen.top_issues)
    assert not any("moves" in i.summary for i in prof.top_issues)
    assert "no visible movement" in describe_frames(view)["s1"]


def test_repeated_shots_are_found_by_prompt_and_by_picture(tmp_path, personas):
    b = board(
        [
            "Wide shot of the keeper climbing the stairs at dusk",
            "Close-up of the lamp",
            "Wide shot of the keeper climbing the stairs at dusk",
            "Medium shot of the whale",
        ]
    )
    same = moving(0.4, seed=7)
    view = film(tmp_path, b, {"s1": moving(0.4, seed=1), "s2": same, "s3": moving(0.4, seed=3), "s4": same})
    found = OfflineCritic().findings(personas["film_critic"], view)
    repeat = next(f for f in found if f.kind == "repeat")
    assert repeat.shot_ids == ("s3", "s1") and repeat.directions[0].kind == "reframe"
    alike = next(f for f in found if f.kind == "look_alike")
    assert alike.shot_ids == ("s4", "s2")


def test_a_beat_the_logline_promises_and_no_shot_shows(tmp_path, personas):
    logline = "A lighthouse keeper guides a lost whale home through a storm"
    plain = ["the keeper at the lamp", "the whale in the bay", "the keeper waves"]
    clips = {"s1": moving(0.5), "s2": moving(0.5, seed=1), "s3": moving(0.5, seed=2)}
    critic, parent = OfflineCritic(), personas["parent_with_kids"]
    missing = [f for f in critic.findings(parent, film(tmp_path, board(plain, logline), clips)) if f.kind == "missing"]
    assert [f.what for f in missing] == ["the idea's places and things the lighthouse, the storm are never on screen"]
    told = ["the keeper at the lighthouse lamp", "the whale in the bay as the storm breaks", *plain[2:]]
    (tmp_path / "b").mkdir()
    assert not [
        f for f in critic.findings(parent, film(tmp_path / "b", board(told, logline), clips)) if f.kind == "missing"
    ]


@pytest.fixture(scope="module")
def demo_film(tmp_path_factory):
    """The demo's 1-minute plan rendered by the animatic: the panel's shared film."""
    from agents.offline import OfflinePlanner
    from generation.animatic import AnimaticBackend

    tmp = tmp_path_factory.mktemp("demo")
    b = OfflinePlanner().plan("A lighthouse keeper befriends a lost whale during the autumn storms", 1).value
    b = b.model_copy(update={"width": 128, "height": 72, "fps": 6})
    return render_view(tmp, b, AnimaticBackend())


def render_view(tmp, b: Storyboard, backend) -> FilmView:
    from generation.base import ShotRequest

    paths, sampled = {}, []
    for shot, start, _ in b.timeline():
        out = tmp / f"{shot.shot_id}.mp4"
        backend.render(
            ShotRequest(
                shot_id=shot.shot_id,
                prompt=shot.prompt,
                seed=shot.seed,
                duration=shot.duration,
                camera=shot.camera,
                width=b.width,
                height=b.height,
                fps=b.fps,
            ),
            out,
        )
        paths[shot.shot_id] = str(out)
        for k, (_, t, img) in enumerate(sample_frames(out, 2, offset=start)):
            fp = tmp / f"{shot.shot_id}_{k}.png"
            img.save(fp)
            sampled.append(SampledFrame(shot.shot_id, k, t, str(fp)))
    return FilmView(b, sampled, intent=b.logline, renderer_label="animatic (previz)", clips=paths)


def test_personas_raise_different_things_in_their_own_voices(demo_film, personas):
    critic = OfflineCritic()
    crits = {pid: critic.critique(p, demo_film).value for pid, p in personas.items()}
    tops = {pid: c.top_issues[0].summary for pid, c in crits.items() if c.top_issues}
    assert len(set(tops.values())) >= 3, tops
    assert len({c.overall for c in crits.values()}) >= 5
    assert len({Voice.of(p).register for p in personas.values()}) == len(personas)
    assert crits["teen_scroller"].summary == crits["teen_scroller"].summary.lower()
    assert re.search(r"\b(the little one|my eldest)\b", crits["parent_with_kids"].summary)
    for c in crits.values():  # no critique lists per-shot measurements for every shot
        assert len(c.shot_notes) < len(demo_film.storyboard.shots())


def test_reasons_follow(demo_film, personas):
    """A hate or love is cited only beside a finding it is about (never 'too dark (I can't stand stereotypes)')."""
    critic = OfflineCritic()
    for p in personas.values():
        c = critic.critique(p, demo_film).value
        raised = {i.summary for i in c.top_issues}
        judged = {j.finding.what: j for j in judge(p, critic.findings(p, demo_film))}
        for text in p.hates + p.loves:
            if text.lower() in c.summary.lower():
                assert any(
                    re.search(TOPICS[judged[s].finding.kind].hurts, text, re.I) for s in raised if s in judged
                ), (p.id, text)
        assert "stereotypes" not in c.summary


def test_two_palettes_same_story_findings(tmp_path, personas):
    """The critics and the animatic share no vocabulary: a storyboard rendered with two palette tables gets the same
    story findings, while what the frames show differs."""
    from agents.offline import OfflinePlanner
    from generation.animatic import MOODS, AnimaticBackend

    b = OfflinePlanner().plan("A lighthouse keeper befriends a lost whale during the autumn storms", 0.5).value
    b = b.model_copy(update={"width": 128, "height": 72, "fps": 6})
    night = {w: (0.66, 0.08, 0.6) for w in MOODS}  # every mood word draws near-black blue
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    day, dark = (
        render_view(tmp_path / "a", b, AnimaticBackend()),
        render_view(tmp_path / "b", b, AnimaticBackend(night)),
    )
    critic = OfflineCritic()
    differs = False
    for p in personas.values():
        a, z = critic.findings(p, day), critic.findings(p, dark)
        assert [f for f in a if f.level == "story"] == [f for f in z if f.level == "story"]
        differs |= [f for f in a if f.level == "picture"] != [f for f in z if f.level == "picture"]
        for c in (critic.critique(p, day).value, critic.critique(p, dark).value):
            levers = {w for w, (hue, _, _) in MOODS.items() if hue is None}  # the table's pure light/contrast words
            for issue in c.top_issues:
                assert not set(re.findall(r"[a-z\-]+", issue.suggestion.lower())) & levers, issue.suggestion
    assert differs


@pytest.mark.slow
def test_diversity_flags_a_collapsed_panel_honestly(demo_film, personas):
    from agents.diversity import panel_similarity

    critic = OfflineCritic()
    panel = [critic.critique(p, demo_film).value for p in personas.values()]
    assert not panel_similarity(panel).collapsed
    clone = personas["phone_commuter"]
    same = [critic.critique(clone.model_copy(update={"id": f"c{i}"}), demo_film).value for i in range(3)]
    report = panel_similarity(same)
    assert report.collapsed and report.mean_pairwise_cosine > 0.95


def test_a_text_panel_is_described_as_one(tmp_path):
    from PIL import Image, ImageDraw, ImageFont

    img = Image.new("RGB", (256, 144), (20, 20, 20))
    ImageDraw.Draw(img).text((40, 56), "THE KEEPER", fill=(240, 240, 240), font=ImageFont.load_default(size=26))
    card = [np.asarray(img)] * 8
    b = board(["Title card"], n=8)
    assert "title card or text panel" in describe_frames(film(tmp_path, b, {"s1": card}))["s1"]


def test_story_checks_read_lines_presence_and_camera():
    """Lines too fast to read, a long silence, a character gone too long, one camera move everywhere."""
    from agents.offline.checks import story
    from storage.schema import Tastes

    shots = [
        Shot(
            shot_id=f"s{i}",
            prompt=f"shot number {i} of the harbour",
            duration=6,
            seed=i,
            characters=["Keeper"] if i in (0, 9) else [],
            camera="static",
        )
        for i in range(10)
    ]
    shots[
        0
    ].narration = "The old keeper climbed all ninety steps of the tower every single morning before the sun came up."
    b = Storyboard(
        title="T",
        logline="",
        characters=[Character(name="Keeper", description="old")],
        scenes=[Scene(scene_id="a", shots=shots)],
    )
    reader = {f.kind: f for f in story(b, "", Tastes(captions=1.0, continuity=0.9))}
    assert reader["dense_line"].shot_ids == ("s0",) and "18 words for 6.0 s" in reader["dense_line"].what
    assert reader["silent_stretch"].shot_ids == ("s1",) and "54 s go by" in reader["silent_stretch"].what
    assert reader["absent"].what == "Keeper is gone for 48 s"
    assert reader["camera_same"].directions[0].value == "dolly_in"
    relaxed = {f.kind for f in story(b, "", Tastes(captions=0.1, continuity=0.1))}
    assert "silent_stretch" not in relaxed  # tastes decide what counts as too long without words
    assert "dense_line" in relaxed  # 3 words a second is too fast even to hear


def test_describe_frames_words_what_the_animatic_frames_show(tmp_path):
    from agents.offline import OfflinePlanner
    from generation.animatic import AnimaticBackend

    b = OfflinePlanner().plan("A lighthouse keeper befriends a lost whale during the autumn storms", 0.25).value
    view = render_view(tmp_path, b.model_copy(update={"width": 320, "height": 180, "fps": 6}), AnimaticBackend())
    lines = describe_frames(view)
    assert list(lines) == [s.shot_id for s in b.shots()]
    assert all(re.match(r"^\d+\.\d s: ", t) and "no flashing" in t and "colours: " in t for t in lines.values())
    captions = sum("text-like marks along the bottom (a caption?)" in t for t in lines.values())
    assert captions >= len(lines) - 1  # the previz draws its caption there (a heuristic: busy pictures can hide it)
