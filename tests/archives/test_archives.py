"""Project archives: round trip, portable contents, and every refusal with nothing written."""

from __future__ import annotations

import getpass
import hashlib
import json
import re
import stat
import zipfile
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.config import load_config
from app.studio import Studio
from storage import archives
from storage import db as tables
from storage import repository as repo_module
from storage.archives import ArchiveError
from storage.schema import Line
from tests.conftest import tiny_board

FAKE_KEY = "sk-test-FAKEKEY-0123456789abcdef"


def new_studio(home: Path, **env) -> Studio:
    return Studio(load_config({"home": home, "narration": False, "agents": "offline"}, environ=env))


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """A project with two versions, renders (one with continuity), critiques, a note, a proposal; and its archive."""
    home = tmp_path_factory.mktemp("src")
    st = new_studio(home / "home", CHIEF_LLM_API_KEY=FAKE_KEY)
    board = tiny_board(3, shot_overrides={2: {"continuity": True, "dialogue": "The storm breaks."}})
    pid = st.create_from_storyboard(board, ["film_critic", "teen_scroller"], idea="a keeper and a whale").project_id
    st.render(pid)
    st.critique(pid)
    st.add_note(pid, "Make the storm scarier", shot_id="s3")
    st.refine(pid)
    st.accept(pid)
    st.render(pid)
    st.critique(pid)
    out = st.export_project(pid, home / "p.chief.zip")
    yield st, pid, out
    st.db.close()


def members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def canonical(project_json: bytes) -> str:
    """project.json with ids replaced by their order of first appearance (ids differ after an import)."""
    seen: dict[str, str] = {}
    text = project_json.decode()
    return re.sub(
        r"\b([a-z]{1,4})_[0-9a-f]{8}\b", lambda m: seen.setdefault(m.group(0), f"<{m.group(1)}{len(seen)}>"), text
    )


def counts(st: Studio) -> dict:
    with st.db.reader() as s:
        rows = {
            t.__tablename__: s.scalar(select(func.count()).select_from(t))
            for t in (
                tables.ProjectRow,
                tables.VersionRow,
                tables.RenderRow,
                tables.CritiqueRow,
                tables.NoteRow,
                tables.ProposalRow,
                tables.ClipRow,
                tables.MediaRow,
                tables.AgentCallRow,
            )
        }
    files = sorted(p.relative_to(st.media.root).as_posix() for p in st.media.root.rglob("*") if p.is_file())
    scratch = st.media.root.parent / "scratch"
    left = [p for p in scratch.rglob("*")] if scratch.exists() else []
    return {"rows": rows, "files": files, "scratch": left}


# ------------------------------------------------------------------------------------ round trip


def test_round_trip_same_project_same_media_and_no_rerender(source, tmp_path):
    st, pid, out = source
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    assert v.number == st.version(pid).number
    assert [r.kind for r in st2.versions(v.project_id)] == [r.kind for r in st.versions(pid)]
    assert st2.panel_scores(v.project_id) == st.panel_scores(pid)
    assert st2.proposal(v.project_id, ref=1).accepted_as == 2
    again = st2.export_project(v.project_id, tmp_path / "again.chief.zip")
    a, b = members(out), members(again)
    assert canonical(a["project.json"]) == canonical(b["project.json"])
    assert sorted(n for n in a if n.startswith("media/")) == sorted(n for n in b if n.startswith("media/"))
    assert json.loads(a["project.json"])["project"]["id"] != json.loads(b["project.json"])["project"]["id"]
    info = st2.render(v.project_id)  # the clip cache came along: nothing is re-rendered
    assert (info.rendered, info.reused) == (0, 3)
    assert st2.film_path(st2.render_info(v.project_id, 1)).is_file()


def test_import_twice_gives_new_ids_and_a_new_title(source):
    st, pid, out = source
    a = st.import_project(out)
    b = st.import_project(out, title="Second copy")
    assert len({pid, a.project_id, b.project_id}) == 3
    assert {a.id, b.id}.isdisjoint({r.id for r in st.versions(pid)})
    assert {p.id: p.title for p in st.projects()}[b.project_id] == "Second copy"
    note_ids = {n.id for n in st.notes(a.project_id, 1)}
    assert note_ids and note_ids.isdisjoint({n.id for n in st.notes(pid, 1)})
    sources = {s for e in st.proposal(a.project_id, ref=1).proposal.edits for s in e.sources}
    assert note_ids <= sources  # the proposal still cites the (renamed) creator note


