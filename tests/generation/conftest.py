"""Tiny random-weight pipelines, each built and saved once per test session, on first use."""

import pytest

from generation.tiny import BUILDERS


@pytest.fixture(scope="session")
def folders(tmp_path_factory):
    """folders(name) -> the saved folder of BUILDERS[name]."""
    root = tmp_path_factory.mktemp("pipelines")
    built = {}

    def get(family):
        if family not in built:
            built[family] = str(BUILDERS[family](root / family))
        return built[family]

    return get
