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
    import torch

    saved = {k: os.environ.get(k) for k in ("PYTHONPATH", "OMP_NUM_THREADS")}
    # workers import tests.cluster.workers; CPU kernels are bit-identical only at the same thread count,
    # and Ray would set OMP_NUM_THREADS=1 on a fractional-CPU worker
    os.environ["PYTHONPATH"] = ROOT + (os.pathsep + saved["PYTHONPATH"] if saved["PYTHONPATH"] else "")
    os.environ["OMP_NUM_THREADS"] = str(torch.get_num_threads())
    ray.init(num_cpus=2, include_dashboard=False, logging_level=logging.WARNING, _node_ip_address="127.0.0.1")
    try:
        yield ray
    finally:
        ray.shutdown()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
