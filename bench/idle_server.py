"""An idle `chief serve`: the CPU it takes with no page open, with CHIEF's queue polling (app.ui.IDLE_POLL_S,
PROGRESS_POLL_S) against Gradio's own on Linux (every 1 ms for work, every 10 ms for progress). Both servers are
launched through the product's own `launch`, run side by side, and are measured over the same seconds.

python -m bench.idle_server [--seconds S] [--quick] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import urllib.request

from bench.common import OFFLINE_ENV, cpu_seconds, free_port, table

GRADIO_LINUX = (0.001, 0.01)  # gradio/queueing.py: sleep_when_free, progress_update_sleep_when_free off Windows

SERVE = """
import sys, time
import app.ui as ui
from bench.common import studio
if sys.argv[1] == "gradio":
    ui.IDLE_POLL_S, ui.PROGRESS_POLL_S = {gradio}
ui.launch(studio(), port=int(sys.argv[2]), prevent_thread_lock=True, quiet=True)
print("ready", flush=True)
time.sleep(3600)
"""


def run(seconds: float) -> dict:
    env = {**os.environ, **OFFLINE_ENV}
    procs: dict[str, subprocess.Popen] = {}
    ports = {kind: free_port() for kind in ("gradio", "chief")}
    code = SERVE.format(gradio=GRADIO_LINUX)
    try:
        for kind, port in ports.items():
            procs[kind] = subprocess.Popen(
                [sys.executable, "-c", code, kind, str(port)], env=env, stdout=subprocess.PIPE, text=True
            )
        for kind, proc in procs.items():
            if proc.stdout is None or proc.stdout.readline().strip() != "ready":
                raise RuntimeError(f"the server with {kind}'s polling did not start")
            urllib.request.urlopen(f"http://127.0.0.1:{ports[kind]}/config", timeout=60).read()
        time.sleep(2.0)  # past start-up
        before = {k: cpu_seconds(p.pid) for k, p in procs.items()}
        time.sleep(seconds)
        used = {k: cpu_seconds(p.pid) - before[k] for k, p in procs.items()}
    finally:
        for proc in procs.values():
            proc.kill()
            proc.wait()
    share = {k: v / seconds for k, v in used.items()}
    return {
        "seconds": seconds,
        "cpu_share_gradio_polling": round(share["gradio"], 4),
        "cpu_share_chief_polling": round(share["chief"], 4),
        "ratio": round(share["gradio"] / max(share["chief"], 1e-9), 1),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--quick", action="store_true", help="10 s")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(10.0 if args.quick else args.seconds)
    if args.json:
        print(json.dumps(result))
    else:
        rows = [
            ("Gradio's (1 ms / 10 ms)", f"{100 * result['cpu_share_gradio_polling']:.1f}%"),
            ("CHIEF's (20 ms / 100 ms)", f"{100 * result['cpu_share_chief_polling']:.1f}%"),
        ]
        print(table(rows, ("queue polling of an idle server", "of one core")))
        print(f"\nan idle server takes {result['ratio']}x less CPU with CHIEF's polling ({result['seconds']:.0f} s)")
    return result


if __name__ == "__main__":
    main()
