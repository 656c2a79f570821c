"""The film's sound from scratch vs after a one-line edit, in one run: a `--minutes` film (shots of 5 s in scenes of
30 s; each shot a line by one of four cast Piper voices and sounds, each scene a music cue) rendered by the Studio
with the animatic and Piper into an empty sound cache; then one line of one shot is changed (`Studio.edit_shot`,
`line.1=`) and the film rendered again. Reported for both: seconds in `Audio.film_sound` (voicing, cues, effects,
the mix), the whole render's seconds, and the pieces made and reused (the render's own `audio` record).

python -m bench.audio_edit [--minutes 10] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.audio_mix import CUES, LINES
from bench.common import studio

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


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--quick", action="store_true", help="one minute")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    minutes = 1.0 if args.quick else args.minutes
    home = Path(tempfile.mkdtemp(prefix="chief-bench-sound-"))
    st = studio(home, sound_cache=home / "sound")  # an empty cache: "from scratch" voices every line
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
    for name in ("from scratch", "after a one-line edit"):
        if name != "from scratch":
            middle = b.shots()[len(b.shots()) // 2].shot_id
            v, _ = st.edit_shot(v.project_id, middle, [("line.1", "Not tonight, the boats stay in.")], v.number)
        t = time.perf_counter()
        r = st.render(v.project_id, v.number)
        a = r.audio
        assert a is not None
        runs[name] = {
            "sound_seconds": round(spent[-1], 2),
            "render_seconds": round(time.perf_counter() - t, 2),
            "clips_rendered": r.rendered,
            "lines_voiced": a.lines_voiced,
            "lines_reused": a.lines_reused,
            "cues_made": a.cues_made,
            "cues_reused": a.cues_reused,
            "loudness_lufs": a.loudness_lufs,
        }
    scratch, edit = runs["from scratch"], runs["after a one-line edit"]
    out = {
        "film_minutes": minutes,
        "shots": len(b.shots()),
        "scenes": len(b.scenes),
        "label": a.label,
        "runs": runs,
        "ratio_sound_scratch_vs_edit": round(scratch["sound_seconds"] / edit["sound_seconds"], 2),
    }
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(f"{minutes:g}-minute film, {out['shots']} shots, {out['scenes']} scenes ({a.label})")
        for name, x in runs.items():
            print(
                f"  {name}: sound {x['sound_seconds']:.2f} s (render {x['render_seconds']:.2f} s, "
                f"{x['clips_rendered']} clips rendered); lines voiced {x['lines_voiced']}, reused {x['lines_reused']}; "
                f"cues and effects made {x['cues_made']}, reused {x['cues_reused']}"
            )
        print(f"  sound from scratch / after the edit: ×{out['ratio_sound_scratch_vs_edit']}")
    st.db.close()
    return out


if __name__ == "__main__":
    main()
