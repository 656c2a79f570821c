"""What the web server keeps per page and API session, bounded.

Gradio keeps a `SessionState` for every session hash that ever sent an event (a page load, a gradio_client call):
a copy of every component's config, ~1.9 MB a page of CHIEF's and ~0.6 MB an API call's, until 10,000 sessions by
default. A class reloading pages all day grew a server from 177 MB to 3.5 GB. Here:

- `state_session_capacity` (`Config.web_sessions`) caps how many sessions are kept; the least recently used goes
  first (Gradio's own LRU in `StateHolder.update`).
- `Sweeper` drops the state of a page whose tab closed (Gradio marks it when the page's heartbeat ends) once it has
  sent nothing for `CLOSED_GRACE` seconds: a reload gets a new session anyway, and Gradio itself would keep the
  closed page's state for an hour.

What a page needs across reloads is not kept here: the project, version and screen live in the browser
(BrowserState) and the work in the database, so a dropped session costs nothing but its copy of the config.
"""

from __future__ import annotations

import datetime
import threading

CLOSED_GRACE = 60.0  # s a closed page's state is kept after its last event
SWEEP_EVERY = 30.0  # s between sweeps


def sweep(holder, grace: float = CLOSED_GRACE) -> int:
    """Drop the state of every closed session idle for `grace` seconds; returns how many were dropped."""
    cutoff = datetime.datetime.now() - datetime.timedelta(seconds=grace)
    dropped = 0
    with holder.lock:
        for sid in list(holder.session_data):
            state, last = holder.session_data[sid], holder.time_last_used.get(sid)
            if state.is_closed and (last is None or last < cutoff):
                holder.delete_state(sid)  # a gr.State's delete_callback runs, as when Gradio expires it
                del holder.session_data[sid]
                holder.time_last_used.pop(sid, None)
                dropped += 1
    return dropped


class Sweeper:
    """A daemon thread that sweeps `demo`'s sessions every `every` seconds until `stop()` (or the server closes)."""

    def __init__(self, demo, every: float = SWEEP_EVERY, grace: float = CLOSED_GRACE) -> None:
        self._demo, self._every, self._grace = demo, every, grace
        self._stopped = threading.Event()
        threading.Thread(target=self._run, name="chief-session-sweeper", daemon=True).start()

    def _run(self) -> None:
        while not self._stopped.wait(self._every):
            holder = getattr(self._demo, "state_holder", None)
            if holder is not None and not getattr(self._demo, "is_running", True):
                return  # the server closed
            if holder is not None:
                sweep(holder, self._grace)

    def stop(self) -> None:
        self._stopped.set()
