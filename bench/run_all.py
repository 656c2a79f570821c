"""`make bench`: every benchmark in one run. --quick for a smoke run (minutes), --json for tracking.

python -m bench.run_all [--quick] [--json] [--only incremental,clip_media,critic_panel,longform,overhead,assembly,scale,audio_mix,audio_edit,norender,loudness_silence,idle_server,idle_page,gpu]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time

from bench.common import OFFLINE_ENV, machine


def _assembly(quick: bool, as_json: bool) -> dict:
    from bench import bench_assembly

    args = ["--minutes", "1" if quick else "10"] + (["--json"] if as_json else [])
    return bench_assembly.main(args)


def _gpu(quick: bool, as_json: bool) -> dict:
    try:
        import torch
    except ImportError as e:
        return {"skipped": f"torch not importable ({e})"}
    if not torch.cuda.is_available():
        return {"skipped": "no CUDA GPU on this machine (bench/gpu_diffusers.py needs one)"}
    from bench import gpu_diffusers

    return gpu_diffusers.main((["--tiny"] if quick else []) + (["--json"] if as_json else []))


def _module(name: str):
    def run(quick: bool, as_json: bool) -> dict:
        import importlib

        mod = importlib.import_module(f"bench.{name}")
        return mod.main((["--quick"] if quick else []) + (["--json"] if as_json else []))

    return run


SUITE = {
    "incremental": _module("incremental"),
    "clip_media": _module("clip_media"),
    "critic_panel": _module("critic_panel"),
    "longform": _module("longform"),
    "overhead": _module("overhead"),
    "assembly": _assembly,
    "scale": _module("scale"),
    "audio_mix": _module("audio_mix"),
    "audio_edit": _module("audio_edit"),
    "norender": _module("norender"),
    "loudness_silence": _module("loudness_silence"),
    "idle_server": _module("idle_server"),
    "idle_page": _module("idle_page"),
    "gpu": _gpu,
}


def main(argv: list[str] | None = None) -> dict:
    import os

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout (progress on stderr)")
    ap.add_argument("--only", help="comma-separated names: " + ",".join(SUITE))
    args = ap.parse_args(argv)
    os.environ.update(OFFLINE_ENV)
    names = args.only.split(",") if args.only else list(SUITE)
    result = {"machine": machine(), "quick": args.quick, "results": {}, "seconds": {}}
    if not args.json:
        m = result["machine"]
        print(f"machine: {m['nproc']} cores · {m['cpu']} · {m['ram']} RAM · python {m['python']}\n")
    for name in names:
        t = time.perf_counter()
        print(f"== {name}", file=sys.stderr if args.json else sys.stdout, flush=True)
        try:
            if args.json:  # the scenarios print their own JSON; keep stdout to the one document
                with contextlib.redirect_stdout(io.StringIO()):
                    result["results"][name] = SUITE[name](args.quick, True)
            else:
                result["results"][name] = SUITE[name](args.quick, False)
        except Exception as e:  # one broken scenario does not hide the others' figures
            result["results"][name] = {"error": f"{type(e).__name__}: {e}"}
            print(f"   failed: {type(e).__name__}: {e}", file=sys.stderr)
        result["seconds"][name] = round(time.perf_counter() - t, 1)
        if not args.json:
            print()
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    return result


if __name__ == "__main__":
    main()
