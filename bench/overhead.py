"""Orchestration overhead: one iteration of a 120-shot, 10-minute film (render from scratch, critique, refine,
accept, re-render the edited shots). Time inside the backend and inside the (offline) agents is measured
separately; the rest (planning the work, hashing, the database, frame sampling, assembly) is ours."""

from __future__ import annotations

import argparse
import json
import time

from bench.common import TimedBackend, film, studio, table


class TimedRole:
    """Wraps an agent role and adds up the seconds spent in it."""

    def __init__(self, inner, clock: dict, key: str) -> None:
        self.inner, self.clock, self.key, self.mode = inner, clock, key, inner.mode

    def __getattr__(self, name):
        fn = getattr(self.inner, name)

        def timed(*a, **kw):
            t = time.perf_counter()
            try:
                return fn(*a, **kw)
            finally:
                self.clock[self.key] = self.clock.get(self.key, 0.0) + time.perf_counter() - t
        return timed


def run(shots: int, seconds: float) -> dict:
    from app.factory import Agents
    from agents.offline import OfflineCritic, OfflinePlanner, OfflineRefiner
    from generation.animatic import AnimaticBackend

    clock: dict[str, float] = {}
    backend = TimedBackend(AnimaticBackend())
    agents = Agents(OfflinePlanner(), TimedRole(OfflineCritic(), clock, "critic"),
                    TimedRole(OfflineRefiner(), clock, "refiner"), "offline")
    st = studio(backend_obj=backend, agents_obj=agents)
    pid = st.create_from_storyboard(film(shots, seconds=seconds)).project_id
    steps = {}
    t0 = time.perf_counter()
    for name, action in (("render", lambda: st.render(pid)), ("critique", lambda: st.critique(pid)),
                         ("note", lambda: st.add_note(pid, "make the opening brighter", "s000")),
                         ("refine", lambda: st.refine(pid)), ("accept", lambda: st.accept(pid)),
                         ("re-render", lambda: st.render(pid))):
        t = time.perf_counter()
        action()
        steps[name] = round(time.perf_counter() - t, 3)
    total = time.perf_counter() - t0
    inside_backend = backend.seconds
    inside_agents = sum(clock.values())
    ours = total - inside_backend - inside_agents
    return {"shots": shots, "film_minutes": round(shots * seconds / 60, 1), "iteration_seconds": round(total, 2),
            "steps": steps, "backend_seconds": round(inside_backend, 2), "backend_calls": backend.calls,
            "agents_seconds": round(inside_agents, 2), "orchestration_seconds": round(ours, 2),
            "orchestration_fraction": round(ours / total, 3)}


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
        print(f"iteration {r['iteration_seconds']} s = backend {r['backend_seconds']} s ({r['backend_calls']} renders)"
              f" + agents {r['agents_seconds']} s + ours {r['orchestration_seconds']} s"
              f" → ours is {100 * r['orchestration_fraction']:.1f}% of the iteration")
    return r


if __name__ == "__main__":
    main()
