"""An open page of the app that nobody touches: the CPU Chromium spends on it with CHIEF's frame governor
(app/ui/frames.js: 4 frames a second once nothing has changed for 1 s) and without it (the page's
requestAnimationFrame made read-only before any script runs, so the governor cannot take it: Gradio 6.31's loops
then ask for every frame). One app, launched through the product's own `launch`; one Chromium; the two kinds of
page are measured in turn, each alone in the browser, over the same number of seconds, twice.

python -m bench.idle_page [--seconds S] [--quick] [--json]   (needs /usr/bin/chromium and playwright)
"""

from __future__ import annotations

import argparse
import json
import os
import time

from bench.common import cpu_seconds, free_port, studio, table

QUIET = "performance.now() - window.chiefFrames.quietSince() > 1500"  # the governor watches either way
UNGOVERNED = "Object.defineProperty(window, 'requestAnimationFrame', {writable: false});"
COUNT = "window.__asked = 0; const ask = window.requestAnimationFrame.bind(window);" + (
    "window.requestAnimationFrame = (f) => (window.__asked++, ask(f));"
)


def run(seconds: float) -> dict:
    from playwright.sync_api import sync_playwright

    from app.ui import launch

    port = free_port()
    demo = launch(studio(), port=port, prevent_thread_lock=True, quiet=True)
    url = f"http://127.0.0.1:{port}/"
    used: dict[str, list[float]] = {"governed": [], "ungoverned": []}
    asked: dict[str, list[int]] = {"governed": [], "ungoverned": []}
    pw = sync_playwright().start()
    try:
        browser = pw.chromium.launch(
            executable_path="/usr/bin/chromium", headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        for _ in range(2):
            for kind in used:
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                page = context.new_page()
                page.add_init_script(COUNT + (UNGOVERNED if kind == "ungoverned" else ""))  # counted either way
                page.goto(url)
                page.wait_for_selector("body[data-chief-ready]", state="attached", timeout=120_000)
                # past the page's start-up events (its last, an announcement for screen readers, is cleared 1 s
                # after it is made, some 7 s after the page opens): nothing on the page has changed for 1.5 s
                page.wait_for_function(QUIET, timeout=120_000)
                n0, c0 = page.evaluate("window.__asked"), cpu_seconds(os.getpid(), descendants=True)
                time.sleep(seconds)
                used[kind].append(cpu_seconds(os.getpid(), descendants=True) - c0)
                asked[kind].append(page.evaluate("window.__asked") - n0)
                if (page.evaluate("window.chiefFrames.counts.deferred") > 0) != (kind == "governed"):
                    raise RuntimeError(f"the {kind} page's frames did not go the way it names")
                context.close()
        browser.close()
    finally:
        pw.stop()
        demo.close()
    share = {k: sum(v) / (len(v) * seconds) for k, v in used.items()}
    return {
        "seconds": seconds,
        "cpu_share_ungoverned": round(share["ungoverned"], 4),
        "cpu_share_governed": round(share["governed"], 4),
        "frames_per_s_ungoverned": round(sum(asked["ungoverned"]) / (2 * seconds), 1),
        "frames_per_s_governed": round(sum(asked["governed"]) / (2 * seconds), 1),
        "ratio": round(share["ungoverned"] / max(share["governed"], 1e-9), 1),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--quick", action="store_true", help="5 s a page")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(5.0 if args.quick else args.seconds)
    if args.json:
        print(json.dumps(result))
    else:
        rows = [
            (
                "without (every frame)",
                f"{100 * result['cpu_share_ungoverned']:.1f}%",
                result["frames_per_s_ungoverned"],
            ),
            ("with the governor", f"{100 * result['cpu_share_governed']:.1f}%", result["frames_per_s_governed"]),
        ]
        print(table(rows, ("an idle page of the app", "Chromium, of one core", "frames asked for a second")))
        print(f"\nan idle page takes {result['ratio']}x less of Chromium's CPU with the governor")
    return result


if __name__ == "__main__":
    main()
