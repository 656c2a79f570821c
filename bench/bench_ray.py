"""A 24-shot animatic render: one process vs a local Ray cluster with 2 CPU workers.

Both render the same storyboard into fresh homes (nothing cached). Prints the wall times, the Ray
start-up (cluster + warm workers, paid once per session), the per-shot time and the ratio, plus a
check that both produced the same clips. On a 2-core machine expect little gain: the coordinator,
the two workers and ffmpeg share two cores. docs/cluster.md turns the per-shot time into an estimate
for N GPUs.

    .venv/bin/python -m bench.bench_ray [--shots 24] [--size 640x360] [--seconds 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from bench.common import film, machine, studio, table


def run(shots: int, width: int, height: int, seconds: float, fps: int) -> dict:
    import ray

    from app.cluster import RayBackend

    board = film(shots, seconds=seconds, width=width, height=height, fps=fps)
    out: dict = {
        "machine": machine(),
        "shots": shots,
        "size": f"{width}x{height}",
        "seconds_per_shot": seconds,
        "fps": fps,
    }

    st = studio()
    pid = st.create_from_storyboard(board).project_id
    t = time.perf_counter()
    single = st.render(pid)
    out["single_s"] = round(time.perf_counter() - t, 2)
    t = time.perf_counter()
    st.render(pid)  # every clip reused: what is left is assembly and bookkeeping
    out["assembly_s"] = round(time.perf_counter() - t, 2)

    t = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING)
    rb = RayBackend(studio().config, num_workers=2)
    out["ray_startup_s"] = round(time.perf_counter() - t, 2)
    try:
        rs = studio(backend_obj=rb)
        rpid = rs.create_from_storyboard(board).project_id
        t = time.perf_counter()
        on_ray = rs.render(rpid)
        out["ray_s"] = round(time.perf_counter() - t, 2)
    finally:
        rb.close()
        ray.shutdown()
    out["same_clips"] = [r["sha256"] for r in single.shots] == [r["sha256"] for r in on_ray.shots]
    out["per_shot_single_s"] = round((out["single_s"] - out["assembly_s"]) / shots, 3)
    out["speedup"] = round(out["single_s"] / out["ray_s"], 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shots", type=int, default=24)
    ap.add_argument("--size", default="640x360")
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--fps", type=int, default=12)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    w, h = (int(x) for x in args.size.lower().split("x"))
    r = run(args.shots, w, h, args.seconds, args.fps)
    if args.json:
        print(json.dumps(r, indent=2))
        return
    m = r["machine"]
    print(f"machine: {m['nproc']} cores, {m['cpu']}, {m['ram']}")
    print(f"film: {r['shots']} shots of {r['seconds_per_shot']} s at {r['size']}, {r['fps']} fps (animatic)\n")
    print(
        table(
            [("one process", r["single_s"], "1.00"), ("Ray, 2 CPU workers", r["ray_s"], f"{r['speedup']:.2f}")],
            ("render (incl. assembly)", "seconds", "speed-up"),
        )
    )
    print(
        f"\nper shot (one process): {r['per_shot_single_s']} s · assembly + bookkeeping: {r['assembly_s']} s · "
        f"Ray start-up (once): {r['ray_startup_s']} s · identical clips: {r['same_clips']}"
    )


if __name__ == "__main__":
    main()
