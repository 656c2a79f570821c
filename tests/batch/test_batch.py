"""Batch generation: stories files, accept policies, a real batch with a failing story, resume after kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import zipfile
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import func, select

from app.config import load_config
from app.services.batch import BatchError, Defaults, accepted_edits, load_stories
from app.studio import Studio
from storage import db as tables
from storage.schema import Proposal, SetShot

SMALL = {"minutes": 0.25, "width": 128, "height": 72, "fps": 4}
PANEL = "film_critic,teen_scroller"


def write_stories(path: Path, stories: list) -> Path:
    path.write_text(yaml.safe_dump(stories))
    return path


# ------------------------------------------------------------------------------- stories and policy


def test_stories_from_yaml_jsonl_and_a_folder(tmp_path):
    d = Defaults(minutes=2, iterations=3, policy="all", panel=("film_critic",))
    ys = load_stories(
        write_stories(
            tmp_path / "s.yaml",
            ["just an idea", {"idea": "x", "title": "T", "minutes": 0.5, "panel": "genre_fan, teen_scroller"}],
        ),
        d,
    )
    assert (ys[0].idea, ys[0].minutes, ys[0].iterations, ys[0].policy, ys[0].panel) == (
        "just an idea",
        2,
        3,
        "all",
        ("film_critic",),
    )
    assert (ys[1].title, ys[1].minutes, ys[1].panel) == ("T", 0.5, ("genre_fan", "teen_scroller"))
    (tmp_path / "s.jsonl").write_text('{"idea": "a", "policy": "none"}\n\n"b"\n')
    js = load_stories(tmp_path / "s.jsonl", d)
    assert [s.idea for s in js] == ["a", "b"] and js[0].policy == "none"
    folder = tmp_path / "ideas"
    folder.mkdir()
    (folder / "1.md").write_text("# The Title\nA whale sings.\n")
    (folder / "2.txt").write_text("A robot paints.")
    (folder / "skip.png").write_bytes(b"")
    fs = load_stories(folder, d)
    assert [(s.title, s.idea) for s in fs] == [("The Title", "A whale sings."), (None, "A robot paints.")]
    assert len({s.key for s in ys + js + fs}) == 6
    assert load_stories(tmp_path / "s.jsonl", d)[0].key == js[0].key  # same spec, same key: resumable


@pytest.mark.parametrize(
    "content, reason",
    [
        ([{"idea": "x", "colour": "red"}], r"story 1: colour: Extra inputs"),
        ([{"idea": "x", "policy": "some"}], r"story 1: policy"),
        ([{"title": "no idea"}], r"story 1: idea: Field required"),
        ({"not": "a list"}, r"expected a list"),
    ],
)
def test_bad_stories_file_named_in_one_line(tmp_path, content, reason):
    with pytest.raises(BatchError, match=reason):
        load_stories(write_stories(tmp_path / "s.yaml", content))


def test_accept_policies():
    def e(*sources):
        return SetShot(shot_id="s1", field="prompt", new="x", rationale="r", sources=list(sources))

    p = Proposal(edits=[e("film_critic"), e("film_critic", "genre_fan"), e("n_1234abcd"), e()])
    assert accepted_edits(p, "all") == [1, 2, 3, 4]
    assert accepted_edits(p, "consensus") == [2, 3]
    assert accepted_edits(p, "none") == []


# ------------------------------------------------------------------------------- a real batch


@pytest.mark.slow
def test_batch_with_a_failing_story_continues_and_reports(tmp_path):
    from app.cli import main

    stories = write_stories(
        tmp_path / "stories.yaml",
        [
            {"idea": "A lighthouse keeper befriends a lost whale during the autumn storms", **SMALL},
            {"idea": "A robot learns to paint sunsets on Mars", "title": "Red Sunsets", "policy": "all", **SMALL},
            {"idea": "A story whose panel does not exist", "panel": ["nobody"], **SMALL},
        ],
    )
    out = tmp_path / "out"
    res = CliRunner().invoke(
        main,
        [
            "--home",
            str(tmp_path / "home"),
            "batch",
            str(stories),
            "-o",
            str(out),
            "--panel",
            PANEL,
            "--iterations",
            "1",
            "--json",
        ],
        env={"CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline"},
    )
    assert res.exit_code == 1, res.output
    events = [json.loads(line) for line in res.stdout.splitlines()]  # stdout is JSON events only
    assert events[0]["event"] == "batch_start" and events[-1]["event"] == "batch_done"
    report = json.loads((out / "report.json").read_text())
    assert (report["ok"], report["failed"]) == (2, 1)
    good, sunsets, bad = report["stories"]
    assert bad["status"] == "failed" and "unknown persona(s) ['nobody']" in bad["error"]
    assert sunsets["slug"] == "red-sunsets" and sunsets["policy"] == "all"
    for s in (good, sunsets):
        assert s["status"] == "done"
        assert (out / s["film"]).is_file() and (out / s["archive"]).is_file()
        first = s["iterations"][0]
        assert first["scores"]["overall"] > 0 and (out / first["thumb"]).is_file() and (out / first["film"]).is_file()
        with zipfile.ZipFile(out / s["archive"]) as zf:
            assert "project.json" in zf.namelist()
    assert len(sunsets["iterations"]) == 2  # policy all: v1 → accept → v2 rendered and critiqued
    html = (out / "report.html").read_text()
    assert "<svg" in html and "<polyline" in html and "<script" not in html and "http" not in html
    links = re.findall(r'(?:href|src)="([^"]+)"', html)
    assert links and all(not link.startswith("/") and (out / link).is_file() for link in links)


# ------------------------------------------------------------------------------- resume after kill -9


def _db_counts(home: Path) -> dict:
    st = Studio(load_config({"home": home}, environ={}))
    try:
        with st.db.reader() as s:
            projects = s.scalar(select(func.count()).select_from(tables.ProjectRow))
            per_version = {}
            for v in s.scalars(select(tables.VersionRow)):
                n = lambda t: s.scalar(select(func.count()).select_from(t).where(t.version_id == v.id))  # noqa: E731
                batches = s.scalar(
                    select(func.count(func.distinct(tables.CritiqueRow.batch))).where(
                        tables.CritiqueRow.version_id == v.id
                    )
                )
                per_version[(v.project_id, v.number)] = (n(tables.RenderRow), batches, n(tables.ProposalRow))
        return {"projects": projects, "per_version": per_version}
    finally:
        st.db.close()


@pytest.mark.slow
def test_resume_after_kill_9_loses_nothing_and_repeats_nothing(tmp_path):
    stories = write_stories(
        tmp_path / "stories.yaml",
        [
            {"idea": "A lighthouse keeper befriends a lost whale during the autumn storms", **SMALL},
            {"idea": "A robot learns to paint sunsets on Mars", "policy": "all", **SMALL},
        ],
    )
    out, home = tmp_path / "out", tmp_path / "home"
    env = {**os.environ, "CHIEF_HOME": str(home), "CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline"}
    cmd = [
        str(Path(sys.executable).with_name("chief")),
        "batch",
        str(stories),
        "-o",
        str(out),
        "--panel",
        PANEL,
        "--iterations",
        "1",
        "--json",
    ]
    state = out / "batch-state.json"
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Killed on an event, not a clock: the batch saves its state, then prints `stage_done` (flushed); the first one
    # read freezes the process (SIGSTOP) and kills it, so it dies mid-run however loaded the machine is.
    seen = []
    assert first.stdout is not None
    for line in first.stdout:
        seen.append(line)
        if json.loads(line)["event"] == "stage_done":
            first.send_signal(signal.SIGSTOP)
            break
    assert first.poll() is None, "the batch finished before it could be killed: " + first.stderr.read().decode()
    first.send_signal(signal.SIGKILL)
    rest, _ = first.communicate()
    stdout1 = b"".join(seen) + rest
    assert first.returncode == -signal.SIGKILL
    before = json.loads(state.read_text())  # the state file is whole (atomic replace)
    finished_before = {(k, st) for k, s in before["stories"].items() for st in s["stages"]}
    assert finished_before and not all(s["status"] == "done" for s in before["stories"].values())

    second = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    assert second.returncode == 0, second.stderr.decode()[-2000:]
    events = [json.loads(line) for line in second.stdout.decode().splitlines()]
    skipped = {(e["story"], e["stage"]) for e in events if e["event"] == "stage_skipped"}
    started = {(e["story"], e["stage"]) for e in events if e["event"] == "stage_start"}
    assert finished_before <= skipped and not (finished_before & started)
    ran = Counter(
        (e["story"], e["stage"])
        for run in (stdout1.decode(), second.stdout.decode())
        for e in map(json.loads, filter(None, run.splitlines()))
        if e["event"] == "stage_done"
    )
    assert ran and max(ran.values()) == 1

    after = json.loads(state.read_text())
    assert all(s["status"] == "done" for s in after["stories"].values())
    counts = _db_counts(home)
    assert counts["projects"] == 2  # the plan was not redone
    # every version was rendered, critiqued and refined at most once
    assert all(r == 1 and c == 1 and p <= 1 for r, c, p in counts["per_version"].values()), counts
    report = json.loads((out / "report.json").read_text())
    assert report["ok"] == 2 and all((out / s["film"]).is_file() for s in report["stories"])

    again = subprocess.run(cmd, env=env, capture_output=True, timeout=300)  # a finished batch does nothing
    assert again.returncode == 0
    assert not [e for e in map(json.loads, again.stdout.decode().splitlines()) if e["event"] == "stage_start"]
    assert _db_counts(home) == counts
