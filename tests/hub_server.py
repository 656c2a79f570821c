"""A local model hub for tests: a real HTTP server that answers the requests huggingface_hub makes, serving repos
built from folders (tiny pipelines saved from the real diffusers classes, a GGUF file).

Routes, as huggingface_hub 2.x calls them (hf_api.model_info, list_repo_tree, file_download.get_hf_file_metadata
and http_get):
- GET  /api/models/{repo}[/revision/{rev}]  the model info (siblings with size, blobId, lfs when ?blobs=True;
  sha, gated, cardData.license)
- GET  /api/models/{repo}/tree/{rev}?recursive=...  the file listing (one page)
- HEAD /{repo}/resolve/{rev}/{path}  ETag (the git blob id; X-Linked-Etag and X-Linked-Size, the sha256 and size,
  for LFS files), X-Repo-Commit, Content-Length
- GET  /{repo}/resolve/{rev}/{path}  the bytes, honouring `Range: bytes=N-` (206, Content-Range)
- errors: 404 X-Error-Code RepoNotFound / RevisionNotFound / EntryNotFound; 401 X-Error-Code GatedRepo for a gated
  repo's files without an accepted bearer token.

Every request is recorded (method, path, Range, whether a token came: never the token). `stall(path, after)` makes
the next GET of that file send `after` bytes, set `stalled`, then wait for `release` (a barrier, not a sleep).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

LFS_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".ckpt", ".onnx", ".msgpack", ".h5")


def git_blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str
    gated: str | bool = False  # "manual" / "auto" for a gated repo
    licence: str | None = None
    claimed_sizes: dict[str, int] = field(default_factory=dict)  # what the listing says, when it should lie
    gone: set[str] = field(default_factory=set)  # listed, but a download answers EntryNotFound

    @classmethod
    def from_folder(cls, folder: Path, **kw) -> Repo:
        files = {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}
        commit = hashlib.sha1(b"".join(k.encode() + hashlib.sha256(v).digest() for k, v in files.items())).hexdigest()
        return cls(files=files, commit=commit, **kw)

    def entry(self, path: str) -> dict:
        data = self.files[path]
        size = self.claimed_sizes.get(path, len(data))
        e: dict = {"size": size, "blobId": git_blob_id(data)}
        if path.endswith(LFS_SUFFIXES):
            e["lfs"] = {"sha256": hashlib.sha256(data).hexdigest(), "size": size, "pointerSize": 134}
        return e


@dataclass
class Request:
    method: str
    path: str
    range: str | None
    authorized: bool


class HubServer:
    """`with HubServer({"org/name": Repo(...)}) as hub:` serves on a free loopback port; `hub.url` is HF_ENDPOINT."""

    def __init__(self, repos: dict[str, Repo], tokens: tuple[str, ...] = ()) -> None:
        self.repos, self.tokens = repos, set(tokens)
        self.requests: list[Request] = []
        self.stalled, self.release = threading.Event(), threading.Event()
        self._stall: dict[str, int] = {}
        self._lock = threading.Lock()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_HEAD(self):
                hub._handle(self, head=True)

            def do_GET(self):
                hub._handle(self, head=False)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> HubServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def stall(self, path: str, after: int) -> None:
        with self._lock:
            self._stall[path] = after
        self.stalled.clear()
        self.release.clear()

    def gets(self, path: str) -> list[Request]:
        return [r for r in self.requests if r.method == "GET" and r.path.endswith("/" + path)]

    # -- routing -------------------------------------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler, head: bool) -> None:
        url = urlsplit(h.path)
        path = unquote(url.path)
        auth = h.headers.get("Authorization", "")
        token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else None
        with self._lock:
            self.requests.append(Request(h.command, path, h.headers.get("Range"), token in self.tokens))
        if path.startswith("/api/models/"):
            return self._api(h, path[len("/api/models/") :], parse_qs(url.query))
        if "/resolve/" in path:
            repo_id, _, rest = path[1:].partition("/resolve/")
            rev, _, file = rest.partition("/")
            return self._file(h, repo_id, rev, file, head, token)
        self._error(h, 404, "RepoNotFound", "not found")

    def _repo(self, h, repo_id: str, rev: str | None) -> Repo | None:
        repo = self.repos.get(repo_id)
        if repo is None:
            self._error(h, 404, "RepoNotFound", "Repository not found")
            return None
        if rev not in (None, "main", repo.commit):
            self._error(h, 404, "RevisionNotFound", "Invalid rev id")
            return None
        return repo

    def _api(self, h, rest: str, query: dict) -> None:
        if "/tree/" in rest:
            repo_id, _, rev = rest.partition("/tree/")
            repo = self._repo(h, repo_id, rev.split("/", 1)[0])
            if repo is None:
                return
            listing = []
            for p in repo.files:
                e = repo.entry(p)
                item = {"type": "file", "oid": e["blobId"], "size": e["size"], "path": p}
                if "lfs" in e:
                    item["lfs"] = {"oid": e["lfs"]["sha256"], "size": e["size"], "pointerSize": 134}
                listing.append(item)
            return self._json(h, listing)
        repo_id, _, rev = rest.partition("/revision/")
        repo = self._repo(h, repo_id, rev or None)
        if repo is None:
            return
        blobs = query.get("blobs", [""])[0].lower() == "true"
        siblings = [{"rfilename": p, **(repo.entry(p) if blobs else {})} for p in repo.files]
        info = {
            "_id": repo.commit[:24],
            "id": repo_id,
            "modelId": repo_id,
            "sha": repo.commit,
            "private": False,
            "gated": repo.gated,
            "disabled": False,
            "tags": [f"license:{repo.licence}"] if repo.licence else [],
            "cardData": {"license": repo.licence} if repo.licence else {},
            "siblings": siblings,
        }
        self._json(h, info)

    def _file(self, h, repo_id: str, rev: str, file: str, head: bool, token: str | None) -> None:
        repo = self._repo(h, repo_id, rev)
        if repo is None:
            return
        if repo.gated and token not in self.tokens:
            status = 403 if token else 401  # the hub: 401 without a token, 403 for an account that did not accept
            return self._error(h, status, "GatedRepo", "Access to model is restricted. You must be authenticated.")
        if file not in repo.files or file in repo.gone:
            return self._error(h, 404, "EntryNotFound", "Entry not found")
        data, e = repo.files[file], repo.entry(file)
        start, status = 0, 200
        rng = h.headers.get("Range")
        if rng and not head and rng.startswith("bytes="):
            first = rng[len("bytes=") :].split("-", 1)[0]
            start, status = int(first), 206
        body = data[start:]
        h.send_response(status)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("X-Repo-Commit", repo.commit)
        h.send_header("ETag", f'"{e["blobId"]}"')
        if "lfs" in e:
            h.send_header("X-Linked-Etag", f'"{e["lfs"]["sha256"]}"')
            h.send_header("X-Linked-Size", str(e["size"]))
        h.send_header("Accept-Ranges", "bytes")
        if status == 206:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if head:
            return
        with self._lock:
            after = self._stall.pop(file, None)
        if after is not None and status == 200:
            h.wfile.write(body[:after])
            h.wfile.flush()
            self.stalled.set()
            self.release.wait()
            h.close_connection = True
            return  # the connection closes short: what was not sent is never sent
        h.wfile.write(body)

    def _json(self, h, value) -> None:
        body = json.dumps(value).encode()
        h.send_response(200)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def _error(self, h, status: int, code: str, message: str) -> None:
        body = json.dumps({"error": message}).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)