def test_subset_of_versions_reparents_and_says_so(source, tmp_path):
    st, pid, _ = source
    out = st.export_project(pid, tmp_path / "v2.chief.zip", versions="latest")
    data = json.loads(members(out)["project.json"])
    assert [v["version"]["number"] for v in data["versions"]] == [2]
    assert data["versions"][0]["version"]["parent_number"] is None
    assert data["reparented"] == [{"version": 2, "original_parent": 1, "parent": None}]
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    assert [r.number for r in st2.versions(v.project_id)] == [2]
    with pytest.raises(ArchiveError, match="no version 9"):
        st.export_project(pid, tmp_path / "x.chief.zip", versions="1,9")


def test_no_media_archive_imports_and_renders_again(source, tmp_path):
    st, pid, _ = source
    out = st.export_project(pid, tmp_path / "light.chief.zip", include_media=False)
    assert not [n for n in members(out) if n.startswith("media/")]
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    info = st2.render(v.project_id)
    assert info.rendered == 3 and st2.film_path(info).is_file()


def test_no_key_no_local_path_no_user_name_in_the_archive(source, tmp_path):
    st, pid, out = source
    home = str(Path.home())
    data_dir = str(st.config.home)
    user = getpass.getuser().encode()
    word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(user) + rb"(?![A-Za-z0-9_])")
    for name, blob in members(out).items():
        assert FAKE_KEY.encode() not in blob, name
        assert data_dir.encode() not in blob, name
        assert home.encode() + b"/" not in blob, name
        assert b"file://" not in blob, name
        assert not word.search(blob), f"user name in {name}"
    otio = next(n for n in members(out) if n.endswith(".otio"))
    urls = re.findall(r'"target_url": "([^"]+)"', members(out)[otio].decode())
    assert urls and all(u.startswith("../") and u.endswith(".mp4") for u in urls)
    # and the relative URLs resolve inside the store after an import
    st2 = new_studio(tmp_path / "other")
    v = st2.import_project(out)
    cut = st2.media_paths(st2.render_info(v.project_id, 1))["otio"]
    assert all((cut.parent / u).resolve().is_file() for u in re.findall(r'"target_url": "([^"]+)"', cut.read_text()))


# ------------------------------------------------------------------------------------ refusals


def craft(
    path: Path,
    files: dict[str, bytes],
    *,
    manifest: dict | None = None,
    listed: dict | None = None,
    infos: dict[str, zipfile.ZipInfo] | None = None,
    order: list[tuple[str, bytes]] | None = None,
) -> Path:
    """A zip with these members and a manifest listing them (override parts to make it wrong)."""
    entries = {n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in files.items()}
    entries = listed if listed is not None else entries
    man = {
        "format": "chief-archive",
        "format_version": 1,
        "app_version": "0",
        "created_at": "2025-01-01T00:00:00",
        "members": entries,
        **(manifest or {}),
    }
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, blob in order or list(files.items()):
            zf.writestr((infos or {}).get(name, name), blob)
        zf.writestr("manifest.json", json.dumps(man))
    return path


def valid_files(out: Path) -> dict[str, bytes]:
    return {n: b for n, b in members(out).items() if n != "manifest.json"}


def symlink_info(name: str) -> zipfile.ZipInfo:
    zi = zipfile.ZipInfo(name)
    zi.create_system = 3
    zi.external_attr = (stat.S_IFLNK | 0o777) << 16
    return zi


def _with(files: dict, **more) -> dict:
    return {**files, **more}


def _project(files: dict, change) -> dict:
    data = json.loads(files["project.json"])
    change(data)
    return {**files, "project.json": json.dumps(data).encode()}


