"""What a render costs when little or nothing changed, against the first render, side by side in one run: a
`--minutes` film (bench.audio_edit's board: 5-s shots, a line and sounds each, a cue a 30-s scene) rendered by the
Studio with the animatic and Piper into an empty home and sound cache; then rendered again with nothing changed; then
after one line of one shot is changed. Reported for each: the whole render's seconds, and where they went (the
clips, the film's sound, the cut with its measurement and sidecars), and each as a ratio of the first render.

python -m bench.norender [--minutes 3] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench.audio_edit import board
from bench.common import machine, studio


def _timed(obj, name: str, spent: dict[str, float], label: str) -> None:
    inner = getattr(obj, name)

    def call(*a, **kw):
        t = time.perf_counter()
        try:
            return inner(*a, **kw)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t

    setattr(obj, name, call)


def one(minutes: float) -> dict:
    home = Path(tempfile.mkdtemp(prefix="chief-bench-norender-"))
    st = studio(home, sound_cache=home / "sound")
    spent: dict[str, float] = {}
    _timed(st._audio, "film_sound", spent, "sound")
    _timed(st._rendering.film, "assemble", spent, "cut")  # the sound is inside it: subtracted below
    b = board(minutes)
    v = st.create_from_storyboard(b)
    runs = {}
    for name in ("first render", "nothing changed", "one line changed"):
        if name == "one line changed":
            middle = b.shots()[len(b.shots()) // 2].shot_id
            v, _ = st.edit_shot(v.project_id, middle, [("line.1", "Not tonight, the boats stay in.")], v.number)
        spent.clear()
        t = time.perf_counter()
        r = st.render(v.project_id, v.number)
        whole = time.perf_counter() - t
        sound, cut = spent.get("sound", 0.0), spent.get("cut", 0.0)
        runs[name] = {
            "render_seconds": round(whole, 2),
            "sound_seconds": round(sound, 2),
            "cut_seconds": round(cut - sound, 2),  # the cut, its measurement and the sidecars, less the sound
            "other_seconds": round(whole - cut, 2),  # clips (cached after the first), signatures, the record
            "label": r.label.rsplit(" · ", 1)[-1],
        }
    st.db.close()
    first = runs["first render"]["render_seconds"]
    for x in runs.values():
        x["over_first"] = round(x["render_seconds"] / first, 3)
    return {"film_minutes": minutes, "shots": len(b.shots()), "runs": runs}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--minutes", default="3", help="film lengths, comma-separated")
    ap.add_argument("--quick", action="store_true", help="one minute only")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    lengths = [1.0] if args.quick else [float(m) for m in args.minutes.split(",")]
    out = {"machine": machine(), "films": [one(m) for m in lengths]}
    if args.json:
        print(json.dumps(out, indent=2))
        return out
    for f in out["films"]:
        print(f"{f['film_minutes']:g}-minute film, {f['shots']} shots")
        for name, x in f["runs"].items():
            print(
                f"  {name}: {x['render_seconds']:.2f} s = {x['over_first']:.3f} of the first render "
                f"(sound {x['sound_seconds']:.2f} s, cut {x['cut_seconds']:.2f} s, the rest {x['other_seconds']:.2f} s)"
            )
    return out


if __name__ == "__main__":
    main()
