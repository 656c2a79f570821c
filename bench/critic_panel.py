"""Critic panel concurrency: 6 personas watch the film through a local OpenAI-compatible server that answers
after a fixed delay L. Wall time / L with the panel run concurrently and sequentially, side by side."""

from __future__ import annotations

import argparse
import json
import time

from bench.common import film, studio, table

PANEL = ["anime_arthouse_tokyo", "captions_reader", "film_critic", "genre_fan", "parent_with_kids", "phone_commuter"]


def answer() -> dict:
    from storage.schema import DIMENSIONS

    return {
        "overall": 6.0,
        "scores": {d: 6.0 for d in DIMENSIONS},
        "shot_notes": [],
        "top_issues": [],
        "keep_watching": True,
        "keep_watching_reason": "curious",
        "summary": "fine",
    }


def run(delay: float) -> dict:
    from bench.llm_server import LatencyServer

    base = studio()
    pid = base.create_from_storyboard(film(6), panel=PANEL).project_id
    base.render(pid)
    rows = []
    with LatencyServer(lambda body: answer(), latency=0.0) as server:
        st = studio(base.config.home, agents="llm", llm_base_url=server.base_url, llm_concurrency=6)
        st.critique(pid)  # warm-up: imports, first connection
        t = time.perf_counter()
        st.critique(pid)  # L = 0: what a panel run costs besides waiting (frame sampling, requests, the database)
        fixed = time.perf_counter() - t
        server.latency = delay
        for label, conc in (("concurrent (6 at once)", 6), ("sequential (1 at a time)", 1)):
            st = studio(base.config.home, agents="llm", llm_base_url=server.base_url, llm_concurrency=conc)
            server.max_in_flight = 0
            t = time.perf_counter()
            crits = st.critique(pid)
            wall = time.perf_counter() - t
            assert len(crits) == len(PANEL)
            rows.append(
                {
                    "case": label,
                    "concurrency": conc,
                    "seconds": round(wall, 3),
                    "wall_over_L": round(wall / delay, 2),
                    "waiting_over_L": round((wall - fixed) / delay, 2),
                    "max_in_flight": server.max_in_flight,
                }
            )
    return {"personas": len(PANEL), "L": delay, "fixed_seconds": round(fixed, 3), "rows": rows}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--delay", type=float, default=2.0, help="the server's reply delay L in seconds")
    ap.add_argument("--quick", action="store_true", help="L = 0.5 s")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    result = run(0.5 if args.quick else args.delay)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print(
            f"critic panel · {result['personas']} personas, server delay L = {result['L']} s; "
            f"the same panel with L = 0 takes {result['fixed_seconds']} s (frames, requests, database)"
        )
        print(
            table(
                [
                    (
                        r["case"],
                        r["seconds"],
                        f"{r['wall_over_L']:.2f}",
                        f"{r['waiting_over_L']:.2f}",
                        r["max_in_flight"],
                    )
                    for r in result["rows"]
                ],
                ("case", "seconds", "wall / L", "(wall - fixed) / L", "max in flight"),
            )
        )
    return result


if __name__ == "__main__":
    main()
