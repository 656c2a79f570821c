"""A class on one server: N simulated students against `chief serve --users`, measured side by side in one run.

Each student is an HTTP client speaking Gradio's protocol as a page does (sign in, join the queue, read the event's
SSE stream): it repeats light actions — the projects list, opening its project, the Render screen's load, the
History screen — with a think time between them, while a third of the students render and critique their films
(each render followed to its end on its own stream, as a page does). A few real Chromium pages load the app
meanwhile. Measured for each class size in the same run, the one-student class first: p50 and p95 of each action,
their ratio to the one-student figures, the server's resident memory over time, and every error.

python -m bench.class_load [--students 1,10,30] [--seconds 40] [--pages 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
import uuid
from pathlib import Path

from bench.common import OFFLINE_ENV, film, free_port, studio, table

ROOT = Path(__file__).resolve().parents[1]
LIGHT = ("list_projects", "open_project", "render_info", "history")
THINK = (1.0, 3.0)  # seconds a student waits between two actions (uniform)


def build(students: int) -> tuple[Path, dict[str, str]]:
    """A home with a teacher and `students` accounts, each with a 6-shot film of their own (not rendered)."""
    from storage.owners import Actor, acting

    st = studio()
    st.accounts.add("teacher", "teacher-password", teacher=True)
    pids = {}
    for n in range(students):
        name = f"student{n:02d}"
        st.accounts.add(name, f"{name}-password")
        with acting(Actor(name)):
            board = film(6, seconds=1.0, title=f"{name}'s film")
            pids[name] = st.create_from_storyboard(board).project_id
    home = st.config.home
    st.db.close()
    return home, pids


class Server:
    """`chief serve --users` in a subprocess; `rss_mb()` reads its resident memory."""

    def __init__(self, home: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, **OFFLINE_ENV, "CHIEF_HOME": str(home), "CHIEF_AGENTS": "offline", "PYTHONPATH": str(ROOT)}
        env.pop("CHIEF_LLM_BASE_URL", None)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from app.cli import main; main()", "serve", "--users", "--port", str(self.port)],
            cwd=ROOT,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                urllib.request.urlopen(self.base + "/login", timeout=5)
                return
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError("chief serve did not start")

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


class Student:
    """One signed-in client: `act(api_name, data)` joins the queue and reads the event to its end."""

    def __init__(self, base: str, name: str) -> None:
        import httpx

        self.base, self.name = base, name
        self.http = httpx.Client(timeout=httpx.Timeout(300.0))
        r = self.http.post(f"{base}/login", data={"username": name, "password": f"{name}-password"})
        r.raise_for_status()
        config = self.http.get(f"{base}/config").json()
        self.deps = {d.get("api_name"): (i, len(d["inputs"])) for i, d in enumerate(config["dependencies"])}

    def act(self, api_name: str, data: list) -> None:
        index, inputs = self.deps[api_name]
        session = uuid.uuid4().hex
        body = {"data": [*data, *[None] * (inputs - len(data))], "fn_index": index, "session_hash": session}
        r = self.http.post(f"{self.base}/gradio_api/queue/join", json=body)
        r.raise_for_status()
        with self.http.stream("GET", f"{self.base}/gradio_api/queue/data", params={"session_hash": session}) as s:
            for line in s.iter_lines():
                if line.startswith("data:"):
                    msg = json.loads(line[5:])
                    if msg.get("msg") == "process_completed":
                        if not msg.get("success"):
                            raise RuntimeError(f"{api_name}: {str(msg.get('output'))[:200]}")
                        return
        raise RuntimeError(f"{api_name}: the stream ended before the event did")


def run_class(base: str, pids: dict[str, str], n: int, seconds: float, server: Server, pages: int) -> dict:
    """`n` students for `seconds`: every third one renders then critiques its film; all do light actions."""
    names = sorted(pids)[:n]
    times: dict[str, list[float]] = {a: [] for a in LIGHT}
    errors: list[str] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds
    rss: list[tuple[float, float]] = []
    t0 = time.monotonic()

    def light(name: str) -> None:
        rnd = random.Random(name)
        try:
            s = Student(base, name)
        except Exception as e:  # noqa: BLE001 - every failure is counted and shown
            with lock:
                errors.append(f"{name} sign-in: {e}")
            return
        pid = pids[name]
        while time.monotonic() < stop:
            action = rnd.choice(LIGHT)
            data = {"list_projects": [pid], "open_project": [pid], "render_info": [pid, 1], "history": [pid, 1]}[action]
            start = time.monotonic()
            try:
                s.act(action, data)
                with lock:
                    times[action].append(time.monotonic() - start)
            except Exception as e:  # noqa: BLE001
                with lock:
                    errors.append(f"{name} {action}: {e}")
            time.sleep(rnd.uniform(*THINK))

    def heavy(name: str) -> None:
        try:
            s = Student(base, name)
            s.act("render", [pids[name], 1, "", "draft"])
            s.act("critique", [pids[name], 1, ""])
        except Exception as e:  # noqa: BLE001
            with lock:
                errors.append(f"{name} render/critique: {e}")

    workers = [threading.Thread(target=light, args=(name,), daemon=True) for name in names]
    workers += [threading.Thread(target=heavy, args=(name,), daemon=True) for name in names[::3] if n > 1]
    for w in workers:
        w.start()
    page_loads = _pages(base, names[0], pages, stop) if pages else []
    while any(w.is_alive() for w in workers) and time.monotonic() < stop + 600:
        rss.append((round(time.monotonic() - t0, 1), round(server.rss_mb(), 1)))
        time.sleep(2.0)
    for w in workers:
        w.join(1)
    return {"times": times, "errors": errors, "rss": rss, "page_loads": page_loads}


def _pages(base: str, name: str, pages: int, stop: float) -> list[float]:
    """Seconds each of `pages` real Chromium pages took to show the signed-in app (its status bar), while the class
    works; /usr/bin/chromium as a creator's browser."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return []
    loads = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        try:
            for _ in range(pages):
                context = browser.new_context()
                page = context.new_page()
                page.goto(base + "/login")
                page.fill("input[name=username]", name)
                page.fill("input[name=password]", f"{name}-password")
                start = time.monotonic()
                page.click("button[type=submit], input[type=submit]")
                page.wait_for_selector("#status_bar", timeout=120_000)
                loads.append(round(time.monotonic() - start, 2))
                context.close()
                if time.monotonic() > stop:
                    break
        finally:
            browser.close()
    return loads


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1]


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--students", default="1,10,30")
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--pages", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="1 and 5 students, 15 s each")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    sizes = [1, 5] if args.quick else [int(x) for x in args.students.split(",")]
    seconds = 15.0 if args.quick else args.seconds
    home, pids = build(max(sizes))
    server = Server(home)
    results: dict = {}
    try:
        for n in sizes:  # the one-student class first: the baseline of the ratios
            results[n] = run_class(server.base, pids, n, seconds, server, args.pages)
    finally:
        server.stop()
    base = results[sizes[0]]["times"]
    rows, out = [], {"sizes": {}}
    for n in sizes:
        r = results[n]
        summary = {}
        for action in LIGHT:
            v = r["times"][action]
            p50, p95 = pct(v, 50), pct(v, 95)
            b50, b95 = pct(base[action], 50), pct(base[action], 95)
            summary[action] = {"n": len(v), "p50": p50, "p95": p95}
            rows.append(
                (
                    n,
                    action,
                    len(v),
                    f"{p50:.3f}" if p50 is not None else "-",
                    f"{p95:.3f}" if p95 is not None else "-",
                    f"{p50 / b50:.2f}x" if p50 and b50 else "-",
                    f"{p95 / b95:.2f}x" if p95 and b95 else "-",
                )
            )
        rss = [m for _, m in r["rss"]]
        out["sizes"][n] = {
            "actions": summary,
            "errors": r["errors"],
            "rss_mb": r["rss"],
            "page_loads_s": r["page_loads"],
        }
        rows.append(
            (n, "server RSS MB (first, max, last)", len(rss), *(f"{x:.0f}" for x in (rss[0], max(rss), rss[-1])), "")
            if rss
            else (n, "rss", 0, "-", "-", "-", "-")
        )
        rows.append((n, f"errors: {len(r['errors'])}; Chromium page loads (s): {r['page_loads']}", "", "", "", "", ""))
    if args.json:
        print(json.dumps(out, indent=2))
    else:
        print(table(rows, ("students", "action", "n", "p50 s", "p95 s", "p50 vs 1", "p95 vs 1")))
        for n in sizes:
            for e in out["sizes"][n]["errors"][:5]:
                print(f"  {n} students: {e}")
    return out


if __name__ == "__main__":
    main()
