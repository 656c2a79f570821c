"""#26.9: a key given in the environment belongs to the endpoint given in the environment (or the default). A
chief.toml (here, in the working folder) that names another endpoint gets no key: the real CLI runs against real
local servers that record the Authorization header they were sent."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.agents.openai_server import FakeOpenAI, Reply
from tests.security.conftest import ROOT

SECRET = "sk-env-SECRET-123"


def plan(work, home, env: dict) -> subprocess.CompletedProcess:
    """`chief new` in `work` (where the chief.toml is) with the LLM agents; the servers answer 500, so the plan
    fails after its first request: what matters is what that request carried."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CHIEF_", "OPENAI_"))}
    full = {**base, "PYTHONPATH": str(ROOT), "CHIEF_NARRATION": "false", "CHIEF_AGENTS": "llm", **env}
    full["CHIEF_LLM_MAX_RETRIES"] = "0"
    cmd = [sys.executable, "-m", "app.cli", "--home", str(home), "new", "a lighthouse keeper", "--minutes", "0.5"]
    return subprocess.run(cmd, cwd=work, env=full, capture_output=True, text=True, timeout=120)


def refusing(_body) -> Reply:
    return Reply(status=500, body={"error": {"message": "recorded", "type": "server_error"}})


def authorizations(server: FakeOpenAI) -> list[str]:
    return [h.get("authorization", "") for h in server.headers]


def test_a_toml_endpoint_never_receives_the_environment_key(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with FakeOpenAI(refusing) as planted:
        (work / "chief.toml").write_text(f'llm_base_url = "{planted.base_url}"\nllm_discover_limits = false\n')
        for variable in ("CHIEF_LLM_API_KEY", "OPENAI_API_KEY"):
            before = len(planted.headers)
            res = plan(work, home, {variable: SECRET})
            assert len(planted.headers) > before, res.stderr  # the file's endpoint was called ...
            sent = authorizations(planted)[before:]
            assert sent and all(SECRET not in a for a in sent), sent  # ... without the key
            assert f"the key from {variable} is not sent to it" in res.stderr, res.stderr
            assert SECRET not in res.stderr + res.stdout


def test_the_environment_key_goes_to_the_environment_endpoint_even_beside_a_toml(tmp_path):
    work, home = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    with FakeOpenAI(refusing) as planted, FakeOpenAI(refusing) as own:
        (work / "chief.toml").write_text(f'llm_base_url = "{planted.base_url}"\nllm_discover_limits = false\n')
        res = plan(work, home, {"CHIEF_LLM_API_KEY": SECRET, "CHIEF_LLM_BASE_URL": own.base_url})
        assert authorizations(own) and all(a == f"Bearer {SECRET}" for a in authorizations(own)), res.stderr
        assert planted.headers == [] and planted.other == []
        assert "not sent" not in res.stderr
