"""Configuration: flags > environment > chief.toml > defaults, typed values, one-line errors, the generated table."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import Config, load_config, settings_table, with_overrides

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def work(tmp_path, monkeypatch):
    """An empty working folder (no chief.toml) as the cwd."""
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def home(tmp_path):
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


def load(home, flags=None, **environ):
    return load_config({"home": home, **(flags or {})}, environ=environ)


def error_of(home, flags=None, **environ) -> str:
    with pytest.raises(ValueError) as caught:
        load(home, flags, **environ)
    message = str(caught.value)
    assert "\n" not in message, message
    return message


def test_flag_beats_environment_beats_toml_beats_default(work, home):
    (work / "chief.toml").write_text('frames_per_shot = 5\ncritic_model = "from-toml"\nllm_timeout = 30\n')
    env = {"CHIEF_FRAMES_PER_SHOT": "6", "CHIEF_CRITIC_MODEL": "from-env"}

    assert load(home).llm_timeout == 30  # toml over the default (120)
    assert load(home).llm_max_retries == 3  # untouched: the default
    assert load(home, **env).frames_per_shot == 6  # environment over toml
    assert load(home, **env).critic_model == "from-env"
    assert load(home, {"frames_per_shot": 8}, **env).frames_per_shot == 8  # flag over environment
    assert load(home, {"frames_per_shot": None}, **env).frames_per_shot == 6  # None = flag not given
    (work / "chief.toml").unlink()
    assert load(home).frames_per_shot == 3 and load(home).llm_timeout == 120


def test_renamed_variables_are_read_by_their_exact_names(work, home):
    cfg = load(
        home,
        CHIEF_VIDEO_BACKEND="diffusers",
        CHIEF_VIDEO_MODEL="/models/ltx",
        CHIEF_VIDEO_I2V_MODEL="/models/i2v",
        CHIEF_LLM_API_KEY="sk-a",
        OPENAI_API_KEY="sk-b",
        CHIEF_AUTH="u:p",
    )
    assert (cfg.backend, cfg.model, cfg.i2v_model, cfg.api_key, cfg.auth) == (
        "diffusers",
        "/models/ltx",
        "/models/i2v",
        "sk-a",
        "u:p",
    )
    assert load(home, OPENAI_API_KEY="sk-b").api_key == "sk-b"
    assert load(home, {"api_key": "sk-flag"}, OPENAI_API_KEY="sk-b").api_key == "sk-flag"
    # the setting's own name is not a variable for a renamed setting
    assert load(home, CHIEF_BACKEND="diffusers", CHIEF_MODEL="x", CHIEF_API_KEY="sk-c").api_key == ""
    assert load(home, CHIEF_BACKEND="diffusers", CHIEF_MODEL="x").backend == "animatic"
    assert load(home, CHIEF_VIDEO_BACKEND="").backend == "animatic"  # empty = not set


def test_environ_mapping_isolates_from_the_process_environment(work, home, monkeypatch):
    monkeypatch.setenv("CHIEF_FRAMES_PER_SHOT", "9")
    assert load_config({"home": home}, environ={}).frames_per_shot == 3
    assert load_config({"home": home}).frames_per_shot == 9


def test_booleans_take_the_usual_spellings(work, home):
    for text, value in (
        ("1", True),
        ("yes", True),
        ("TRUE", True),
        ("on", True),
        ("0", False),
        ("no", False),
        ("false", False),
        ("off", False),
    ):
        assert load(home, CHIEF_CPU_OFFLOAD=text).cpu_offload is value, text


def test_toml_in_the_working_folder_wins_over_the_data_folders(work, home):
    (home / "chief.toml").write_text('critic_model = "home-critic"\nrefiner_model = "home-refiner"\n')
    assert load(home).critic_model == "home-critic"
    assert load_config(environ={"CHIEF_HOME": str(home)}).refiner_model == "home-refiner"  # found via CHIEF_HOME

    (work / "chief.toml").write_text('critic_model = "cwd-critic"\n')
    cfg = load(home)
    assert cfg.critic_model == "cwd-critic"
    assert cfg.refiner_model == ""  # only the first file found is read


@pytest.mark.parametrize(
    "line, key",
    [('api_key = "sk-in-a-file"', "api_key"), ('auth = "me:pw-in-a-file"', "auth"), ('home = "/elsewhere"', "home")],
)
def test_credentials_and_home_in_a_toml_are_refused(work, home, line, key):
    (work / "chief.toml").write_text(line + "\n")
    message = error_of(home)
    assert str(work / "chief.toml") in message and key in message
    assert "in-a-file" not in message


def test_unknown_toml_key_is_refused_naming_file_and_key(work, home):
    (home / "chief.toml").write_text('backend = "animatic"\ncolour = "red"\n')
    message = error_of(home)
    assert message.startswith(str(home / "chief.toml")) and "'colour'" in message


def test_malformed_toml_is_one_line_naming_the_file(work, home):
    (work / "chief.toml").write_text("backend = \n")
    assert error_of(home).startswith(str(work / "chief.toml"))


@pytest.mark.parametrize(
    "variable, value, expected",
    [
        ("CHIEF_FRAMES_PER_SHOT", "0", "CHIEF_FRAMES_PER_SHOT: must be at least 1 (got 0)"),
        ("CHIEF_NARRATION", "maybe", "CHIEF_NARRATION: must be true or false (1/0, yes/no, on/off) (got maybe)"),
        ("CHIEF_VIDEO_BACKEND", "sora", "CHIEF_VIDEO_BACKEND: must be animatic or diffusers (got sora)"),
        ("CHIEF_AGENTS", "smart", "CHIEF_AGENTS: must be llm or offline, or empty (got smart)"),
        ("CHIEF_LLM_TIMEOUT", "0", "CHIEF_LLM_TIMEOUT: must be more than 0 (got 0)"),
        ("CHIEF_LLM_MAX_RETRIES", "99", "CHIEF_LLM_MAX_RETRIES: must be at most 10 (got 99)"),
        ("CHIEF_LLM_CONCURRENCY", "0", "CHIEF_LLM_CONCURRENCY: must be at least 1 (got 0)"),
        ("CHIEF_STEPS", "many", "CHIEF_STEPS: must be a whole number (got many)"),
        ("CHIEF_IMAGE_DETAIL", "max", "CHIEF_IMAGE_DETAIL: must be low or high or auto (got max)"),
    ],
)
def test_a_bad_variable_is_one_line_naming_it(work, home, variable, value, expected):
    assert error_of(home, **{variable: value}) == expected


def test_a_bad_value_names_where_it_came_from(work, home):
    assert error_of(home, {"frames_per_shot": 0}) == "frames_per_shot: must be at least 1 (got 0)"
    assert error_of(home, {"colour": "red"}) == "colour: unknown setting"
    assert error_of(home, CHIEF_VIDEO_BACKEND="diffusers") == (
        "CHIEF_VIDEO_BACKEND=diffusers needs CHIEF_VIDEO_MODEL (a local folder or a cached hub id)"
    )
    with pytest.raises(ValueError, match=r"^frames_per_shot: must be at least 1 \(got 0\)$"):
        with_overrides(load(home), frames_per_shot=0)
    (work / "chief.toml").write_text("llm_concurrency = 500\n")
    assert error_of(home) == f"{work / 'chief.toml'}: llm_concurrency: must be at most 64 (got 500)"


def test_with_overrides_validates_and_keeps_the_rest(work, home):
    cfg = load(home, CHIEF_CRITIC_MODEL="critic-x")
    changed = with_overrides(cfg, agents="llm", api_key="sk-ui")
    assert isinstance(changed, Config)
    assert (changed.agents, changed.api_key, changed.critic_model, changed.steps) == ("llm", "sk-ui", "critic-x", None)
    assert cfg.agents == "" and cfg.api_key == ""  # the original is unchanged (frozen)
    with pytest.raises(ValueError, match="^agents: must be llm or offline, or empty"):
        with_overrides(cfg, agents="smart")


def test_describe_and_repr_never_show_credentials(work, home):
    cfg = load(
        home,
        CHIEF_LLM_BASE_URL="https://user:hunter2@llm.example:8443/v1?token=abc123",
        CHIEF_LLM_API_KEY="sk-SECRET-1",
        CHIEF_AUTH="me:pw-SECRET-2",
    )
    described = cfg.describe()
    assert described["llm_endpoint"] == "https://llm.example:8443/v1"
    shown = repr(described) + repr(cfg) + str(cfg)
    for secret in ("hunter2", "user:", "abc123", "sk-SECRET-1", "pw-SECRET-2"):
        assert secret not in shown, secret
    message = error_of(home, CHIEF_LLM_BASE_URL="ftp://user:hunter2@host/x")
    assert message.startswith("CHIEF_LLM_BASE_URL: must start with http") and "hunter2" not in message


def test_vae_tiling_turns_on_tiling_only(work, home):
    from app.factory import make_backend

    diffusers = {"CHIEF_VIDEO_BACKEND": "diffusers", "CHIEF_VIDEO_MODEL": str(home / "model"), "CHIEF_DEVICE": "cpu"}
    tiled = make_backend(load(home, **diffusers, CHIEF_VAE_TILING="1"))
    assert (tiled.vae_tiling, tiled.vae_slicing) == (True, False)
    sliced = make_backend(load(home, **diffusers, CHIEF_VAE_SLICING="1"))
    assert (sliced.vae_tiling, sliced.vae_slicing) == (False, True)


def test_docs_settings_table_is_current():
    assert (ROOT / "docs" / "settings.md").read_text() == settings_table(), (
        "docs/settings.md is stale: run `python -m app.config > docs/settings.md`"
    )


def test_every_setting_is_described_once_in_the_table():
    table = settings_table()
    for name, field in Config.model_fields.items():
        assert field.description, name
        assert sum(line.startswith(f"| `{name}` |") for line in table.splitlines()) == 1, name


def test_home_expands_the_user_folder(work, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert load_config(environ={"CHIEF_HOME": "~/films"}).home == tmp_path / "films"
    assert load_config({"home": "~/other"}, environ={}).db_path == tmp_path / "other" / "chief.db"


def test_the_llm_client_is_configured_from_one_table_that_agrees_with_the_variables(work, home):
    """`Config.llm` is the LLM client's configuration; every client setting is fed by one setting, and the variable
    the agents name in their error lines is the one Config reads."""
    from agents.llm_config import SETTING_ENV, LLMConfig
    from app.config import LLM_SETTINGS, env_names

    assert set(LLM_SETTINGS) <= set(LLMConfig.model_fields)
    # not settings: where endpoint memory is kept (the data folder), the retry delay's ceiling, the frame size
    assert set(LLMConfig.model_fields) - set(LLM_SETTINGS) == {"state_path", "max_backoff", "max_image_side"}
    for field, setting in LLM_SETTINGS.items():
        if field in SETTING_ENV and field != "max_frames_per_call":
            assert SETTING_ENV[field] == env_names(setting)[0], field
    cfg = load(
        home,
        CHIEF_LLM_BASE_URL="http://127.0.0.1:9/v1",
        CHIEF_LLM_API_KEY="sk-x",
        CHIEF_LLM_TIMEOUT="7",
        CHIEF_LLM_MAX_IMAGES="3",
        CHIEF_CRITIC_MODEL="vlm",
    )
    llm = cfg.llm
    assert (llm.base_url, llm.api_key.get_secret_value(), llm.timeout) == ("http://127.0.0.1:9/v1", "sk-x", 7.0)
    assert (llm.max_images_per_request, llm.max_frames_per_call, llm.critic_model) == (3, 3, "vlm")
    assert llm.planner_model == LLMConfig().planner_model  # empty: the client's default
    assert llm.state_path == home / "llm-endpoints.json"
    bare = load(home).llm
    assert (bare.base_url, bare.api_key) == (None, None)
