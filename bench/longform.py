"""Long form: a 10-minute film against a local OpenAI-compatible server that answers every request after L seconds.

Planning wall / L with the scenes written in parallel and one at a time (concurrency 1); the panel's wall / L while
7 critics watch every shot in parts; and the prompt tokens each critic sent, next to what it would send if every
part carried the whole storyboard. Ratios from one run, side by side.
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time

from bench.common import studio, table

IDEA = "A lighthouse keeper and a one-legged gull weather a winter of storms, and the keeper learns to let go"
SMALL = {"width": 32, "height": 18, "fps": 2}  # the animatic renders 120 shots in seconds: the film is not measured
LISTING = re.compile(r'^(?:Scene ".*|- \[.*|  (?:narration|line|what its frames).*)$', re.M)  # the storyboard part


def _text(body: dict) -> str:
    return "\n".join(
        c if isinstance(c, str) else "\n".join(p.get("text", "") for p in c)
        for m in body["messages"]
        if m["role"] == "user"
        for c in [m["content"]]
    )


class Model:
    """Answers every role from what the request asks; records what each critic sent (estimated tokens)."""

    def __init__(self) -> None:
        self.sent: dict[str, list[tuple[int, int]]] = {}  # persona -> [(prompt tokens, storyboard listing tokens)]
        self.lock = threading.Lock()

    def __call__(self, body: dict) -> dict:
        from agents.content import estimate_tokens
        from storage.schema import DIMENSIONS

        name = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        text = _text(body)
        if name == "StoryOut":
            n = int(re.search(r"list of about (\d+) scenes", text).group(1))
            seconds = float(re.search(r"= (\d+) seconds", text).group(1))
            return {
                "title": "Keeper",
                "logline": "a keeper and a gull",
                "style_guide": "teal, amber, 35mm",
                "characters": [{"name": "Keeper", "description": "old man, yellow oilskin"}],
                "locations": [],
                "scenes": [
                    {
                        "title": f"Scene {i + 1}",
                        "purpose": "a beat",
                        "location": "",
                        "characters": ["Keeper"],
                        "seconds": seconds / n,
                        "summary": "the keeper and the storm",
                        "music": "low strings, 100 bpm",
                    }
                    for i in range(n)
                ],
            }
        if name == "SceneShotsOut":
            n, seconds = (
                float(x) for x in re.search(r"(\d+) shots \(between.*?add up to (\d+) seconds", text).groups()
            )
            return {
                "shots": [
                    {
                        "prompt": f"the keeper, old man in a yellow oilskin, on the rocks, shot {i}, storm light",
                        "duration": seconds / n,
                        "camera": "static",
                        "narration": "",
                        "dialogue": [{"character": "Keeper", "line": "Hold on.", "delivery": ""}],
                        "sounds": "wind, rain",
                        "characters": ["Keeper"],
                    }
                    for i in range(int(n))
                ]
            }
        ids = re.findall(r"^- \[([^\]]+)\] \d\d:", text, re.M)
        persona = body["messages"][0]["content"].split(",")[0]
        listing = sum(len(line) + 1 for line in LISTING.findall(text))
        with self.lock:
            self.sent.setdefault(persona, []).append((estimate_tokens(body["messages"]), listing // 4))
        notes = [{"shot_id": s, "note": "it holds"} for s in ids]
        if name == "WatchOut":
            return {
                "shot_notes": notes,
                "issues": [],
                "memory": {"so_far": f"up to {ids[-1]}", "engagement": 6, "would_stop_at": None},
            }
        return {
            "overall": 6.0,
            "scores": {d: 6.0 for d in DIMENSIONS},
            "shot_notes": notes,
            "top_issues": [],
            "keep_watching": True,
            "keep_watching_reason": "curious",
            "summary": "fine",
        }


def run(latency: float, minutes: float) -> dict:
    from bench.llm_server import LatencyServer

    model = Model()
    out: dict = {"L": latency, "minutes": minutes, "plan": []}
    with LatencyServer(model, latency=0.0) as server:
        base = studio(agents="llm", llm_base_url=server.base_url, llm_stream=False)
        t = time.perf_counter()
        base.create_project(IDEA, minutes, overrides=SMALL)  # warm-up: imports, first connections
        t = time.perf_counter()
        base.create_project(IDEA, minutes, overrides=SMALL)
        fixed = time.perf_counter() - t  # L = 0: what planning costs besides waiting (requests, parsing, the database)
        server.latency = latency
        for label, conc in (("scenes in parallel (concurrency 8)", 8), ("one scene at a time (concurrency 1)", 1)):
            st = studio(
                base.config.home, agents="llm", llm_base_url=server.base_url, llm_concurrency=conc, llm_stream=False
            )
            before, server.max_in_flight = server.requests, 0
            t = time.perf_counter()
            v = st.create_project(IDEA, minutes, overrides=SMALL)
            wall = time.perf_counter() - t
            out["plan"].append(
                {
                    "case": label,
                    "seconds": round(wall, 2),
                    "wall_over_L": round(wall / latency, 2),
                    "waiting_over_L": round((wall - fixed) / latency, 2),
                    "requests": server.requests - before,
                    "max_in_flight": server.max_in_flight,
                    "scenes": len(v.storyboard.scenes),
                    "shots": len(v.storyboard.shots()),
                    "duration": round(v.storyboard.duration(), 2),
                }
            )
        out["plan_fixed_seconds"] = round(fixed, 2)
        base.render(v.project_id)
        st = studio(base.config.home, agents="llm", llm_base_url=server.base_url, llm_stream=False)
        server.latency = 0.0
        t = time.perf_counter()
        st.critique(v.project_id)  # L = 0: frames tiled and sent, answers parsed, the database (the first panel run)
        panel_fixed = time.perf_counter() - t
        server.latency = latency
        model.sent.clear()
        before, server.max_in_flight = server.requests, 0
        t = time.perf_counter()
        crits = st.critique(v.project_id)
        wall = time.perf_counter() - t
    parts = [c.coverage.chunks for c in crits]
    whole = sum(listing for _, listing in next(iter(model.sent.values())))  # one critic's parts list every shot once
    per_critic = [sum(p for p, _ in sent) for sent in model.sent.values()]
    every_part = [p + (len(sent) - 1) * whole for p, sent in zip(per_critic, model.sent.values())]
    out["panel"] = {
        "critics": len(crits),
        "shots": len(v.storyboard.shots()),
        "parts_per_critic": max(parts),
        "requests": server.requests - before,
        "max_in_flight": server.max_in_flight,
        "seconds": round(wall, 2),
        "wall_over_L": round(wall / latency, 2),
        "fixed_seconds": round(panel_fixed, 2),
        "every_shot_seen": all(c.coverage.seen == c.coverage.shots for c in crits),
    }
    out["tokens"] = {
        "per_critic": round(sum(per_critic) / len(per_critic)),
        "whole_storyboard_every_part": round(sum(every_part) / len(every_part)),
        "storyboard_listing": whole,
        "ratio": round(sum(per_critic) / sum(every_part), 3),
    }
    return out


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--latency", type=float, default=1.0, help="the server's reply delay L in seconds")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--quick", action="store_true", help="L = 0.25 s")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(0.25 if args.quick else args.latency, args.minutes)
    if args.json:
        print(json.dumps(r, indent=2))
        return r
    print(f"long form · a {r['minutes']:g}-minute film, server delay L = {r['L']} s")
    print(
        table(
            [
                (
                    p["case"],
                    p["scenes"],
                    p["shots"],
                    p["requests"],
                    p["max_in_flight"],
                    p["seconds"],
                    f"{p['wall_over_L']:.1f}",
                    f"{p['waiting_over_L']:.1f}",
                )
                for p in r["plan"]
            ],
            ("planning", "scenes", "shots", "requests", "max in flight", "seconds", "wall / L", "(wall - fixed) / L"),
        )
    )
    print(f"(planning with L = 0 takes {r['plan_fixed_seconds']} s: requests, parsing, the database)")
    p = r["panel"]
    print(
        table(
            [
                (
                    p["critics"],
                    p["parts_per_critic"],
                    p["requests"],
                    p["max_in_flight"],
                    p["seconds"],
                    f"{p['wall_over_L']:.1f}",
                    p["every_shot_seen"],
                )
            ],
            ("critics", "parts each", "requests", "max in flight", "seconds", "wall / L", "every shot seen"),
        )
    )
    print(
        f"(the first panel run with L = 0 takes {p['fixed_seconds']} s: frames tiled and encoded, answers, the database)"
    )
    t = r["tokens"]
    print(
        table(
            [(t["per_critic"], t["whole_storyboard_every_part"], f"{t['ratio']:.2f}")],
            ("prompt tokens per critic", "with the whole storyboard in every part", "ratio"),
        )
    )
    return r


if __name__ == "__main__":
    main()
