"""Archives are checked with the rules of the live app, and what they bring is trusted no further than the
project they bring: a crafted clip-cache entry cannot stand in for another project's shot."""

from __future__ import annotations

import json
import random
import zipfile

import pytest

from tests.security.conftest import DATA, chief, one_line_error
from tests.security.hostile_archives import craft


@pytest.mark.parametrize(
    "name, says",
    [
        ("unknown_persona.chief.zip", "v1: unknown persona(s) ['nobody_at_all']"),
        ("long_note.chief.zip", "versions.0.notes.0.text: String should have at most 4000 characters"),
        ("note_on_missing_shot.chief.zip", "v1: a note is about shot 's99', which the version does not have"),
        ("format_version_string.chief.zip", "project.json: format_version must be a whole number"),
        ("manifest_version_string.chief.zip", "manifest.json: format_version: Input should be a valid integer"),
        ("deep_project.chief.zip", "project.json: nested more than 64 levels deep"),
    ],
)
def test_hostile_archives_are_refused_in_one_line_and_write_nothing(tmp_path, name, says):
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "import", str(DATA / name)))
    assert says in line, line
    assert chief(home, "projects", "--json").stdout.strip() == "[]"
    assert not [p for p in (home / "media").rglob("*") if p.is_file()]


def test_an_archive_over_the_caps_is_refused(tmp_path):
    line = one_line_error(
        chief(tmp_path / "home", "import", str(DATA / "unknown_persona.chief.zip"), env={"CHIEF_MAX_SHOTS": "1"})
    )
    assert "v1: 2 shots is over the limit CHIEF_MAX_SHOTS=1" in line, line


def test_an_imported_clip_cache_entry_serves_only_its_own_project(make_studio, board_file, tmp_path):
    """An attacker exports a rendered project of their own, then rewrites its clip-cache entries to the keys
    of shots a victim will render (keys are predictable: they hash the shot's text, seed and settings).
    Importing it must not make the victim's new project "reuse" the attacker's clips."""
    from storage.files import load_storyboard

    board = load_storyboard(board_file)
    lab = make_studio(home=tmp_path / "lab")  # where the attacker computes the victim's keys
    victim_keys = {s.shot_id: s.key for s in lab.render(lab.create_from_storyboard(board).project_id).shots}
    other = board.model_copy(deep=True)
    for shot in other.shots():
        shot.prompt = "ATTACKER " + shot.prompt
    apid = lab.create_from_storyboard(other).project_id
    lab.render(apid)
    attacker_clips = {s.shot_id: s.sha256 for s in lab.render_info(apid).shots}
    source = lab.export_project(apid, tmp_path / "attacker.chief.zip")

    def swap(data):
        for clip in data["clips"]:
            shot = next(s for s, sha in attacker_clips.items() if sha == clip["sha256"])
            clip["key"] = victim_keys[shot]

    crafted = craft(source, tmp_path / "crafted.chief.zip", project=swap)

    victim = make_studio(home=tmp_path / "victim")
    victim.import_project(crafted)
    pid = victim.create_from_storyboard(board).project_id
    render = victim.render(pid)
    assert [s.status for s in render.shots] == ["rendered", "rendered"]
    assert not {s.sha256 for s in render.shots} & set(attacker_clips.values())
    # an honest archive's project still reuses the clips it brought: it re-renders nothing
    honest = victim.import_project(source).project_id
    assert [s.status for s in victim.render(honest).shots] == ["reused", "reused"]


def test_a_no_media_archive_does_not_break_later_full_exports(make_studio, board_file, tmp_path):
    """Imported without media, then edited and rendered again: a full export still works (the files the
    store never had are listed as absent), and that archive imports and renders again."""
    from storage.files import load_storyboard

    src = make_studio(home=tmp_path / "a")
    pid = src.create_from_storyboard(load_storyboard(board_file)).project_id
    src.render(pid)
    light = src.export_project(pid, tmp_path / "light.chief.zip", include_media=False)

    st = make_studio(home=tmp_path / "b")
    v1 = st.import_project(light)
    board = v1.storyboard.model_copy(deep=True)
    board.scenes[0].shots[1].prompt = "A whale tail in silver water"
    v2, _ = st.save_storyboard(v1.project_id, board, 1)
    render = st.render(v1.project_id, v2.number)
    assert [s.status for s in render.shots] == ["rendered", "rendered"]  # no imported entry without its file
    full = st.export_project(v1.project_id, tmp_path / "full.chief.zip")
    with zipfile.ZipFile(full) as zf:
        data = json.loads(zf.read("project.json"))
    old_film = st.render_info(v1.project_id, 1).film_sha256
    assert data["media_included"] and old_film in data["absent"]
    assert render.film_sha256 not in data["absent"]

    again = make_studio(home=tmp_path / "c")
    pid3 = again.import_project(full).project_id
    assert again.render(pid3, 2).rendered == 0  # v2's clips came with the archive
    assert again.render(pid3, 1).shots  # v1's did not: rendered afresh


def test_an_archive_that_lies_about_absent_media_is_refused(make_studio, board_file, tmp_path):
    from storage.files import load_storyboard

    st = make_studio(home=tmp_path / "a")
    pid = st.create_from_storyboard(load_storyboard(board_file)).project_id
    st.render(pid)
    src = st.export_project(pid, tmp_path / "p.chief.zip")
    film = st.render_info(pid).film_sha256
    bad = craft(src, tmp_path / "bad.chief.zip", project=lambda d: d.update(absent=[film]))
    line = one_line_error(chief(tmp_path / "other", "import", str(bad)))
    assert "is in the archive but listed as absent" in line, line


def _persona(**fields) -> dict:
    from storage.schema import Persona

    return Persona(**{"id": "big", "name": "Big", "who": "a viewer", "source": "custom", **fields}).model_dump(
        mode="json"
    )


def _with_persona(persona: dict):
    def edit(d: dict) -> None:
        d["versions"][0]["version"]["personas"] = [persona]
        d["versions"][0]["version"]["panel"] = ["big"]

    return edit


@pytest.mark.parametrize(
    "edit, says",
    [
        # one field of 6 MB: the persona cap (a persona file or paste may be 256 KB), naming the field
        (
            _with_persona(_persona(who=random.randbytes(3_000_000).hex())),
            "v1: persona 'big' is 6,00",
        ),  # noise: no zip bomb
        # every field small, the persona too big: 40 evidence lists of 100 comments of 100 characters
        (
            _with_persona(_persona(evidence={f"trait{i}": ["y" * 100] * 100 for i in range(40)})),
            "more than the 262,144 a persona may be (its 'evidence' holds",
        ),
        # any text longer than the app takes anywhere: a version message of 30,000 characters
        (
            lambda d: d["versions"][0]["version"].update(message="m" * 30_000, panel=["film_critic"]),
            "v1: version.message is 30,000 characters",
        ),
    ],
    ids=["6 MB field", "many small fields", "long message"],
)
def test_archives_are_held_to_the_apps_size_caps_field_by_field(tmp_path, edit, says):
    """A 6 MB persona was imported (critique then failed at 1.5M tokens; Screening showed 6 MB of text)."""
    bad = craft(DATA / "unknown_persona.chief.zip", tmp_path / "bad.chief.zip", project=edit)
    home = tmp_path / "home"
    chief(home, "projects")
    line = one_line_error(chief(home, "import", str(bad)))
    assert says in line, line
    assert chief(home, "projects", "--json").stdout.strip() == "[]"
    assert not [p for p in (home / "media").rglob("*") if p.is_file()]
