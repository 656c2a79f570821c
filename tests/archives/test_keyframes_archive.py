"""Archives carry the image-first workflow: reference images, keyframes (approved and candidates), keyframe
screenings, takes and their votes; format-2 archives (before them) still import; a still that is used but not
carried is refused."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from PIL import Image

from storage.archives import ID_PREFIXES, ArchiveError
from tests.archives.test_archives import craft, members, new_studio, valid_files
from tests.conftest import tiny_board


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    home = tmp_path_factory.mktemp("src")
    st = new_studio(home / "home")
    pid = st.create_from_storyboard(tiny_board(4), ["film_critic", "teen_scroller"]).project_id
    Image.fromarray(np.random.default_rng(0).integers(0, 255, (30, 40, 3), dtype=np.uint8)).save(home / "ref.png")
    st.add_reference(pid, "Keeper", home / "ref.png")
    st.render_keyframes(pid)
    st.reroll_keyframe(pid, "s2")
    st.screen_keyframes(pid)
    st.render(pid)
    st.render_takes(pid, "s3", 2)
    st.vote_takes(pid, "s3")
    st.pick_take(pid, "s3", "2")
    st.render(pid)
    take, keyframe = st.shot_takes(pid, "s3").takes[0].id, st.shot_keyframes(pid)[1].candidates[0].id
    st.add_note(pid, f"Take {take} beats the others; keep keyframe {keyframe}", shot_id="s3")
    st.critique(pid)
    st.refine(pid)
    out = st.export_project(pid, home / "p.chief.zip")
    yield st, pid, out
    st.db.close()


def test_references_keyframes_and_takes_survive_export_and_import(source, tmp_path):
    st, pid, out = source
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    new = v.project_id
    board, old_board = v.storyboard, st.version(pid).storyboard
    assert board == old_board  # the same stills, by hash
    assert board.images() and all(st2.image_path(sha).is_file() for sha in board.images())
    assert [[(k.source, k.seed, k.sha256) for k in c.candidates] for c in st2.shot_keyframes(new)] == [
        [(k.source, k.seed, k.sha256) for k in c.candidates] for c in st.shot_keyframes(pid)
    ]
    screening = st2.critiques(new, 2)  # v2 (reference, keyframes, re-roll: one draft) was screened as keyframes
    assert screening and {c.screening for c in screening} == {"keyframes"} and screening[0].render_id is None
    takes, old = st2.shot_takes(new, "s3"), st.shot_takes(pid, "s3")
    assert [(t.number, t.seed, t.key) for t in takes.takes] == [(t.number, t.seed, t.key) for t in old.takes]
    assert takes.picked == takes.takes[1].id and set(takes.current) == {t.id for t in takes.takes}
    assert {t.id for t in takes.takes}.isdisjoint({t.id for t in old.takes})  # fresh ids ...
    votes = takes.votes
    assert set(votes.takes) == {t.id for t in takes.takes}  # ... and the votes point at them
    assert all(vote.take_id is None and set(vote.scores) == set(votes.takes) for vote in votes.votes)  # no preference
    r = st2.render(new)  # the picked take's clip and every keyframe clip came along
    assert (r.rendered, r.reused) == (0, 4)


def test_a_format_2_archive_still_imports(tmp_path):
    st = new_studio(tmp_path / "src")
    pid = st.create_from_storyboard(tiny_board(2), ["film_critic"]).project_id
    st.render(pid)
    st.critique(pid)
    files = valid_files(st.export_project(pid, tmp_path / "p.chief.zip"))
    data = json.loads(files["project.json"])
    data["format_version"] = 2
    for bundle in data["versions"]:  # what format 2 did not have
        for key in ("keyframes", "takes", "take_screenings"):
            del bundle[key]
        for c in bundle["critiques"]:
            del c["screening"]
        board = bundle["version"]["storyboard"]
        for item in board["characters"] + board["locations"]:
            del item["references"]
        for scene in board["scenes"]:
            for shot in scene["shots"]:
                del shot["keyframe"]
    files["project.json"] = json.dumps(data).encode()
    v = new_studio(tmp_path / "dst").import_project(
        craft(tmp_path / "f2.chief.zip", files, manifest={"format_version": 2})
    )
    assert v.storyboard.shots()[0].keyframe is None and v.storyboard.characters[0].references == []


def test_a_still_that_is_used_but_not_carried_is_refused(source, tmp_path):
    st, pid, out = source
    files = valid_files(out)
    data = json.loads(files["project.json"])
    sha = data["versions"][-1]["version"]["storyboard"]["characters"][0]["references"][0]
    data["media"] = [m for m in data["media"] if m["sha256"] != sha]
    files = {n: b for n, b in files.items() if sha not in n}
    files["project.json"] = json.dumps(data).encode()
    st2 = new_studio(tmp_path / "other")
    with pytest.raises(ArchiveError, match=f"media {sha[:12]}… is used but not listed"):
        st2.import_project(craft(tmp_path / "bad.chief.zip", files, manifest={"format_version": 3}))
    assert st2.projects() == []


def test_a_vote_for_a_take_comes_along_pointing_at_the_new_take(source, tmp_path):
    _, _, out = source
    files = valid_files(out)
    data = json.loads(files["project.json"])
    screening = next(ts for b in data["versions"] for ts in b["take_screenings"])
    screening["votes"][0]["take_id"] = screening["takes"][2]  # a persona that preferred take 3
    files["project.json"] = json.dumps(data).encode()
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(craft(tmp_path / "voted.chief.zip", files, manifest={"format_version": 3}))
    state = st2.shot_takes(v.project_id, "s3")
    assert [vote.take_id for vote in state.votes.votes] == [state.takes[2].id, None]


def test_a_vote_for_a_take_that_is_not_there_is_refused(source, tmp_path):
    _, _, out = source
    files = valid_files(out)
    data = json.loads(files["project.json"])
    screening = next(ts for b in data["versions"] for ts in b["take_screenings"])
    screening["votes"][0]["take_id"] = "tk_00000000"
    files["project.json"] = json.dumps(data).encode()
    st2 = new_studio(tmp_path / "other")
    with pytest.raises(ArchiveError, match="refers to a take not in"):
        st2.import_project(craft(tmp_path / "bad.chief.zip", files, manifest={"format_version": 3}))
    assert st2.projects() == []


def pair_ids(old, new, pairs: dict[str, str]) -> None:
    """Walk two project.json trees of the same shape; every string that differs is an id renamed on import."""
    assert type(old) is type(new)
    if isinstance(old, dict):
        assert len(old) == len(new)
        for (k1, v1), (k2, v2) in zip(old.items(), new.items(), strict=True):
            pair_ids(k1, k2, pairs)
            pair_ids(v1, v2, pairs)
    elif isinstance(old, list):
        assert len(old) == len(new)
        for a, b in zip(old, new, strict=True):
            pair_ids(a, b, pairs)
    elif old != new:
        assert isinstance(old, str), (old, new)
        for a, b in zip(re.findall(ID, old), re.findall(ID, new), strict=True):
            assert pairs.setdefault(a, b) == b, f"{a} became both {pairs[a]} and {b}"
        assert re.sub(ID, "", old) == re.sub(ID, "", new), (old, new)


ID = r"\b[a-z]{1,4}_[0-9a-f]{8}\b"


def test_every_id_of_every_kind_is_remapped_the_same_way_everywhere(source, tmp_path):
    """A project holding every kind of record (versions, renders, notes, critiques and their batches, proposals
    citing notes and critiques, keyframes, takes, take screenings with votes): exported, imported and exported again,
    the two project.json differ only by ids, each old id has one new id with the same prefix, and no id is kept."""
    st, _, out = source
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    again = st2.export_project(v.project_id, tmp_path / "again.chief.zip")
    old, new = (json.loads(members(p)["project.json"]) for p in (out, again))
    pairs: dict[str, str] = {}
    pair_ids(old, new, pairs)
    prefix = {a.split("_")[0] for a in pairs}
    assert prefix == {*ID_PREFIXES.values(), "p", "cb"}  # every kind is held, and every kind was remapped
    assert all(a.split("_")[0] == b.split("_")[0] for a, b in pairs.items())
    assert len(set(pairs.values())) == len(pairs) and not set(pairs) & set(pairs.values())  # one to one, all new
    assert not set(re.findall(ID, json.dumps(new))) & set(pairs)  # no old id left anywhere (a note's words too)
    held = {
        r["id"] for b in old["versions"] for kind in ID_PREFIXES for r in ([b[kind]] if kind == "version" else b[kind])
    }
    assert held <= set(pairs)
    cited = {s for b in old["versions"] for p in b["proposals"] for e in p["proposal"]["edits"] for s in e["sources"]}
    assert {c for c in cited if re.fullmatch(ID, c)} <= set(pairs)  # sources that are records point at new ones
