"""Tiny random-weight audio pipelines: the root conftest's `tiny_audio_models`, built once per test run."""

import pytest


@pytest.fixture(scope="session")
def audio_folders(tiny_audio_models):
    return tiny_audio_models
