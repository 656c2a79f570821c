"""Comment stripping under hostile input, in one run: what a file at the size cap costs, crafted vs plain text
(and crafted with the domain pattern as it was, which started a match inside every run of domain characters);
how fast an over-size file is refused; and how a server's other work is slowed while 4 pastes of 1 MB are
stripped at once, in threads of the server's process (as before) vs in the worker process (as now).
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import threading
import time
from pathlib import Path

import agents.comments as comments
from bench.common import machine, table

OLD_DOMAIN = re.compile(r"(?i)\b(?:[a-z0-9-]{1,63}\.){1,8}(?:" + comments._TLDS + r")\b(?:/\S*)?")
CRAFTED = "a-." * 1700  # a run of domain characters no TLD ends: every label start is a possible match
PLAIN = ("the film was slow but the ending made up for it, lovely score " * 80)[:5000]


def timed_file(folder: Path, line: str, n: int) -> float:
    path = folder / "c.txt"
    path.write_text("\n".join(f"{line} {i}" for i in range(n)) + "\n")
    t = time.perf_counter()
    try:
        comments.load_comments(path)
    except ValueError:
        pass
    return time.perf_counter() - t


def latency_while(strip, pastes: int, paste: str, seconds: float) -> tuple[float, float]:
    """Median and worst time of a small unit of the server's other work (tens of ms alone, as a request is) while `pastes` pastes
    are stripped by `strip` in threads of this process."""
    threads = [threading.Thread(target=strip, args=(paste,)) for _ in range(pastes)]
    for t in threads:
        t.start()
    samples, end = [], time.perf_counter() + seconds
    while time.perf_counter() < end and any(t.is_alive() for t in threads):
        t0 = time.perf_counter()
        json.loads(json.dumps({"k": list(range(100_000))}))
        samples.append(time.perf_counter() - t0)
        time.sleep(0.005)
    for t in threads:
        t.join()
    return statistics.median(samples), max(samples)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="a quarter of the sizes")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    scale = 4 if args.quick else 1
    n = comments.MAX_TOTAL_CHARS // 5100 // scale  # lines of ~5,000 characters: a file at the cap
    out: dict = {"machine": machine(), "comments_per_file": n}
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        out["plain_s"] = timed_file(folder, PLAIN, n)
        out["crafted_s"] = timed_file(folder, CRAFTED, n)
        new_domain, comments._DOMAIN = comments._DOMAIN, OLD_DOMAIN
        try:
            out["crafted_old_domain_s"] = timed_file(folder, CRAFTED, n)
        finally:
            comments._DOMAIN = new_domain
        out["refuse_31mb_s"] = timed_file(folder, CRAFTED, 31 * 2**20 // 5100)  # over the total: refused unstripped
    paste = "\n".join([CRAFTED[:1000]] * (990 // scale))  # 1 MB, just under the paste cap
    alone = latency_while(lambda _: time.sleep(1.0), 1, "", 2.0)
    in_process = latency_while(comments.comments_from_text, 4, paste, 600)
    comments.comments_from_text_apart("warm up the worker")
    apart = latency_while(comments.comments_from_text_apart, 4, paste, 600)
    out["latency_ms"] = {
        k: [round(v * 1000, 2) for v in x] for k, x in {"alone": alone, "threads": in_process, "worker": apart}.items()
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(machine())
    print(f"a file at the cap: {n} comments of ~5,000 characters")
    print(
        table(
            [
                ["plain text", f"{out['plain_s']:.2f}"],
                ["crafted (a-.a-.…)", f"{out['crafted_s']:.2f}"],
                ["crafted, domain pattern as before", f"{out['crafted_old_domain_s']:.2f}"],
                ["31 MB crafted: refused", f"{out['refuse_31mb_s']:.2f}"],
            ],
            ("input", "seconds"),
        )
    )
    lat = out["latency_ms"]
    print(table([(k, *v) for k, v in lat.items()], ("another request (ms)", "median", "worst")))


if __name__ == "__main__":
    main()
