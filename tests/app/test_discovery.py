"""Finding model servers on loopback: against real local HTTP servers on free ports."""

from __future__ import annotations

import json
import socket
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from click.testing import CliRunner

from app.cli import main
from app.server import discovery
from app.server.discovery import Server, discover


@contextmanager
def serving(status: int, body: bytes, content_type: str = "application/json", headers: dict | None = None):
    """A real HTTP server on a free loopback port answering every GET with `status`, `headers` and `body`;
    yields (port, paths asked)."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            asked.append(self.path)
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], asked
    finally:
        server.shutdown()
        server.server_close()


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


MODELS = json.dumps(
    {"object": "list", "data": [{"id": "qwen2.5vl:3b", "object": "model"}, {"id": "llama3.2:1b", "object": "model"}]}
).encode()


def test_lists_the_models_of_servers_that_answer_and_skips_the_rest():
    with (
        serving(200, MODELS) as (good, asked),
        serving(404, b"<html>not here</html>", "text/html") as (web, _),
        serving(200, b"{not json") as (broken, _),
    ):
        found = discover(
            timeout=2, ports=(("Ollama", good), ("web page", web), ("broken", broken), ("nothing", closed_port()))
        )
    assert [s.name for s in found] == ["Ollama"]
    server = found[0]
    assert server.base_url == f"http://127.0.0.1:{good}/v1" and server.models == ["qwen2.5vl:3b", "llama3.2:1b"]
    assert asked == ["/v1/models"]
    line = server.setting_line("qwen2.5vl:3b")
    assert line == (
        f"CHIEF_LLM_BASE_URL=http://127.0.0.1:{good}/v1 CHIEF_CRITIC_MODEL=qwen2.5vl:3b "
        "CHIEF_REFINER_MODEL=qwen2.5vl:3b CHIEF_PLANNER_MODEL=qwen2.5vl:3b"
    )


def test_hostile_answers_are_bounded():
    odd = json.dumps({"data": [{"id": "ok-model"}, {"id": "has space"}, {"id": 7}, "x", {"id": "x" * 300}]}).encode()
    huge = json.dumps({"data": [{"id": "m" * 100}] * 20_000}).encode()
    with serving(200, odd) as (p1, _), serving(200, huge) as (p2, _):
        found = discover(timeout=2, ports=(("odd", p1), ("huge", p2)))
    assert [(s.name, s.models) for s in found] == [("odd", ["ok-model"])]


def test_a_redirect_is_not_followed():
    """A loopback port answering 302 cannot send the probe elsewhere: the server it names is never asked."""
    with serving(200, MODELS) as (elsewhere, hits):
        for code in (301, 302, 307, 308):
            location = {"Location": f"http://127.0.0.1:{elsewhere}/v1/models"}
            with serving(code, b"", headers=location) as (port, asked):
                assert discover(timeout=2, ports=(("Ollama", port),)) == [], code
            assert asked == ["/v1/models"], code
    assert hits == []


def test_no_ports_no_probe():
    assert discover(ports=()) == []


def test_chief_models_prints_each_model_with_its_setting(monkeypatch, tmp_path):
    with serving(200, MODELS) as (port, _):
        monkeypatch.setattr(discovery, "KNOWN", (("Ollama", port), ("LM Studio", closed_port())))
        runner = CliRunner()
        res = runner.invoke(main, ["--home", str(tmp_path), "models", "--timeout", "2"], catch_exceptions=False)
        data = json.loads(runner.invoke(main, ["--home", str(tmp_path), "--json", "models", "--timeout", "2"]).stdout)
    assert res.exit_code == 0
    assert f"Ollama at http://127.0.0.1:{port}/v1: 2 model(s)" in res.stdout
    assert f"CHIEF_LLM_BASE_URL=http://127.0.0.1:{port}/v1 CHIEF_CRITIC_MODEL=llama3.2:1b" in res.stdout
    assert [Server(**{k: v for k, v in s.items() if k != "settings"}).models for s in data["servers"]] == [
        ["qwen2.5vl:3b", "llama3.2:1b"]
    ]
    assert data["servers"][0]["settings"]["llama3.2:1b"].startswith(f"CHIEF_LLM_BASE_URL=http://127.0.0.1:{port}/v1")
    assert data["probed"][1].startswith("LM Studio 127.0.0.1:")


def test_chief_models_says_what_to_do_when_nothing_answers(monkeypatch, tmp_path):
    monkeypatch.setattr(discovery, "KNOWN", (("Ollama", closed_port()),))
    res = CliRunner().invoke(main, ["--home", str(tmp_path), "models"], catch_exceptions=False)
    assert res.exit_code == 0 and "no model server answered on Ollama 127.0.0.1:" in res.stdout
    assert "ollama serve" in res.stdout


def test_chief_models_takes_ports_from_the_option_and_the_setting(monkeypatch, tmp_path):
    with serving(200, MODELS) as (by_option, _), serving(200, MODELS) as (by_setting, _):
        monkeypatch.setattr(discovery, "KNOWN", (("Ollama", closed_port()),))
        runner = CliRunner()
        res = runner.invoke(main, ["--home", str(tmp_path), "--json", "models", "--port", str(by_option)])
        assert res.exit_code == 0, res.output
        assert [s["port"] for s in json.loads(res.stdout)["servers"]] == [by_option]
        monkeypatch.setenv("CHIEF_DISCOVERY_PORTS", str(by_setting))
        res = runner.invoke(main, ["--home", str(tmp_path), "--json", "models", "--port", str(by_option)])
        data = json.loads(res.stdout)
    assert [s["port"] for s in data["servers"]] == [by_setting, by_option]
    assert not any(p.startswith("Ollama") for p in data["probed"])  # the setting replaces the usual ports


def test_a_hostile_model_id_is_quoted_for_the_shell(monkeypatch, tmp_path):
    """A loopback server names a model `x;touch${IFS}…;`: the printed line, pasted into a shell, sets the
    variables to that text and runs nothing; ids with control characters are not listed at all."""
    import subprocess

    marker = tmp_path / "pwned"
    evil = "x;touch${IFS}pwned;$(touch${IFS}pwned)`touch${IFS}pwned`'\""  # run in tmp_path: makes ./pwned
    body = json.dumps({"data": [{"id": evil}, {"id": "ok\x1b[2Jmodel"}, {"id": "new\nline"}]}).encode()
    with serving(200, body) as (port, _):
        monkeypatch.setattr(discovery, "KNOWN", (("Ollama", port),))
        res = CliRunner().invoke(main, ["--home", str(tmp_path), "--json", "models"])
    server = json.loads(res.stdout)["servers"][0]
    assert server["models"] == [evil]
    line = server["settings"][evil]
    out = subprocess.run(["sh", "-c", f"{line} env"], capture_output=True, text=True, cwd=tmp_path, check=True)
    assert not marker.exists()
    assert f"CHIEF_PLANNER_MODEL={evil}" in out.stdout.splitlines()
