"""Changing the agents' endpoint, key and models while the web app runs: who may, and where the key may go.

The API key is the user's credential for one endpoint. It is never sent anywhere the user did not send
it: a changed endpoint drops the key held in memory unless a key is entered with it. And a change must
come from the app's own page (the caller says whether the request did; see app.server.security.same_origin),
so a page on another origin, in the user's browser, cannot point the agents, and whatever key they hold,
at a server of its choosing. That check reads headers a browser sets truthfully; a program that reaches
the port can forge them, which is why serving beyond loopback requires --auth.

The settings are the server's, not a browser session's: one server runs one set of agents.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from app.config import Config, redact_url, with_overrides
from app.errors import StudioError

# What `AgentSettings.other` may name: how the agents reach and use the endpoint, nothing else (not the login,
# the allowed hosts, the video model or the data folder).
AGENT_FIELDS = frozenset(
    f
    for f in Config.model_fields
    if (f.startswith("llm_") or f.endswith("_max_tokens") or f in ("frames_per_shot", "image_detail"))
) - {"llm_base_url"}

SCOPE_NOTE = (
    "These agent settings apply to everyone using this server, in every browser tab, until it "
    "restarts; nothing is saved."
)


class AgentSettings(BaseModel):
    """What the Settings screen sends. `base_url` may be the endpoint as shown (credentials hidden)."""

    base_url: str = ""
    api_key: str = ""
    critic_model: str = ""
    refiner_model: str = ""
    planner_model: str = ""
    mode: str = "auto"  # auto | llm | offline
    other: dict[str, Any] = Field(
        default_factory=dict,
        description=("further agent settings by name (llm_timeout, llm_concurrency, ...), validated like any setting"),
    )


def apply(config: Config, new: AgentSettings, *, from_own_page: bool) -> tuple[Config, str]:
    """The configuration with `new` applied, and what to tell the user. The endpoint sent back as shown
    (credentials hidden) is the same endpoint and keeps its key; a new endpoint keeps only a key entered with
    it. Raises StudioError when the request did not come from the app's own page or `new.other` names the
    endpoint, the key or the data folder, or anything that is not an agent setting (`AGENT_FIELDS`); ValueError (one line) for a bad value."""
    if not from_own_page:
        raise StudioError("agent settings can only be changed from the app's own Settings page")
    url, key = new.base_url.strip(), new.api_key.strip()
    same_endpoint = url in (config.llm_base_url, redact_url(config.llm_base_url))
    if {"llm_base_url", "api_key", "home"} & set(new.other):
        raise StudioError("the endpoint and the key are set by their own fields; the data folder cannot change")
    if stray := sorted(set(new.other) - AGENT_FIELDS):
        raise StudioError(f"not an agent setting: {', '.join(stray)} (the Settings page changes only the agents)")
    changes = {
        **new.other,
        "critic_model": new.critic_model.strip(),
        "refiner_model": new.refiner_model.strip(),
        "planner_model": new.planner_model.strip(),
        "agents": "" if new.mode in ("", "auto") else new.mode,
    }
    if not same_endpoint:
        changes["llm_base_url"] = url
    if key or not same_endpoint:
        changes["api_key"] = key  # a new endpoint never receives the key meant for the old one
    updated = with_overrides(config, **changes)
    notice = "Applied for everyone on this server until it restarts (not saved)."
    if config.api_key and not key and not same_endpoint:
        notice += " The endpoint changed, so the API key was dropped: enter the key for the new endpoint with it."
    return updated, notice
