"""One local Ray cluster for the cluster tests (2 CPUs), shut down when they are done."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

ROOT = str(Path(__file__).resolve().parents[2])


@pytest.fixture(scope="package")
def ray_cluster():
    ray = pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'chief[ray]'")
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = ROOT + (os.pathsep + old if old else "")  # workers import tests.cluster.workers
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, _node_ip_address="127.0.0.1")
    try:
        yield ray
    finally:
        ray.shutdown()
        if old is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old
