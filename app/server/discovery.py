"""Finding OpenAI-compatible model servers on this machine: one step from the offline agents to a real local model.

Probes the usual loopback ports (Ollama, LM Studio, llama.cpp, vLLM) concurrently with short timeouts, asks each
for `GET /v1/models`, and says for each model the one line of settings that uses it. Only 127.0.0.1 is ever
contacted, and no proxy: the host is not a parameter. A redirect is not followed (it could name any host): a port
that answers with one is left out like a port with no server.
"""

from __future__ import annotations

import json
import shlex
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel

HOST = "127.0.0.1"
KNOWN = (("Ollama", 11434), ("LM Studio", 1234), ("llama.cpp", 8080), ("vLLM", 8000))
MAX_BYTES = 1 << 20  # a models list larger than this is refused
MAX_MODELS = 500


class Server(BaseModel):
    """An OpenAI-compatible server answering on loopback, and the models it lists."""

    name: str  # what usually listens on this port ("Ollama"); the server itself may be another
    port: int
    base_url: str
    models: list[str]

    def setting_line(self, model: str) -> str:
        """The one line of environment settings that makes every role use `model` on this server, each value
        quoted for a POSIX shell (a server names its models: the line is pasted into a shell)."""
        pairs = [("CHIEF_LLM_BASE_URL", self.base_url)] + [(f"CHIEF_{r}_MODEL", model) for r in ROLES]
        return " ".join(f"{k}={shlex.quote(v)}" for k, v in pairs)


ROLES = ("CRITIC", "REFINER", "PLANNER")


def ports_to_probe(setting: str = "", extra: tuple[int, ...] = ()) -> tuple[tuple[str, int], ...]:
    """(name, port) pairs: the ports of `setting` (comma-separated, `discovery_ports`) or else the usual servers',
    then `extra` ports; each port once, named for what usually listens there."""
    names = {port: name for name, port in KNOWN}
    ports = [int(p) for p in setting.split(",") if p.strip()] if setting.strip() else [port for _, port in KNOWN]
    out: dict[int, str] = {}
    for port in [*ports, *extra]:
        if not 0 < port < 65536:
            raise ValueError(f"port {port} is not 1-65535")
        out.setdefault(port, names.get(port, "A model server"))
    return tuple((name, port) for port, name in out.items())


def discover(timeout: float = 0.5, ports: tuple[tuple[str, int], ...] = KNOWN) -> list[Server]:
    """The servers that answer `GET /v1/models` on 127.0.0.1 at `ports` ((name, port) pairs), in that order.

    A port with nothing listening, a slow server, or an answer that is not an OpenAI models list is left out."""
    if not ports:
        return []
    with ThreadPoolExecutor(max_workers=len(ports)) as pool:
        found = list(pool.map(lambda p: probe(p[0], p[1], timeout), ports))
    return [s for s in found if s is not None]


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Refuses every redirect: urllib then raises HTTPError for the 3xx answer."""

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def probe(name: str, port: int, timeout: float) -> Server | None:
    base = f"http://{HOST}:{port}/v1"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())  # no proxy, no redirect
    try:
        with opener.open(
            urllib.request.Request(f"{base}/models", headers={"Accept": "application/json"}), timeout=timeout
        ) as resp:
            if resp.status != 200:
                return None
            body = resp.read(MAX_BYTES + 1)
    except (OSError, urllib.error.URLError, ValueError):
        return None
    if len(body) > MAX_BYTES:
        return None
    models = _model_ids(body)
    return None if models is None else Server(name=name, port=port, base_url=base, models=models)


def _model_ids(body: bytes) -> list[str] | None:
    """The model ids of an OpenAI models list ({"data": [{"id": ...}, ...]}), or None if it is not one."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return None
    ids = [m["id"] for m in items[:MAX_MODELS] if isinstance(m, dict) and isinstance(m.get("id"), str)]
    return [i for i in ids if usable_id(i)]


def usable_id(model: str) -> bool:
    """A model id CHIEF lists: 1-200 printable characters, no space or control character (a newline or an escape
    in a line meant for a terminal and a shell is refused, not quoted)."""
    return 0 < len(model) <= 200 and model.isprintable() and not any(c.isspace() for c in model)
