"""Incremental iteration: a 24-shot film rendered in full, then with 1 and with 6 shots edited.

Only the edited shots render again (the others reuse their cached clips); the film is re-assembled.
Run for the animatic backend and, when the tests' tiny pipeline builder is present, a tiny random-weight
Wan through the real DiffusersBackend. Prints shots rendered and wall time as a fraction of the full render.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.common import edit_shots, film, studio, table


def iterate(st, n: int, edits: tuple[int, ...] = (1, 6), **film_kw) -> list[dict]:
    """Full render, then each edit count on top of the previous version. Rows: case, rendered, reused, seconds."""
    warm = st.create_from_storyboard(edit_shots(film(1, title="warm-up", **film_kw), [0], " warm-up")).project_id
    st.render(warm)  # load the model once, as a working session has it loaded
    board = film(n, **film_kw)
    pid = st.create_from_storyboard(board).project_id
    rows = []
    t = time.perf_counter()
    info = st.render(pid)
    full = time.perf_counter() - t
    rows.append(
        {
            "case": f"full render ({n} shots)",
            "rendered": info.rendered,
            "reused": info.reused,
            "seconds": round(full, 2),
            "vs_full": 1.0,
        }
    )
    for k, count in enumerate(edits):
        picked = [(i * 7 + 3 * k) % n for i in range(count)]  # spread over the film
        board = edit_shots(board, picked, suffix=f", take {k + 2}")
        st.save_storyboard(pid, board, None, f"edit {count} shot(s)")
        t = time.perf_counter()
        info = st.render(pid)
        secs = time.perf_counter() - t
        rows.append(
            {
                "case": f"edit {count} shot(s)",
                "rendered": info.rendered,
                "reused": info.reused,
                "seconds": round(secs, 2),
                "vs_full": round(secs / full, 3),
            }
        )
    return rows


def tiny_diffusers(quick: bool) -> dict:
    from generation.tiny import build_wan

    folder = Path(tempfile.mkdtemp(prefix="chief-bench-wan-"))
    t = time.perf_counter()
    build_wan(folder)
    build = time.perf_counter() - t
    st = studio(backend="diffusers", model=str(folder), steps=2, device="cpu")
    n = 8 if quick else 24
    rows = iterate(st, n, (1, 6) if n >= 6 else (1,), width=64, height=64, fps=8)
    return {
        "model": "tiny random-weight Wan (generation/tiny.py), 64x64, 9 frames, 2 steps, CPU",
        "build_seconds": round(build, 2),
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer shots for the diffusers case")
    ap.add_argument("--skip-diffusers", action="store_true")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = {"animatic": {"model": "animatic 128x72, 8 fps, 1 s shots", "rows": iterate(studio(), 24)}}
    result["diffusers"] = {"skipped": "--skip-diffusers"} if args.skip_diffusers else tiny_diffusers(args.quick)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, r in result.items():
            print(f"incremental iteration · {name}: {r.get('model', '')}")
            if "rows" in r:
                print(
                    table(
                        [
                            (x["case"], x["rendered"], x["reused"], x["seconds"], f"x{x['vs_full']:.2f}")
                            for x in r["rows"]
                        ],
                        ("case", "rendered", "reused", "seconds", "vs full"),
                    )
                )
            else:
                print(f"  not run: {r['skipped']}")
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
