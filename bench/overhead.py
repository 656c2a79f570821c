"""Orchestration overhead: one iteration of a 120-shot, 10-minute film (render from scratch, critique, refine,
accept, re-render the edited shots), as wall time. Every span spent inside the backend or an (offline) agent
is recorded; the wall time covered by none of them (planning the work, hashing, the database, frame
sampling, assembly) is ours. Concurrent critics overlap, so spans are merged, never summed."""

from __future__ import annotations

import argparse
import json
import time

from bench.common import Intervals, TimedBackend, film, studio, table


class TimedRole:
    """Wraps an agent role and records the wall-clock spans of its calls."""

    def __init__(self, inner, spans: Intervals) -> None:
        self.inner, self.spans, self.mode = inner, spans, inner.mode

    def __getattr__(self, name):
        fn = getattr(self.inner, name)

        def timed(*a, **kw):
            with self.spans.span():
                return fn(*a, **kw)

        return timed


def run(shots: int, seconds: float) -> dict:
    from agents.offline import OfflineCritic, OfflinePlanner, OfflineRefiner
    from app.factory import Agents
    from generation.animatic import AnimaticBackend

    in_backend, in_agents = Intervals(), Intervals()
    backend = TimedBackend(AnimaticBackend(), in_backend)
    agents = Agents(
        OfflinePlanner(), TimedRole(OfflineCritic(), in_agents), TimedRole(OfflineRefiner(), in_agents), "offline"
    )
    st = studio(backend_obj=backend, agents_obj=agents)
    pid = st.create_from_storyboard(film(shots, seconds=seconds)).project_id
    steps = {}
    t0 = time.perf_counter()
    for name, action in (
        ("render", lambda: st.render(pid)),
        ("critique", lambda: st.critique(pid)),
        ("note", lambda: st.add_note(pid, "make the opening brighter", "s000")),
        ("refine", lambda: st.refine(pid)),
        ("accept", lambda: st.accept(pid)),
        ("re-render", lambda: st.render(pid)),
    ):
        t = time.perf_counter()
        action()
        steps[name] = round(time.perf_counter() - t, 3)
    total = time.perf_counter() - t0
    everything = Intervals()
    everything.spans = in_backend.spans + in_agents.spans
    inside_backend, inside_agents = in_backend.covered(t0), in_agents.covered(t0)
    ours = total - everything.covered(t0)  # wall time inside no model call
    return {
        "shots": shots,
        "film_minutes": round(shots * seconds / 60, 1),
        "iteration_seconds": round(total, 2),
        "steps": steps,
        "backend_seconds": round(inside_backend, 2),
        "backend_calls": backend.calls,
        "agents_seconds": round(inside_agents, 2),
        "orchestration_seconds": round(ours, 2),
        "orchestration_fraction": round(ours / total, 3),
    }


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="24 shots instead of 120")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    r = run(24 if args.quick else 120, 5.0)
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"orchestration overhead · {r['shots']} shots, {r['film_minutes']} min film (animatic 128x72, 8 fps)")
        print(table([(k, v) for k, v in r["steps"].items()], ("step", "seconds")))
        print(
            f"iteration {r['iteration_seconds']} s = backend {r['backend_seconds']} s ({r['backend_calls']} renders)"
            f" + agents {r['agents_seconds']} s + ours {r['orchestration_seconds']} s"
            f" → ours is {100 * r['orchestration_fraction']:.1f}% of the iteration"
        )
    return r


if __name__ == "__main__":
    main()
