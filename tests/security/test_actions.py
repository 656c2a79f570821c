"""Hostile comments, a repeated accept, what killed processes leave behind, credentials in printed URLs."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.security.conftest import DATA, ROOT, chief, one_line_error

BUILD = """
from agents.comments import load_comments
from agents.persona_builder import build_persona
p = build_persona(load_comments({path!r}), "Hostile")
print(p.id)
"""


def test_a_crafted_comment_file_is_read_in_linear_time():
    """Five 20 KB comments of `a.a.a…b`: the privacy patterns once backtracked quadratically on them (over
    two minutes each, the server blocked meanwhile). A watchdog, not a benchmark: it takes well under a
    second now, and the limit is a hundred times that."""
    code = BUILD.format(path=str(DATA / "hostile_comments.txt"))
    try:
        res = subprocess.run(
            [sys.executable, "-c", code],
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("building a persona from tests/security/data/hostile_comments.txt did not finish in 60 s")
    assert res.returncode == 0 and res.stdout.strip() == "hostile", res.stderr


def test_comments_are_cut_and_files_are_bounded(tmp_path):
    from agents.comments import MAX_AUTHORS, MAX_COMMENT_CHARS, load_comments, sanitize

    assert len(sanitize("word " * 10_000)) <= MAX_COMMENT_CHARS
    with pytest.raises(ValueError, match="name 200 different authors; a persona is built from one viewer's"):
        load_comments(DATA / "many_authors.csv")
    few = tmp_path / "few.csv"
    few.write_text("text,author\n" + "".join(f"great film {i},user{i % MAX_AUTHORS}\n" for i in range(50)))
    assert len(load_comments(few)) == 50


def test_the_text_to_strip_is_bounded_in_total_and_refused_before_any_is_stripped(tmp_path, monkeypatch):
    """A 32 MB crafted file took 552 s: all its text is counted (each comment as cut) before stripping starts, and
    a file over MAX_TOTAL_CHARS is one line; so is a paste of more lines than a file may hold comments."""
    import agents.comments as comments
    from agents.comments import MAX_COMMENT_CHARS, MAX_COMMENTS, MAX_TOTAL_CHARS, comments_from_text, load_comments

    n = MAX_TOTAL_CHARS // MAX_COMMENT_CHARS + 1
    big = tmp_path / "big.csv"
    big.write_text("text,title\n" + "".join(f"{'a.' * 3000},film {i}\n" for i in range(n)))  # each cut to 5,000

    def stripping(*_):
        raise AssertionError("stripping started before the size check")

    monkeypatch.setattr(comments, "sanitize", stripping)
    with pytest.raises(ValueError, match=f"big.csv: 2,00.* characters of comments, more than the {MAX_TOTAL_CHARS:,}"):
        load_comments(big)
    with pytest.raises(ValueError, match=f"more than the {MAX_COMMENTS:,} one viewer's may be"):
        comments_from_text("ok\n" * (MAX_COMMENTS + 1))
    monkeypatch.undo()
    under = tmp_path / "under.csv"
    under.write_text("text,title\n" + "".join(f"{'a.' * 3000},film {i}\n" for i in range(n - 2)))
    assert len(load_comments(under)) == n - 2  # just under the cap: read


def test_pasted_comments_are_stripped_in_a_worker_process():
    """The web app's builder strips a paste in a worker process (not the server's): same result as in-process; an
    over-size paste is refused before it is sent there."""
    import os

    from agents import comments
    from agents.comments import MAX_PASTED_CHARS, comments_from_text, comments_from_text_apart

    text = "loved it, more at https://x.example/p\n\nslow middle -- Jane Doe\n"
    assert comments_from_text_apart(text) == comments_from_text(text)
    assert [c.text for c in comments_from_text_apart(text)] == ["loved it", "slow middle"]
    pids = list(comments._worker._processes)
    assert pids and os.getpid() not in pids
    with pytest.raises(ValueError, match="too much text pasted"):
        comments_from_text_apart("x" * (MAX_PASTED_CHARS + 1))


def test_one_pattern_strips_every_author_name():
    from agents.comments import sanitize

    names = {f"user{i}" for i in range(20)} | {"Jane Doe"}
    assert sanitize("user3 and Jane Doe agree with user17, not user170", names) == "and agree with, not user170"


def test_the_same_accept_twice_makes_one_version_and_says_so(make_studio, board_file):
    from app.errors import StudioError
    from storage.files import load_storyboard

    st = make_studio()
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    st.add_note(pid, "make the whale bigger", "s2")
    prop = st.refine(pid)
    first = st.accept(pid, prop.id)
    assert first.version.number == 2 and not first.branched
    with pytest.raises(
        StudioError, match=f"these edits of proposal {prop.id} were already accepted as v2: nothing new to commit"
    ):
        st.accept(pid, prop.id)
    assert [v.number for v in st.versions(pid)] == [1, 2]
    other = st.accept(pid, prop.id, edits={1: "a whale twice as big"})  # different edits: a branch, as before
    assert other.branched and other.version.number == 3


def test_leftovers_of_killed_processes_are_cleaned_at_start(make_studio, tmp_path):
    """A stored file no media row names (a killed import or render), a hidden temp file in the speech cache
    and a killed export's .part are removed once they are old; recent ones and referenced files stay."""
    from storage.media import STALE_SECONDS

    home = tmp_path / "home"
    st = make_studio(home=home)
    st.create_project("A keeper and a whale", 0.25)
    pid = st.projects()[0].id
    kept = st.film_path(st.render(pid))
    orphan = st.media.root / "ab" / ("ab" + "0" * 62 + ".mp4")
    young = st.media.root / "cd" / ("cd" + "0" * 62 + ".mp4")
    part = home / "cache" / "speech" / ".0123.4242.npy"
    for p in (orphan, young, part):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b"left behind")
    old = os.path.getmtime(kept) - STALE_SECONDS - 60
    for p in (orphan, part, kept, home / ".media-collected"):
        os.utime(p, (old, old))
    export_dir = tmp_path / "exports"
    export_dir.mkdir()
    stale_part = export_dir / ".film.chief.zip.x1y2z3.part"
    stale_part.write_bytes(b"half an archive")
    os.utime(stale_part, (old, old))

    make_studio(home=home)  # a new process starts
    assert not orphan.exists() and not part.exists()
    assert young.exists() and kept.exists()
    st.export_project(pid, export_dir / "film.chief.zip")
    assert not stale_part.exists() and (export_dir / "film.chief.zip").exists()


def test_credentials_in_the_endpoint_are_never_printed(tmp_path):
    comments = tmp_path / "c.txt"
    comments.write_text("Loved the slow pacing\n")
    url = "http://ann:hunter2@127.0.0.1:9/v1?key=qsecret"
    res = chief(
        tmp_path / "home",
        "persona",
        "build",
        "--from",
        str(comments),
        "--name",
        "Ann",
        env={"CHIEF_LLM_BASE_URL": url, "CHIEF_AGENTS": "llm"},
    )
    label = next(ln for ln in res.stderr.splitlines() if ln.startswith("persona builder:"))
    assert "127.0.0.1:9/v1" in label and "hunter2" not in label and "qsecret" not in label, label


def test_one_line_for_a_bad_comments_file(tmp_path):
    line = one_line_error(
        chief(tmp_path / "home", "persona", "build", "--from", str(DATA / "many_authors.csv"), "--name", "Many")
    )
    assert "many_authors.csv: the comments name 200 different authors" in line
