"""Tiny random-weight pipelines: the root conftest's `tiny_models`, built once per test run, under their old name."""

import pytest


@pytest.fixture(scope="session")
def folders(tiny_models):
    """folders(name) -> the saved folder of generation.tiny.BUILDERS[name]."""
    return tiny_models
