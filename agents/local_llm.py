"""A local language model that CHIEF runs itself: llama-cpp-python's OpenAI-compatible server
(`python -m llama_cpp.server`) over a GGUF file, as a subprocess on a free 127.0.0.1 port, started on first use and
stopped when the process exits. The agents then talk to it like any endpoint (agents/llm.py, with the limits
agents/endpoint.py keeps), labelled as CHIEF's own local model.

The GGUF file is a path, or `ORG/NAME/FILE.gguf`: a file `chief models pull --llm` put in the Hugging Face cache
(read from the cache only, never downloaded here).
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

from agents.base import AgentError

READY_SECONDS = 300.0  # loading a few-GB GGUF from a cold disk
_lock = threading.Lock()
_running: dict[tuple[str, int], LocalLLM] = {}  # (spec, context) -> its server


def gguf_path(spec: str) -> Path:
    """The GGUF file a CHIEF_LOCAL_LLM value names: a path, or ORG/NAME/FILE in the Hugging Face cache."""
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    hub = re.fullmatch(r"([A-Za-z0-9][\w.-]*/[\w.-]+)/([^\x00]+\.gguf)", spec, flags=re.IGNORECASE)
    if hub and ".." not in spec:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(hub.group(1), hub.group(2))
        if isinstance(found, str):
            return Path(found)
    raise AgentError(
        f"local model {spec!r} not found: no such file, and not in the Hugging Face cache "
        "(fetch one with `chief models pull --llm`)"
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalLLM:
    """llama-cpp-python's server over one GGUF file, on 127.0.0.1 only. Its port is chosen when it is made (so the
    client's address is known); the process starts on first use (`ensure_started`), not when the agents are built."""

    def __init__(self, spec: str, n_ctx: int, log: Path, threads: int | None = None) -> None:
        self.spec, self.n_ctx, self.log_path = spec, n_ctx, log
        self.threads = threads or max(1, (os.cpu_count() or 2) // 2)
        self.port = _free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.spec.rstrip("/").rsplit("/", 1)[-1]

    @property
    def label(self) -> str:
        return f"local model {self.name} (run by CHIEF: llama-cpp-python on 127.0.0.1:{self.port})"

    def ensure_started(self) -> LocalLLM:
        with self._lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
        return self

    def _start(self) -> None:
        model = gguf_path(self.spec)
        if importlib.util.find_spec("llama_cpp") is None:
            raise AgentError(
                "CHIEF_LOCAL_LLM needs llama-cpp-python: pip install 'llama-cpp-python[server]>=0.2.72' (or `make real-server`)"
            )
        argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
        argv += ["--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx)]
        argv += ["--n_threads", str(self.threads)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "OMP_WAIT_POLICY": "passive"}  # spin-waiting threads slow a shared CPU many times over
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
        deadline = time.monotonic() + READY_SECONDS
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AgentError(f"the local model server stopped at start: {self._last_line()}")
            try:
                with urllib.request.urlopen(f"{self.base_url}/models", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise AgentError(f"the local model server did not answer within {READY_SECONDS:.0f} s: {self._last_line()}")

    def _last_line(self) -> str:
        try:
            lines = [s for s in self.log_path.read_text(errors="replace").splitlines() if s.strip()]
        except OSError:
            lines = []
        return lines[-1][:300] if lines else f"see {self.log_path}"

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def server_for(spec: str, n_ctx: int, log_dir: Path) -> LocalLLM:
    """The one LocalLLM of this process for `spec` (started on first use, stopped at exit)."""
    key = (spec, n_ctx)
    with _lock:
        if key not in _running:
            _running[key] = LocalLLM(spec, n_ctx, log_dir / "local-llm.log")
        return _running[key]


@atexit.register
def _stop_all() -> None:
    for server in list(_running.values()):
        server.stop()
