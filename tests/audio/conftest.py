"""Tiny random-weight audio pipelines, each built and saved once per test session, on first use."""

import pytest

from generation.audio.tiny import BUILDERS


@pytest.fixture(scope="session")
def audio_folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("audio_pipelines")
    built = {}

    def get(name):
        if name not in built:
            built[name] = str(BUILDERS[name](root / name))
        return built[name]

    return get
