"""Changing the agent settings (app.agent_settings.apply): where the key may go, and who may change them."""

from __future__ import annotations

import pytest

from app.agent_settings import AgentSettings, apply
from app.config import load_config
from app.errors import StudioError

URL = "http://ann:s3cret@127.0.0.1:9/v1?tenant=t1"
SHOWN = "http://127.0.0.1:9/v1"  # URL as the Settings screen shows it (app.config.redact_url)
DROPPED = "the API key was dropped"


@pytest.fixture
def config(tmp_path, monkeypatch):
    """Endpoint URL (credentials in it) with the key sk-OLD, read from no file and no environment."""
    monkeypatch.chdir(tmp_path)
    return load_config({"home": tmp_path / "home", "llm_base_url": URL, "api_key": "sk-OLD-123456"}, environ={})


def test_the_same_endpoint_keeps_its_key(config):
    updated, notice = apply(config, AgentSettings(base_url=URL, critic_model="qwen"), from_own_page=True)
    assert (updated.llm_base_url, updated.api_key, updated.critic_model) == (URL, "sk-OLD-123456", "qwen")
    assert DROPPED not in notice


def test_the_endpoint_as_shown_is_the_same_endpoint(config):
    """The screen shows the URL without user:password and query; sent back as shown, it changes nothing."""
    updated, notice = apply(config, AgentSettings(base_url=f"  {SHOWN} "), from_own_page=True)
    assert (updated.llm_base_url, updated.api_key) == (URL, "sk-OLD-123456")
    assert DROPPED not in notice


def test_a_key_entered_for_the_same_endpoint_replaces_the_old(config):
    updated, _ = apply(config, AgentSettings(base_url=SHOWN, api_key=" sk-NEW-654321 "), from_own_page=True)
    assert (updated.llm_base_url, updated.api_key) == (URL, "sk-NEW-654321")


def test_a_new_endpoint_keeps_the_key_entered_with_it(config):
    updated, notice = apply(
        config, AgentSettings(base_url="http://127.0.0.1:8/v1", api_key="sk-NEW-654321"), from_own_page=True
    )
    assert (updated.llm_base_url, updated.api_key) == ("http://127.0.0.1:8/v1", "sk-NEW-654321")
    assert DROPPED not in notice


def test_a_new_endpoint_without_a_key_drops_the_old_key_and_says_so(config):
    updated, notice = apply(config, AgentSettings(base_url="http://127.0.0.1:8/v1"), from_own_page=True)
    assert (updated.llm_base_url, updated.api_key) == ("http://127.0.0.1:8/v1", "")
    assert notice.startswith("Applied for everyone on this server") and DROPPED in notice
    assert "sk-OLD" not in notice and "\n" not in notice


def test_a_new_endpoint_with_no_key_held_says_nothing_of_dropping(config):
    keyless = config.model_copy(update={"api_key": ""})
    updated, notice = apply(keyless, AgentSettings(base_url="http://127.0.0.1:8/v1"), from_own_page=True)
    assert (updated.llm_base_url, updated.api_key) == ("http://127.0.0.1:8/v1", "")
    assert DROPPED not in notice


def test_a_change_not_from_the_apps_own_page_is_refused(config):
    with pytest.raises(StudioError, match="only be changed from the app's own Settings page"):
        apply(config, AgentSettings(base_url=URL, critic_model="qwen"), from_own_page=False)


@pytest.mark.parametrize("name", ["llm_base_url", "api_key", "home"])
def test_the_endpoint_key_and_data_folder_cannot_come_in_as_other_settings(config, name):
    """`other` carries further settings by name; the endpoint and key only come through their own fields (where
    the key-dropping rule applies), and the data folder never changes."""
    with pytest.raises(StudioError, match="set by their own fields") as caught:
        apply(config, AgentSettings(base_url=URL, other={name: "http://127.0.0.1:8/v1"}), from_own_page=True)
    assert "\n" not in str(caught.value)


def test_other_settings_are_validated_in_one_line(config):
    updated, _ = apply(
        config, AgentSettings(base_url=URL, mode="offline", other={"llm_timeout": 30}), from_own_page=True
    )
    assert (updated.agents, updated.llm_timeout) == ("offline", 30)
    with pytest.raises(ValueError) as caught:
        apply(config, AgentSettings(base_url=URL, other={"llm_timeout": -1}), from_own_page=True)
    assert "llm_timeout" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    "name, value",
    [("auth", "me:secret"), ("allowed_hosts", "evil.example"), ("model", "/tmp/other-model"), ("ray_address", "auto")],
)
def test_other_settings_are_agent_settings_only(config, name, value):
    """The page sends a fixed set; a request naming the login, the hosts or the video model changes nothing."""
    with pytest.raises(StudioError, match=f"not an agent setting: {name}"):
        apply(config, AgentSettings(base_url=URL, other={name: value}), from_own_page=True)
