"""Per-clip media cache: what a 1-shot edit costs next to a full render, render plus screening, in one run.

A 24-shot animatic film is rendered and screened in full; then one shot is edited and the new version rendered
and screened twice: with the picture cache (thumbnails and sampled frames cut once per clip, app/services/thumbnails.py)
as it is, and with that cache emptied first (so every clip is decoded again for the contact sheet and the
critics, as before the cache existed). Prints wall seconds and how many clips had pictures cut.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from bench.common import edit_shots, film, studio, table


def cut_count(st) -> int:
    from storage.db import ClipMediaRow

    with st.db.reader() as s:
        return len({r.clip_sha256 for r in s.query(ClipMediaRow)})


def empty_cache(st) -> None:
    from storage.db import ClipMediaRow

    with st.db.session() as s:
        s.query(ClipMediaRow).delete()


def measure(st, pid, version: int, case: str) -> dict:
    before = cut_count(st)
    t = time.perf_counter()
    info = st.render(pid, version)
    render_s = time.perf_counter() - t
    t = time.perf_counter()
    st.critique(pid, version)
    watch_s = time.perf_counter() - t
    return {
        "case": case,
        "rendered": info.rendered,
        "reused": info.reused,
        "clips_cut": cut_count(st) - before,
        "render_s": round(render_s, 2),
        "critique_s": round(watch_s, 2),
        "total_s": round(render_s + watch_s, 2),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="12 shots instead of 24")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    n = 12 if args.quick else 24
    st = studio()
    warm = st.create_from_storyboard(film(1, title="warm-up")).project_id
    st.render(warm)
    st.critique(warm)  # load what a working session has loaded (the diversity model is not used here)
    board = film(n)
    pid = st.create_from_storyboard(board).project_id
    rows = [measure(st, pid, 1, f"full render + screening ({n} shots)")]
    for k, (label, emptied) in enumerate(
        (("1-shot edit, picture cache kept", False), ("1-shot edit, picture cache emptied first", True))
    ):
        board = edit_shots(board, [(5 + 7 * k) % n], suffix=f", take {k + 2}")
        v, _ = st.save_storyboard(pid, board, None, f"edit {k}")
        if emptied:
            empty_cache(st)
        rows.append(measure(st, pid, v.number, label))
    full = rows[0]["total_s"]
    for r in rows:
        r["vs_full"] = round(r["total_s"] / full, 3)
    result = {"model": f"animatic 128x72, 8 fps, 1 s shots, {n} shots; offline critics (7 personas)", "rows": rows}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(f"per-clip media cache · {result['model']}")
        print(
            table(
                [
                    (
                        r["case"],
                        r["rendered"],
                        r["reused"],
                        r["clips_cut"],
                        r["render_s"],
                        r["critique_s"],
                        r["total_s"],
                        f"x{r['vs_full']:.2f}",
                    )
                    for r in rows
                ],
                ("case", "rendered", "reused", "clips cut", "render s", "critique s", "total s", "vs full"),
            )
        )
    return result


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
