"""A one-line edit against the first render, at 1, 3 and 10 minutes, side by side in one run: each `--minutes`
film (shots of 5 s in scenes of 30 s; each shot a line by one of four cast Piper voices and sounds, each scene a
music cue) is rendered by the Studio with the animatic and Piper into an empty home and sound cache; then one line
of one shot is changed (`Studio.edit_shot`, `line.1=`) and the film rendered again. Reported for both: the whole
render's seconds (picture, sound, the cut, the film's measurement: the whole process but starting Python), the
seconds in `Audio.film_sound` (voicing, cues, effects, the mix), the pieces and parts of the mix made and reused
(the render's own `audio` record), and the edit's cost over the first render's.

python -m bench.audio_edit [--minutes 1,3,10] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.audio_mix import CUES, LINES
from bench.common import machine, studio

NAMES = ["Mara", "Tom", "Ines", "Oskar"]
SOUNDS = ("rain on the roof", "wind over the cliff", "sea against the rocks", "a quiet room", "a crowd in the square")


def board(minutes: float):
    from storage.schema import Character, Line, Scene, Shot, Storyboard

    n = round(minutes * 60 / 5)
    shots = [
        Shot(
            shot_id=f"s{i:03d}",
            prompt=f"shot {i}: {NAMES[i % 4]} by the harbour, view {i}",
            duration=5.0,
            seed=i,
            characters=[NAMES[i % 4]],
            dialogue=[Line(character=NAMES[i % 4], line=f"{LINES[i % len(LINES)]} ({i})")],
            sounds=SOUNDS[i % len(SOUNDS)],
        )
        for i in range(n)
    ]
    scenes = [
        Scene(scene_id=f"sc{k:02d}", music=CUES[k % len(CUES)], shots=shots[k * 6 : (k + 1) * 6])
        for k in range((n + 5) // 6)
    ]
    return Storyboard(
        title="bench sound",
        characters=[Character(name=c, description=f"{c}, a sailor") for c in NAMES],
        scenes=scenes,
        width=64,
        height=36,
        fps=4,
    )


def one(minutes: float) -> dict:
    """The first render and the render after a one-line edit of a `minutes` film, in a fresh home."""
    home = Path(tempfile.mkdtemp(prefix="chief-bench-sound-"))
    st = studio(home, sound_cache=home / "sound")  # an empty cache: the first render voices and mixes everything
    audio = st._audio  # the render's own Audio service, timed where FilmAssembler calls it
    spent: list[float] = []
    inner = audio.film_sound

    def timed(*a, **kw):
        t = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            spent.append(time.perf_counter() - t)

    audio.film_sound = timed
    b = board(minutes)
    v = st.create_from_storyboard(b)
    runs = {}
    for name in ("first render", "after a one-line edit"):
        if name != "first render":
            middle = b.shots()[len(b.shots()) // 2].shot_id
            v, _ = st.edit_shot(v.project_id, middle, [("line.1", "Not tonight, the boats stay in.")], v.number)
        t = time.perf_counter()
        r = st.render(v.project_id, v.number)
        a = r.audio
        assert a is not None
        runs[name] = {
            "render_seconds": round(time.perf_counter() - t, 2),
            "sound_seconds": round(spent[-1], 2),
            "clips_rendered": r.rendered,
            "lines_voiced": a.lines_voiced,
            "lines_reused": a.lines_reused,
            "cues_made": a.cues_made,
            "cues_reused": a.cues_reused,
            "parts_mixed": a.parts_mixed,
            "parts_reused": a.parts_reused,
            "loudness_lufs": a.loudness_lufs,
        }
    st.db.close()
    first, edit = runs["first render"], runs["after a one-line edit"]
    return {
        "film_minutes": minutes,
        "shots": len(b.shots()),
        "scenes": len(b.scenes),
        "label": a.label,
        "runs": runs,
        "edit_over_first_render": round(edit["render_seconds"] / first["render_seconds"], 3),
        "edit_over_first_sound": round(edit["sound_seconds"] / first["sound_seconds"], 3),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", default="1,3,10", help="film lengths, comma-separated")
    ap.add_argument("--quick", action="store_true", help="one minute only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    lengths = [1.0] if args.quick else [float(m) for m in args.minutes.split(",")]
    out = {"machine": machine(), "films": [one(m) for m in lengths]}
    if args.json:
        print(json.dumps(out, indent=2))
        return out
    for f in out["films"]:
        print(f"{f['film_minutes']:g}-minute film, {f['shots']} shots, {f['scenes']} scenes ({f['label']})")
        for name, x in f["runs"].items():
            print(
                f"  {name}: render {x['render_seconds']:.2f} s (sound {x['sound_seconds']:.2f} s, "
                f"{x['clips_rendered']} clips rendered); lines voiced {x['lines_voiced']}, reused {x['lines_reused']}; "
                f"cues and effects made {x['cues_made']}, reused {x['cues_reused']}; "
                f"parts mixed {x['parts_mixed']}, reused {x['parts_reused']}; {x['loudness_lufs']:.1f} LUFS"
            )
        print(
            f"  the edit / the first render: {f['edit_over_first_render']:.3f} (whole render), "
            f"{f['edit_over_first_sound']:.3f} (sound)"
        )
    return out


if __name__ == "__main__":
    main()