REFUSALS = {
    "traversal": (lambda f, p: craft(p, _with(f, **{"media/../../evil.txt": b"x"})), r"climbs out"),
    "absolute": (lambda f, p: craft(p, _with(f, **{"/etc/evil": b"x"})), r"absolute path"),
    "drive letter": (lambda f, p: craft(p, _with(f, **{"C:/evil.txt": b"x"})), r"absolute path"),
    "symlink": (
        lambda f, p: craft(
            p, _with(f, **{"media/link": b"/etc/passwd"}), infos={"media/link": symlink_info("media/link")}
        ),
        r"symlink",
    ),
    "directory": (lambda f, p: craft(p, _with(f, **{"media/dir/": b""})), r"not a regular file"),
    "duplicate": (
        lambda f, p: craft(p, f, order=list(f.items()) + [("project.json", f["project.json"])]),
        r"appears twice",
    ),
    "zip bomb": (lambda f, p: craft(p, _with(f, **{"media/zeros.bin": bytes(4 << 20)})), r"zip bomb"),
    "not in manifest": (
        lambda f, p: craft(
            p, f, listed={n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in list(f.items())[1:]}
        ),
        r"not in the manifest",
    ),
    "missing member": (
        lambda f, p: craft(
            p,
            {n: b for n, b in f.items() if n != "project.json"},
            listed={n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in f.items()},
        ),
        r"listed in the manifest but missing",
    ),
    "checksum": (
        lambda f, p: craft(
            p,
            f,
            listed={
                n: {"sha256": "0" * 64 if n == "project.json" else hashlib.sha256(b).hexdigest(), "size": len(b)}
                for n, b in f.items()
            },
        ),
        r"checksum mismatch",
    ),
    "size": (
        lambda f, p: craft(
            p,
            f,
            listed={
                n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b) + (n == "project.json")}
                for n, b in f.items()
            },
        ),
        r"size .* does not match",
    ),
    "media under a wrong hash": (
        lambda f, p: craft(
            p,
            _with(
                {n: b for n, b in f.items() if not n.endswith(".srt")},
                **{next(n for n in f if n.endswith(".srt")): b"tampered"},
            ),
        ),
        r"not named by its content hash",
    ),
    "future format": (lambda f, p: craft(p, f, manifest={"format_version": 99}), r"newer CHIEF"),
    "invalid project.json": (
        lambda f, p: craft(p, _project(f, lambda d: d["versions"][0]["version"]["storyboard"].update(scenes=[]))),
        r"invalid project.json: versions.0.version.storyboard.scenes",
    ),
    "project.json not JSON": (lambda f, p: craft(p, _with(f, **{"project.json": b"{not json"})), r"not valid JSON"),
    "dangling reference": (
        lambda f, p: craft(p, _project(f, lambda d: d["versions"][1]["version"].update(parent_number=7))),
        r"parent v7",
    ),
    "non-zip": (lambda f, p: (p.write_text("hello, not a zip"), p)[1], r"not a zip archive"),
}


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize("case", sorted(REFUSALS))
def test_refused_with_one_line_and_nothing_written(source, tmp_path, case):
    st, pid, out = source
    before = counts(st)
    make, reason = REFUSALS[case]
    bad = make(valid_files(out), tmp_path / "bad.chief.zip")
    with pytest.raises(ArchiveError, match=reason) as e:
        st.import_project(bad)
    assert "\n" not in str(e.value)
    assert counts(st) == before


