"""The web app's first run: with no LLM configured, the start screen and Settings offer the three ways on (pull a
local model, point to a server, keep the embedded agents); once one is configured, the offer is gone."""

from __future__ import annotations

import pytest

from app.config import load_config
from app.studio import Studio


def offers(home, environ) -> dict[str, str]:
    from app.ui import create_app

    studio = Studio(load_config({"home": home, "narration": False}, environ=environ))
    demo = create_app(studio)
    found = {
        b.elem_id: b.value
        for b in demo.blocks.values()
        if getattr(b, "elem_id", None) in ("llm_offer", "llm_offer_settings")
    }
    studio.db.close()
    return found


@pytest.mark.slow
def test_the_first_run_offers_a_local_model_until_an_llm_is_configured(tmp_path):
    first = offers(tmp_path / "a", {})
    assert set(first) == {"llm_offer", "llm_offer_settings"}
    for text in first.values():
        assert "No LLM found" in text and "chief models pull --llm" in text and "about 2.1 GB" in text
        assert "embedded heuristic agents" in text
    configured = offers(tmp_path / "b", {"CHIEF_LOCAL_LLM": str(tmp_path / "m.gguf")})
    assert configured == {"llm_offer": "", "llm_offer_settings": ""}
    chosen = offers(tmp_path / "c", {"CHIEF_AGENTS": "offline"})  # the embedded agents, chosen: nothing to offer
    assert chosen == {"llm_offer": "", "llm_offer_settings": ""}
