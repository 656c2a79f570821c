"""Scale: a project with 120 shots and 50 versions (small edits saved one after another), its first and last
versions rendered and critiqued. Times opening it, listing versions, diffing the first and last, and exporting
and importing it with every render and media file; reports the database and archive sizes and the peak memory
of `chief serve` with that project in its home."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import zipfile
from pathlib import Path

from bench.common import OFFLINE_ENV, edit_shots, film, free_port, studio, table, timer

ROOT = Path(__file__).resolve().parents[1]


def build(shots: int, versions: int) -> tuple[Path, str, dict]:
    st = studio()
    board = film(shots, seconds=1.0)
    built = {}
    with timer(built, "build_seconds"):
        pid = st.create_from_storyboard(board, panel=["film_critic", "teen_scroller"]).project_id
        st.render(pid)
        st.critique(pid)
        for k in range(versions - 1):
            board = edit_shots(board, [(k * 13) % shots], suffix=f", v{k + 2}")
            st.save_storyboard(pid, board, None, f"tweak {k + 2}")
        st.render(pid)
        st.critique(pid)
    st.db.close()
    return st.config.home, pid, built


def measure(home: Path, pid: str, versions: int) -> dict:
    t: dict = {}
    with timer(t, "open (new Studio + current version)"):
        st = studio(home)
        st.version(pid)
    with timer(t, "list versions"):
        rows = st.versions(pid)
    assert len(rows) == versions
    with timer(t, f"diff v1 v{versions}"):
        st.diff(pid, 1, versions)
    out = Path(tempfile.mkdtemp(prefix="chief-bench-arch-")) / "scale.chief.zip"
    with timer(t, "export (renders and media)"):
        path = st.export_project(pid, out)
    with timer(t, "import"):
        copy = st.import_project(Path(path))
    again = st.render(copy.project_id)
    assert again.rendered == 0, "the imported project re-rendered shots"
    with zipfile.ZipFile(path) as zf:
        media = sum(1 for n in zf.namelist() if n.startswith("media/"))
    db = home / "chief.db"
    size = sum(p.stat().st_size for p in home.glob("chief.db*"))
    return {
        "seconds": t,
        "archive_kb": round(Path(path).stat().st_size / 1024, 1),
        "archive_media_files": media,
        "db_kb": round(size / 1024, 1),
        "db_file_kb": round(db.stat().st_size / 1024, 1),
    }


def serve_memory(home: Path, hits: int = 5) -> dict:
    """Start `chief serve`, load the page and the app config a few times, read VmHWM (peak RSS)."""
    port = free_port()
    env = {**os.environ, **OFFLINE_ENV, "CHIEF_HOME": str(home), "CHIEF_AGENTS": "offline", "PYTHONPATH": str(ROOT)}
    env.pop("CHIEF_LLM_BASE_URL", None)
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        [sys.executable, "-c", "from app.cli import main; main()", "serve", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        t0 = time.perf_counter()
        while True:
            try:
                urllib.request.urlopen(base + "/", timeout=5).read()
                break
            except OSError:
                if proc.poll() is not None or time.perf_counter() - t0 > 120:
                    log.seek(0)
                    return {"skipped": "chief serve did not start: " + log.read().decode(errors="replace")[-500:]}
                time.sleep(0.3)
        start = time.perf_counter() - t0
        for _ in range(hits):
            for path in ("/", "/config", "/gradio_api/info"):
                try:
                    urllib.request.urlopen(base + path, timeout=30).read()
                except OSError:
                    pass
        status = Path(f"/proc/{proc.pid}/status").read_text()
        kb = {
            k: int(v.split()[0])
            for k, v in (line.split(":", 1) for line in status.splitlines())
            if k in ("VmHWM", "VmRSS")
        }
        return {
            "startup_seconds": round(start, 2),
            "peak_rss_mb": round(kb["VmHWM"] / 1024, 1),
            "rss_mb": round(kb["VmRSS"] / 1024, 1),
            "requests": hits * 3,
        }
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the same 120 x 50 project (it is cheap); fewer serve hits")
    ap.add_argument("--shots", type=int, default=120)
    ap.add_argument("--versions", type=int, default=50)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    home, pid, built = build(args.shots, args.versions)
    r = {
        "shots": args.shots,
        "versions": args.versions,
        **built,
        **measure(home, pid, args.versions),
        "serve": serve_memory(home, 2 if args.quick else 5),
    }
    if args.json:
        print(json.dumps(r, indent=2))
    else:
        print(f"scale · {r['shots']} shots x {r['versions']} versions (built in {r['build_seconds']} s)")
        print(table([(k, v) for k, v in r["seconds"].items()], ("operation", "seconds")))
        print(
            f"database {r['db_kb']} KiB (with WAL); archive {r['archive_kb']} KiB "
            f"({r['archive_media_files']} media files); the imported copy re-rendered nothing"
        )
        s = r["serve"]
        print(
            f"chief serve: not run: {s['skipped']}"
            if "skipped" in s
            else f"chief serve: peak RSS {s['peak_rss_mb']} MB after {s['requests']} requests (started in {s['startup_seconds']} s)"
        )
    return r


if __name__ == "__main__":
    main()