def test_truncated_archive_refused(source, tmp_path):
    st, pid, out = source
    before = counts(st)
    blob = out.read_bytes()
    for cut in (len(blob) // 2, len(blob) - 10):
        bad = tmp_path / f"cut{cut}.chief.zip"
        bad.write_bytes(blob[:cut])
        with pytest.raises(ArchiveError, match="not a zip archive, or a truncated one"):
            st.import_project(bad)
    assert counts(st) == before


def test_total_size_limit(source, tmp_path, monkeypatch):
    st, pid, out = source
    monkeypatch.setattr(archives, "MAX_TOTAL_BYTES", 10_000)
    with pytest.raises(ArchiveError, match="expands beyond 10000 bytes"):
        st.import_project(out)


def test_failed_database_write_leaves_no_rows(source, tmp_path, monkeypatch):
    """Media may land in the store (content-addressed, harmless) but the rows are all or nothing."""
    st, pid, out = source
    st2 = new_studio(tmp_path / "other")
    before = counts(st2)["rows"]

    def broken(*args, **kw):  # the renders come after the project and its versions: those must go too
        raise RuntimeError("disk full")

    monkeypatch.setattr(repo_module.Unit, "add_render", broken)
    with pytest.raises(RuntimeError):
        st2.import_project(out)
    monkeypatch.undo()
    assert counts(st2)["rows"] == before


def test_crafted_valid_archive_is_accepted(source, tmp_path):
    """The crafting helper itself makes importable archives: the refusals above are about what they change."""
    st, pid, out = source
    good = craft(tmp_path / "good.chief.zip", valid_files(out))
    assert st.import_project(good).number == 2


# ------------------------------------------------------------------------------------ CLI


def test_cli_export_import(source, tmp_path):
    from click.testing import CliRunner

    from app.cli import main

    st, pid, out = source
    runner = CliRunner()
    home = str(st.config.home)
    res = runner.invoke(
        main, ["--home", home, "export", pid, "-o", str(tmp_path / "c.chief.zip"), "--versions", "1", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["archive"].endswith("c.chief.zip")
    res = runner.invoke(
        main, ["--home", str(tmp_path / "h2"), "import", str(tmp_path / "c.chief.zip"), "--as", "Moved", "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["title"] == "Moved"
    (tmp_path / "junk.chief.zip").write_bytes(b"junk")
    res = runner.invoke(main, ["--home", str(tmp_path / "h2"), "import", str(tmp_path / "junk.chief.zip")])
    assert res.exit_code == 1
    assert res.stderr.strip() == "error: junk.chief.zip: not a zip archive, or a truncated one"


# ------------------------------------------------------------------------------------ older archives

FORMAT1 = Path(__file__).parent / "data" / "format1.chief.zip"  # written by CHIEF before the domain records


def test_format1_archive_is_upgraded_on_import(tmp_path):
    st = new_studio(tmp_path / "home")
    v = st.import_project(FORMAT1)
    assert v.number == 2 and v.parent_number == 1 and v.storyboard.title == "Format one"
    assert st.project(v.project_id).idea == "a format-1 archive"
    assert [c.persona_id for c in st.critiques(v.project_id, 1)] == ["film_critic"]
    record = st.proposal(v.project_id, ref=1)
    assert record.accepted_as == 2 and record.proposal.edits[0].op == "set"
    assert st.render_info(v.project_id, 1).stream_copied  # the old media flag became a field
    info = st.render(v.project_id, 1)  # its clip-cache entries came along
    assert (info.rendered, info.reused) == (0, 2)
    again = json.loads(members(st.export_project(v.project_id, tmp_path / "again.chief.zip"))["project.json"])
    assert again["format_version"] == archives.FORMAT_VERSION


def test_format3_archive_with_text_dialogue_is_upgraded_to_lines(source, tmp_path):
    """An archive from before lines (format 3: a shot's dialogue is text) imports with the dialogue as lines."""
    st, pid, out = source

    def to_format3(data: dict) -> None:
        data["format_version"] = 3
        for bundle in data["versions"]:
            for scene in bundle["version"]["storyboard"]["scenes"]:
                scene.pop("music")
                for shot in scene["shots"]:
                    shot.pop("sounds")
                    shot["dialogue"] = "Keeper (hoarse): The storm breaks." if shot["shot_id"] == "s3" else ""

    old = craft(tmp_path / "f3.chief.zip", _project(valid_files(out), to_format3))
    v = st.import_project(old)
    assert v.storyboard.shot("s3").dialogue == [Line(character="Keeper", line="The storm breaks.", delivery="hoarse")]
    assert v.storyboard.shot("s3").subtitles() == ["Keeper: The storm breaks."]  # s3 does not show the keeper
    assert all(s.dialogue == [] for s in v.storyboard.shots() if s.shot_id != "s3")
    info = st.render(v.project_id)  # the same pictures: every clip came along
    assert info.rendered == 0
