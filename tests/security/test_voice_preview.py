"""#34.7: `chief voice --preview` that fails (exit 1) stores nothing: the voice change used to be kept as a new
draft although the command said it failed."""

from __future__ import annotations

import yaml

from storage.schema import Storyboard
from tests.process import free_port
from tests.security.conftest import chief, one_line_error
from tests.security.hostile_archives import BOARD


def project(make_studio) -> tuple[str, object]:
    data = yaml.safe_load(BOARD)
    data["characters"] = [{"name": "Mara", "description": "a sailor"}]
    st = make_studio()
    pid = st.create_from_storyboard(Storyboard.model_validate(data)).project_id
    return pid, st


def test_a_preview_the_endpoint_fails_keeps_no_voice_change(make_studio, tmp_path):
    pid, st = project(make_studio)
    out = tmp_path / "line.wav"
    env = {"CHIEF_SPEECH_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "CHIEF_LLM_MAX_RETRIES": "0"}
    res = chief(
        tmp_path / "home", "voice", pid, "Mara", "--engine", "speech", "--speaker", "alloy", "--preview",
        "-o", str(out), env=env,
    )  # fmt: skip
    assert "speech endpoint" in one_line_error(res)
    assert [n.number for n in st.versions(pid)] == [1] and not out.exists()
    assert st.version(pid).storyboard.characters[0].voice is None


def test_a_preview_that_cannot_be_written_keeps_no_voice_change(make_studio, tmp_path):
    pid, st = project(make_studio)
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file")
    res = chief(tmp_path / "home", "voice", pid, "Mara", "--pitch", "4", "--preview", "-o", str(blocker / "x.wav"))
    one_line_error(res)
    assert [n.number for n in st.versions(pid)] == [1]
    assert st.version(pid).storyboard.characters[0].voice is None


def test_a_preview_that_works_stores_the_change_it_spoke(make_studio, tmp_path):
    pid, st = project(make_studio)
    out = tmp_path / "line.wav"
    res = chief(tmp_path / "home", "voice", pid, "Mara", "--pitch", "4", "--preview", "-o", str(out))
    assert res.returncode == 0, res.stderr
    assert out.stat().st_size > 1000 and [n.number for n in st.versions(pid)] == [1, 2]
    assert st.version(pid).storyboard.characters[0].voice.pitch == 4
