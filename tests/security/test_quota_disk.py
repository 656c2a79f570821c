"""The disk quota counts what an account had written for download (issue 54 item 4): its projects' exports and
hand-off zips (`exports/<project>/`) and Gradio's copies of them; over the quota a fork, an export, a hand-off and an
import are refused in one line with nothing written, and an import that would go over is refused too."""

from __future__ import annotations

import pytest

from app.server.quotas import EXPORTS, QuotaReached, Quotas, disk_bytes
from storage.owners import Actor, acting
from tests.conftest import tiny_board
from tests.security.test_quota import snapshot


def test_the_exports_folder_is_the_one_the_app_writes_to():
    from app.ui.player import EXPORTS as SERVED

    assert EXPORTS == SERVED


@pytest.fixture
def made(make_studio):
    """A studio and carol's rendered project, with the quota as given."""

    def make(**settings):
        st = make_studio(**settings)
        with acting(Actor("carol")):
            pid = st.create_from_storyboard(tiny_board(2)).project_id
            st.render(pid)
        return st, pid

    return make


def test_downloads_and_gradios_copies_of_them_count_for_their_owner(made, tmp_path):
    st, pid = made()
    with acting(Actor("dave")):  # another account, whose downloads are not carol's
        other = st.create_from_storyboard(tiny_board(1).model_copy(update={"title": "Dave's"})).project_id
    repo, home = st.ctx.repo, st.config.home
    start = disk_bytes(repo, "carol")
    with repo.read() as u:
        assert start == u.owner_media_bytes("carol") > 0  # nothing downloaded yet: the media alone

    with acting(Actor("carol")):
        zip_path = st.export_handoff(pid, None, home / EXPORTS / pid / "Film-v1-for-an-editor.zip")
        archive = st.export_project(pid, home / EXPORTS / pid / "film.chief.zip")
    made_now = zip_path.stat().st_size + archive.stat().st_size
    assert disk_bytes(repo, "carol") == start + made_now

    # a film named for download is a hard link to the stored file: no more disk, not counted twice
    film = home / EXPORTS / pid / "Film-v1.mp4"
    film.hardlink_to(st.film_path(st.render_info(pid)))
    assert disk_bytes(repo, "carol") == start + made_now

    # Gradio serves each under a folder named for its content: a copy of the same name and size counts, another's not
    copies = home / "tmp" / "gradio"
    for i, f in enumerate((zip_path, film)):
        (copies / f"h{i}").mkdir(parents=True)
        (copies / f"h{i}" / f.name).write_bytes(f.read_bytes())
    (copies / "h9").mkdir()
    (copies / "h9" / "someone-else.zip").write_bytes(b"x" * 5000)
    film_bytes = film.stat().st_size
    assert disk_bytes(repo, "carol") == start + made_now + zip_path.stat().st_size + film_bytes

    # dave's downloads are his own
    (home / EXPORTS / other).mkdir(parents=True)
    (home / EXPORTS / other / "big.zip").write_bytes(b"y" * 7000)
    assert disk_bytes(repo, "carol") == start + made_now + zip_path.stat().st_size + film_bytes
    with repo.read() as u:
        assert disk_bytes(repo, "dave") == u.owner_media_bytes("dave") + 7000


def test_a_job_is_refused_once_downloads_fill_the_quota(made):
    """The render queue's check (`Quotas.check`) counts downloads too: media under the quota, media + a zip over."""
    st, pid = made()
    repo = st.ctx.repo
    with repo.read() as u:
        media = u.owner_media_bytes("carol")
    quotas = Quotas(disk_mb=(media + 40_000) / (1 << 20))
    quotas.check(repo, "carol", "render", 0)  # under it
    folder = st.config.home / EXPORTS / pid
    folder.mkdir(parents=True)
    (folder / "old-handoff.zip").write_bytes(b"z" * 50_000)
    with pytest.raises(QuotaReached) as e:
        quotas.check(repo, "carol", "takes", 0)
    assert "\n" not in str(e.value) and str(e.value).startswith("carol's projects use ")


@pytest.mark.parametrize("action", ["fork", "export", "handoff", "timeline", "import"])
def test_over_the_quota_each_is_refused_in_one_line_and_writes_nothing(made, tmp_path, action):
    st, pid = made()
    archive = st.export_project(pid, tmp_path / "elsewhere" / "a.chief.zip")  # before the quota: the local owner's
    with st.ctx.repo.read() as u:
        used = u.owner_media_bytes("carol")
    quota = used / (1 << 20)  # exactly at it
    st.reconfigure(st.config.model_copy(update={"quota_disk_mb": quota}))
    out = st.config.home / EXPORTS / pid
    before = snapshot(st)
    run = {
        "fork": lambda: st.fork(pid),
        "export": lambda: st.export_project(pid, out / "x.chief.zip"),
        "handoff": lambda: st.export_handoff(pid, None, out / "x-for-an-editor.zip"),
        "timeline": lambda: st.export_timeline(pid, None, out / "cut"),
        "import": lambda: st.import_project(archive),
    }[action]
    with acting(Actor("carol")), pytest.raises(QuotaReached) as e:
        run()
    line = str(e.value)
    assert "\n" not in line and line.startswith("carol's projects use ") and "MB disk quota" in line
    assert snapshot(st) == before and not out.exists()
    with acting(Actor("erin")):  # an account with room is not refused
        st.import_project(archive)


def test_an_import_that_would_go_over_is_refused(made, tmp_path):
    st, pid = made()
    archive = st.export_project(pid, tmp_path / "a.chief.zip")
    st.reconfigure(st.config.model_copy(update={"quota_disk_mb": 0.01}))  # 10 kB: less than the archive's media
    before = snapshot(st)
    with acting(Actor("frank")), pytest.raises(QuotaReached) as e:
        st.import_project(archive)
    assert "frank's projects use 0.0 MB of the 0.01 MB disk quota and this brings " in str(e.value)
    assert snapshot(st) == before
