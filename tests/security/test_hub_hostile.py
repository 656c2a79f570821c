"""A hostile model hub (issue 54 item 7), served locally by the test: `chief models pull` writes only inside the
cache's folders whatever the listing names, stops a file that is longer than listed and keeps nothing of it, checks
every file's hash, sends the token only to the configured endpoint's host (a redirect elsewhere, even of a resumed
pull, goes without it), and says a malformed listing in one line."""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from generation import hub
from tests.conftest import invoke_cli

COMMIT = "c0ffee" + "0" * 34
TOKEN = "hf_hostile_" + "Zq8Lw3"  # made up: it must reach the endpoint and nothing else


def blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class File:
    data: bytes
    listed: dict = field(default_factory=dict)  # what the listing says instead of the truth (size, blobId, lfs)
    redirect: str = ""  # a GET is answered 302 to this base URL + the path
    chunked: bool = False  # sent without a Content-Length


class Server:
    """One repo (`studio/bad`) at /api/models/... and /studio/bad/resolve/...; records (method, path, Range,
    Authorization) of every request. `info` replaces the model-info JSON body (bytes: sent as is)."""

    def __init__(self, files: dict[str, File] | None = None, info: bytes | None = None) -> None:
        self.files, self.info = files or {}, info
        self.requests: list[tuple[str, str, str | None, str | None]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                outer.handle(self)

            do_HEAD = do_GET

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def entry(self, name: str, f: File) -> dict:
        e = {"rfilename": name, "size": len(f.data), "blobId": blob_id(f.data)}
        if name.endswith(".safetensors"):
            e["lfs"] = {"sha256": hashlib.sha256(f.data).hexdigest(), "size": len(f.data), "pointerSize": 134}
        return {**e, **f.listed}

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        path = unquote(urlsplit(h.path).path)
        self.requests.append((h.command, path, h.headers.get("Range"), h.headers.get("Authorization")))
        if path.startswith("/api/models/"):
            body = self.info
            if body is None:
                siblings = [self.entry(n, f) for n, f in self.files.items()]
                body = json.dumps({"id": "studio/bad", "sha": COMMIT, "siblings": siblings, "tags": []}).encode()
            return self.send(h, 200, body, "application/json")
        name = path.split(f"/resolve/{COMMIT}/", 1)[-1]
        f = self.files.get(name)
        if f is None:
            return self.send(h, 404, b"{}", "application/json", {"X-Error-Code": "EntryNotFound"})
        if f.redirect:
            return self.send(h, 302, b"", "text/plain", {"Location": f.redirect + path})
        start = int(h.headers["Range"].split("=")[1].split("-")[0]) if h.headers.get("Range") else 0
        body = f.data[start:]
        extra = {"Content-Range": f"bytes {start}-{len(f.data) - 1}/{len(f.data)}"} if start else {}
        if f.chunked:
            h.send_response(206 if start else 200)
            h.send_header("Transfer-Encoding", "chunked")
            for k, v in extra.items():
                h.send_header(k, v)
            h.end_headers()
            for i in range(0, len(body), 4096):
                part = body[i : i + 4096]
                h.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            h.wfile.write(b"0\r\n\r\n")
            return
        self.send(h, 206 if start else 200, body, "application/octet-stream", extra)

    def send(self, h, status: int, body: bytes, kind: str, headers: dict | None = None) -> None:
        h.send_response(status)
        h.send_header("Content-Type", kind)
        for k, v in (headers or {}).items():
            h.send_header(k, v)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(body)


@pytest.fixture
def served(monkeypatch, tmp_path):
    """serve(files, info=None) -> a Server that is the hub for this test (HF_ENDPOINT, a cache of its own)."""
    from huggingface_hub import constants

    made: list[Server] = []
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)  # the tests run offline; this hub is local

    def serve(files=None, info=None, endpoint=True) -> Server:
        s = Server(files, info)
        made.append(s)
        if endpoint:
            monkeypatch.setattr(constants, "ENDPOINT", s.url)
        return s

    yield serve
    for s in made:
        s.close()


def pull(name: str):
    repo, patterns = hub.lookup(name)
    return hub.pull(hub.plan(repo, patterns=patterns), tqdm_class=Quiet)


class Quiet:
    def __init__(self, *args, **kwargs):
        pass

    def update(self, n=1):
        pass

    def set_description_str(self, s):
        pass

    def close(self):
        pass


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() or p.is_symlink())


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert text and "\n" not in text and "Traceback" not in text
    return text


@pytest.mark.parametrize(
    "listed",
    [
        {"blobId": "../../../../escaped"},  # a git blob id that climbs
        {"lfs": {"sha256": "/tmp/escaped-abs", "size": 6, "pointerSize": 1}},  # an LFS oid that is an absolute path
        {"blobId": "..%2F..%2Fescaped" + "0" * 24},  # percent-escaped: not a hash either
    ],
)
def test_a_blob_name_that_is_not_a_hash_writes_nothing(served, tmp_path, listed):
    name = "weights.safetensors" if "lfs" in listed else "config.json"
    served({name: File(b'{"a":1}', listed=listed)})
    with pytest.raises(hub.PullError) as e:
        pull(f"studio/bad:{name}")
    assert "malformed listing" in one_line(e) and "no valid hash" in one_line(e)
    assert not (tmp_path / "hf").exists()
    assert not list(tmp_path.rglob("*escaped*")) and not Path("/tmp/escaped-abs").exists()


