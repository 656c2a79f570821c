"""#34.3–4: the speech endpoint's key and URL.

- A key from the environment goes only to the speech endpoint from the environment: a chief.toml (the working
  folder's or the data folder's) that names `speech_base_url` gets no key, and the command says so (the LLM key's
  rule, app/config.py `KEYED_ENDPOINTS`). Real CLI runs against local servers that record what they were sent.
- Credentials in the URL (`user:password@`, `?key=`, any query) are never shown (CLI errors, the web's messages
  and labels, config errors, reprs), and the request goes to `{path}/audio/speech` with the query kept as a query
  (it was spliced into the path: `/v1/?key=…audio/speech`)."""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import threading
import wave
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import numpy as np
import pytest
import yaml

from storage.schema import Storyboard
from tests.process import free_port
from tests.security.conftest import ROOT
from tests.security.hostile_archives import BOARD

SECRET = "sk-speech-env-SECRET-42"


def wav(seconds: float = 0.3, rate: int = 24000) -> bytes:
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        t = np.arange(round(seconds * rate)) / rate
        w.writeframes((0.4 * np.sin(2 * np.pi * 330 * t) * 32767).astype("<i2").tobytes())
    return buf.getvalue()


class Recorder:
    """A local speech endpoint: records every request's path (with its query) and headers; answers a WAV, or
    `status` with a body that echoes what it was sent (as some gateways' error pages do)."""

    def __init__(self, status: int = 200) -> None:
        self.status, self.requests = status, []
        rec = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                rec.requests.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}})
                if rec.status == 200:
                    body, kind = wav(), "audio/wav"
                else:
                    echo = f"denied {self.path} {self.headers.get('Authorization')}"
                    body, kind = json.dumps({"error": {"message": echo}}).encode(), "application/json"
                self.send_response(rec.status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def authorizations(self) -> list[str]:
        return [r["headers"].get("authorization", "") for r in self.requests]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()


def board() -> Storyboard:
    data = yaml.safe_load(BOARD)
    data["characters"] = [{"name": "Mara", "description": "a sailor"}]
    return Storyboard.model_validate(data)


def voice_preview(work, home, env: dict) -> subprocess.CompletedProcess:
    """`chief voice P Mara --engine speech --preview` run in `work` (where a chief.toml may be)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CHIEF_", "OPENAI_"))}
    full = {**base, "PYTHONPATH": str(ROOT), "CHIEF_NARRATION": "false", "CHIEF_AGENTS": "offline", **env}
    full["CHIEF_SOUND_CACHE"] = str(home / "sound")
    cmd = [sys.executable, "-m", "app.cli", "--home", str(home)]
    res = subprocess.run([*cmd, "projects", "--json"], cwd=work, env=full, capture_output=True, text=True, timeout=120)
    pid = json.loads(res.stdout)[0]["id"]
    args = ["voice", pid, "Mara", "--engine", "speech", "--speaker", "alloy", "--preview", "-o", str(work / "x.wav")]
    return subprocess.run([*cmd, *args], cwd=work, env=full, capture_output=True, text=True, timeout=120)


@pytest.fixture
def home(make_studio, tmp_path):
    make_studio().create_from_storyboard(board())
    return tmp_path / "home"


@pytest.mark.parametrize("where", ["working folder", "data folder"])
def test_a_toml_speech_endpoint_never_receives_the_environment_key(home, tmp_path, where):
    work = tmp_path / "work"
    work.mkdir()
    with Recorder() as planted:
        toml = (work if where == "working folder" else home) / "chief.toml"
        toml.write_text(f'speech_base_url = "{planted.base_url}"\n')
        res = voice_preview(work, home, {"CHIEF_SPEECH_API_KEY": SECRET})
        assert planted.requests, res.stderr  # the file's endpoint was used ...
        assert all(SECRET not in a for a in planted.authorizations()), planted.authorizations()  # ... without the key
        assert f"the speech endpoint comes from {toml}, so the key from CHIEF_SPEECH_API_KEY is not sent to it" in (
            res.stderr
        )
        assert SECRET not in res.stderr + res.stdout


def test_the_environment_speech_key_goes_to_the_environment_endpoint_even_beside_a_toml(home, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with Recorder() as planted, Recorder() as own:
        (work / "chief.toml").write_text(f'speech_base_url = "{planted.base_url}"\n')
        res = voice_preview(work, home, {"CHIEF_SPEECH_API_KEY": SECRET, "CHIEF_SPEECH_BASE_URL": own.base_url})
        assert res.returncode == 0, res.stderr
        assert own.authorizations() == [f"Bearer {SECRET}"] and planted.requests == []
        assert "not sent" not in res.stderr


SHOWN_NEVER = ("pa55word", "QUERY-SECRET-9", "api-version", "sk-speech", "ann:")


def url_with_credentials(server: Recorder) -> str:
    return f"http://ann:pa55word@127.0.0.1:{server.port}/v1?key=QUERY-SECRET-9&api-version=2025-01"


def test_credentials_in_the_speech_url_are_sent_as_the_url_says_and_never_shown(home, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    with Recorder(status=401) as server:
        res = voice_preview(work, home, {"CHIEF_SPEECH_BASE_URL": url_with_credentials(server)})
        assert res.returncode == 1 and "Traceback" not in res.stderr, res.stderr
        error = [ln for ln in res.stderr.splitlines() if ln.startswith("error:")]
        assert len(error) == 1 and f"speech endpoint http://127.0.0.1:{server.port}/v1:" in error[0], res.stderr
        assert not any(s in res.stderr + res.stdout for s in SHOWN_NEVER), res.stderr
        got = urlsplit(server.requests[0]["path"])
        assert got.path == "/v1/audio/speech"  # the query is not spliced into the path
        assert parse_qs(got.query) == {"key": ["QUERY-SECRET-9"], "api-version": ["2025-01"]}
        basic = server.requests[0]["headers"]["authorization"]
        assert basic == "Basic " + base64.b64encode(b"ann:pa55word").decode()


def test_the_web_s_messages_and_labels_show_no_speech_credentials(make_studio, tmp_path):
    """What the web shows comes from the Studio: a line's ▶ (`line_sample`) and a voice's ▶ (`voice_sample`) fail
    with the endpoint's one line, and a spoken line's label names the endpoint: none holds a credential."""
    from app.errors import one_line
    from storage.schema import Line

    with Recorder(status=403) as refusing, Recorder() as answering:
        for server, fails in ((refusing, True), (answering, False)):
            url = url_with_credentials(server).replace("/v1?", "/v1/?")  # a trailing slash before the query too
            st = make_studio(home=tmp_path / f"home{server.port}", speech_base_url=url, speech_api_key="sk-speech-x")
            pid = st.create_from_storyboard(board()).project_id
            st.set_voice(pid, "Mara", {"engine": "speech", "speaker": "alloy"})
            if fails:
                for call in (
                    lambda: st.line_sample(pid, Line(character="Mara", line="Row, row!")),
                    lambda: st.voice_sample(pid, "Mara"),
                ):
                    with pytest.raises(Exception) as e:  # noqa: PT011 - the Studio's one-line error, whatever its class
                        call()
                    shown = one_line(e.value)
                    assert f"speech endpoint http://127.0.0.1:{server.port}/v1/" in shown, shown
                    assert not any(s in shown for s in SHOWN_NEVER), shown
            else:
                spoken = st._audio.say(st.version(pid).storyboard, "Mara", "Row, row!")
                assert spoken.label.startswith(f"speech endpoint http://127.0.0.1:{server.port}/v1/ (")
                assert not any(s in spoken.label for s in SHOWN_NEVER)
            assert {urlsplit(r["path"]).path for r in server.requests} == {"/v1/audio/speech"}
            assert all("key=QUERY-SECRET-9" in r["path"] for r in server.requests)


def test_a_bad_speech_url_is_refused_without_showing_it(tmp_path):
    from app.config import Config, load_config

    with pytest.raises(ValueError) as e:
        load_config({"home": tmp_path}, environ={"CHIEF_SPEECH_BASE_URL": "ftp://ann:pa55word@h/v1?key=QUERY-SECRET-9"})
    assert "CHIEF_SPEECH_BASE_URL: must start with http:// or https://" in str(e.value)
    assert not any(s in str(e.value) for s in SHOWN_NEVER), str(e.value)
    config = Config(home=tmp_path, speech_base_url="http://ann:pa55word@h/v1?key=QUERY-SECRET-9")
    assert not any(s in repr(config) for s in SHOWN_NEVER), repr(config)
