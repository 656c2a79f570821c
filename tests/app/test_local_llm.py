"""CHIEF_LOCAL_LLM: the agents use a GGUF model that CHIEF runs itself, labelled as such; nothing starts until an
agent needs it, and a model that is not there is one line naming the pull command. (The real server, planning:
tests/real/test_local_llm.py.)"""

from __future__ import annotations

import pytest

from agents.base import AgentError
from app.config import load_config
from app.studio import Studio


def test_the_local_model_is_labelled_starts_only_when_used_and_a_missing_one_is_one_line(tmp_path):
    from agents import local_llm

    missing = tmp_path / "models" / "tiny-instruct-q4_k_m.gguf"
    st = Studio(load_config({"home": tmp_path / "home"}, environ={"CHIEF_LOCAL_LLM": str(missing)}))
    label = st.status().agents
    assert label.startswith("llm: local model tiny-instruct-q4_k_m.gguf (run by CHIEF: llama-cpp-python on 127.0.0.1:")
    (server,) = [s for (spec, _), s in local_llm._running.items() if spec == str(missing)]
    assert server.proc is None  # built, labelled, not started
    with pytest.raises(AgentError) as e:
        st.create_project("A keeper relights a lighthouse lamp before the ferry reaches the rocks")
    assert str(e.value) == (
        f"local model {str(missing)!r} not found: no such file, and not in the Hugging Face cache "
        "(fetch one with `chief models pull --llm`)"
    )
    assert server.proc is None
    st.db.close()


def test_a_configured_endpoint_wins_over_the_local_model(tmp_path):
    env = {"CHIEF_LOCAL_LLM": str(tmp_path / "m.gguf"), "CHIEF_LLM_BASE_URL": "http://127.0.0.1:9/v1"}
    st = Studio(load_config({"home": tmp_path / "home"}, environ=env))
    assert "local model" not in st.status().agents and "127.0.0.1:9" in st.status().agents
    st.db.close()


def test_without_any_llm_the_agents_are_the_embedded_ones_and_say_so(tmp_path):
    st = Studio(load_config({"home": tmp_path / "home"}, environ={}))
    assert st.status().agents == "offline (embedded heuristic agents, no LLM)"
    st.db.close()