@pytest.mark.parametrize("name", ["../../../../climbed-Q4_K_M.gguf", "sub/./../climbed-Q4_K_M.gguf"])
def test_a_file_name_that_climbs_out_of_the_snapshot_writes_nothing(served, tmp_path, name):
    served({name: File(b"GGUF" + b"x" * 64)})  # the only GGUF of the repo: an LLM pull takes it
    with pytest.raises(hub.PullError) as e:
        hub.pull(hub.plan("studio/bad", llm=True), tqdm_class=Quiet)
    assert "not a path inside the repo" in one_line(e)
    assert not (tmp_path / "hf").exists() and not list(tmp_path.parent.rglob("climbed-Q4_K_M.gguf"))


def test_inside_refuses_a_path_that_resolves_elsewhere(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "link").symlink_to(tmp_path)  # a link in the folder that points out of it
    with pytest.raises(hub.PullError):
        hub._inside(tmp_path / "folder", "link/evil")
    assert hub._inside(tmp_path / "folder", "a/b") == tmp_path / "folder" / "a" / "b"


@pytest.mark.parametrize("chunked", [False, True])
def test_more_bytes_than_listed_are_cut_off_and_nothing_is_kept(served, tmp_path, chunked):
    """A 200 kB file listed as 1 kB passes the disk check; the download stops once more than 1 kB has come (with a
    Content-Length that says so: before a byte is written), and nothing of it stays."""
    data = bytes(range(256)) * 800
    served({"model.gguf": File(data, listed={"size": 1000}, chunked=chunked)})
    with pytest.raises(hub.PullError) as e:
        pull("studio/bad:model.gguf")
    assert "sent more than the 1000 bytes its listing gave" in one_line(e)
    assert not (tmp_path / "hf" / "hub").exists()  # nothing of it, not even its folders


def test_bytes_that_do_not_match_the_listed_hash_are_not_kept(served, tmp_path):
    good, bad = b"A" * 5000, b"B" * 5000
    served(
        {
            "w.safetensors": File(
                bad, listed={"lfs": {"sha256": hashlib.sha256(good).hexdigest(), "size": 5000, "pointerSize": 1}}
            )
        }
    )
    with pytest.raises(hub.PullError) as e:
        pull("studio/bad:w.safetensors")
    assert "do not match the listing" in one_line(e)
    assert not (tmp_path / "hf" / "hub").exists()


@pytest.mark.parametrize("resumed", [False, True])
def test_the_token_goes_to_the_endpoint_only_not_where_it_redirects(served, tmp_path, resumed):
    data = bytes(range(256)) * 100
    cdn = served({"x.gguf": File(data)}, endpoint=False)  # another host: "localhost", not the endpoint's 127.0.0.1
    endpoint = served({"x.gguf": File(data, redirect=f"http://localhost:{cdn.port}")})
    if resumed:  # what a killed pull left: the pull continues it with a Range request, through the redirect
        blobs = tmp_path / "hf" / "hub" / "models--studio--bad" / "blobs"
        blobs.mkdir(parents=True)
        (blobs / f"{blob_id(data)}.incomplete").write_bytes(data[:1000])
    done = pull("studio/bad:x.gguf")
    assert (Path(done.folder) / "x.gguf").read_bytes() == data
    assert done.resumed == (["x.gguf"] if resumed else [])
    asked = [r for r in endpoint.requests if "/resolve/" in r[1]]
    assert asked and all(r[3] == f"Bearer {TOKEN}" for r in asked)  # the endpoint got the token
    fetched = [r for r in cdn.requests if r[0] == "GET"]
    assert fetched and all(r[3] is None for r in fetched)  # the other host never did
    assert [r[2] for r in fetched] == (["bytes=1000-"] if resumed else [None])


@pytest.mark.parametrize(
    "info",
    [
        b"<html>not json</html>",
        json.dumps({"id": "studio/bad", "sha": COMMIT, "siblings": 7}).encode(),
        json.dumps({"id": "studio/bad", "sha": COMMIT, "siblings": [{"rfilename": "a.gguf", "size": "big"}]}).encode(),
        json.dumps({"id": "studio/bad", "sha": "../../x", "siblings": []}).encode(),
    ],
)
def test_a_malformed_listing_is_one_line_without_a_traceback(served, tmp_path, info):
    served(info=info)
    res = invoke_cli(tmp_path / "home", ["models", "pull", "--llm", "studio/bad"], {"CHIEF_NARRATION": "0"})
    assert res.exit_code == 1
    (line,) = [s for s in res.stderr.splitlines() if s.strip()]
    assert line.startswith("error: ") and "Traceback" not in res.output + res.stderr
    assert not (tmp_path / "hf").exists()
