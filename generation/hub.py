"""Models onto this machine through huggingface_hub: a diffusers video pipeline (`chief models pull`) or a GGUF
language model (`chief models pull --llm`), into the hub's shared cache, so the hub id then loads offline.

What is fetched is chosen from the repo's own listing before anything is written: a pipeline's model_index.json
names its components, and each component folder gives its configs, tokenizer files and one set of weights
(safetensors before .bin; the `--variant` infix, e.g. `model.fp16.safetensors`, or none). The disk is checked
against the sizes the hub lists; a gated repo's licence is said in one line. huggingface_hub gives the endpoint
(HF_ENDPOINT), the token (HF_TOKEN or `hf auth login`), the cache's layout (HF_HOME / HF_HUB_CACHE), its locks and
its progress bars.

The hub is not trusted with the machine (`_fetch`, issue 54 item 7): every file is downloaded here, not by
`snapshot_download`, so that what the listing promised is what is written, and only where it belongs:
- the listing is checked first (`_listed`): a file's path is relative and stays inside the snapshot, its hash (the
  name of its blob) is a git blob id or a sha256, its size a number; a malformed listing is one line, no traceback;
- every path written is resolved inside its folder (`_inside`: blobs/, the snapshot, refs/);
- bytes are counted against the listed size as they arrive: a server that sends more is stopped and nothing of the
  file is kept; a whole file must have the listed size and the listed hash (the LFS sha256, else the git blob id);
- the token goes only to the configured endpoint's host: a redirect elsewhere (a CDN) is followed without it;
- a pull a killed process left half-written continues from where it stopped (a Range request), and a continued file
  is checked like the rest.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generation.base import RenderError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".ckpt", ".pth", ".pt", ".msgpack", ".onnx", ".h5", ".gguf")
# "model.fp16.safetensors", "model.fp16-00001-of-00002.safetensors", "model.safetensors.index.fp16.json"
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")
INDEX_LIMIT = 1 << 20  # a model_index.json is a few hundred bytes
MAX_FILE_BYTES = 1 << 60  # an exbibyte: a listed size above it is no file's (the disk check says the rest)
_HASH = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")  # a git blob id (sha1) or an LFS sha256: the only blob names
_COMMIT = re.compile(r"[0-9a-f]{40}")
_REDIRECTS = 10


class PullError(RenderError):
    """A pull refused or failed: one line that says why and what to do."""


@dataclass(frozen=True)
class Catalogued:
    """A model CHIEF knows by a short name. `card_vram_gb`: the GPU memory its makers' model card says it runs in
    (with their offloading), quoted, not measured; `index`: the model_index.json entries that pick its family row."""

    name: str
    repo_id: str
    about: str
    files: tuple[str, ...] = ()  # allow patterns (GGUF models: the one quantization to fetch)
    pipeline: str = ""
    index: tuple[tuple[str, object], ...] = ()
    card_vram_gb: float | None = None
    card_size_gb: float | None = None  # the file's size as the repo lists it (GGUF models), quoted


# Video pipelines in diffusers format, by family (the hub ids their makers publish).
VIDEO_MODELS: tuple[Catalogued, ...] = (
    Catalogued(
        "wan2.1-1.3b",
        "Wan-AI/Wan2.1-T2V-1.3B-Diffusers",
        "Wan 2.1 text-to-video, 1.3B transformer",
        pipeline="WanPipeline",
        card_vram_gb=8.19,
    ),
    Catalogued(
        "wan2.2-5b",
        "Wan-AI/Wan2.2-TI2V-5B-Diffusers",
        "Wan 2.2 TI2V, 5B transformer, 720p",
        pipeline="WanPipeline",
        index=(("expand_timesteps", True),),
        card_vram_gb=24,
    ),
    Catalogued(
        "wan2.2-a14b",
        "Wan-AI/Wan2.2-T2V-A14B-Diffusers",
        "Wan 2.2 T2V, two 14B experts",
        pipeline="WanPipeline",
        index=(("transformer_2", ["diffusers", "WanTransformer3DModel"]), ("boundary_ratio", 0.875)),
        card_vram_gb=80,
    ),
    Catalogued("ltx-video", "Lightricks/LTX-Video", "LTX-Video, 2B transformer", pipeline="LTXPipeline"),
    Catalogued("cogvideox-2b", "THUDM/CogVideoX-2b", "CogVideoX 2B", pipeline="CogVideoXPipeline", card_vram_gb=12.5),
    Catalogued("cogvideox-5b", "THUDM/CogVideoX-5b", "CogVideoX 5B", pipeline="CogVideoXPipeline", card_vram_gb=20.7),
    Catalogued(
        "hunyuanvideo",
        "hunyuanvideo-community/HunyuanVideo",
        "HunyuanVideo, 13B transformer",
        pipeline="HunyuanVideoPipeline",
        card_vram_gb=45,
    ),
)

# Small instruct models as GGUF, one quantization each (Q4_K_M: the usual size/quality middle).
LLM_MODELS: tuple[Catalogued, ...] = (
    Catalogued(
        "qwen2.5-3b",
        "Qwen/Qwen2.5-3B-Instruct-GGUF",
        "Qwen2.5 3B Instruct, Q4_K_M",
        ("*q4_k_m.gguf",),
        card_size_gb=2.1,
    ),
    Catalogued(
        "llama3.2-3b",
        "bartowski/Llama-3.2-3B-Instruct-GGUF",
        "Llama 3.2 3B Instruct, Q4_K_M",
        ("*Q4_K_M.gguf",),
    ),
    Catalogued("qwen2.5-7b", "Qwen/Qwen2.5-7B-Instruct-GGUF", "Qwen2.5 7B Instruct, Q4_K_M", ("*q4_k_m*.gguf",)),
)


def lookup(name: str, llm: bool = False) -> tuple[str, tuple[str, ...]]:
    """(hub id, allow patterns) for a catalogue name, a hub id (`org/name`) or one file of a repo (`org/name:path`,
    e.g. a draft LoRA); a one-line error otherwise."""
    table = LLM_MODELS if llm else VIDEO_MODELS
    for m in table:
        if name.lower() in (m.name, m.repo_id.lower()):
            return m.repo_id, m.files
    repo, _, path = name.partition(":")
    if re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", repo) and ".." not in path.split("/"):
        return repo, ((path,) if path else ())
    raise PullError(
        f"{name!r} is neither a hub id (org/name) nor a known name; known: " + ", ".join(m.name for m in table)
    )


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int
    etag: str  # the blob's name in the cache: the LFS sha256, else the git blob id (what the hub's ETag says)


@dataclass
class Plan:
    """What a pull will fetch, decided from the hub's listing before anything is written."""

    repo_id: str
    revision: str  # as asked ("main"); `commit` is what it resolved to
    commit: str
    files: list[RemoteFile]
    licence: str | None
    gated: bool
    pipeline: str | None = None  # a diffusers pipeline's _class_name
    index: dict | None = None  # its model_index.json
    cache_dir: Path = field(default_factory=Path)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def storage(self) -> Path:
        from huggingface_hub.file_download import repo_folder_name

        return self.cache_dir / repo_folder_name(repo_id=self.repo_id, repo_type="model")

    def have_bytes(self) -> int:
        """Bytes already here: whole blobs, and what interrupted downloads left (resumed, not fetched again)."""
        blobs = self.storage() / "blobs"
        have = 0
        for f in self.files:
            if (blobs / f.etag).is_file():
                have += f.size
            else:
                have += max((p.stat().st_size for p in _partials(blobs, f.etag)), default=0)
        return have

    def licence_line(self, endpoint: str) -> str:
        line = f"licence: {self.licence or 'not stated in the model card'}"
        if self.gated:
            line += f" · gated: the files need HF_TOKEN from an account that accepted it at {endpoint}/{self.repo_id}"
        return line


def endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


@contextmanager
def hub_errors(repo_id: str, revision: str = "main") -> Iterator[None]:
    """The hub's failures as one line each (the token is never part of the message)."""
    import httpx2
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RemoteEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    where = endpoint()
    try:
        yield
    except GatedRepoError:
        raise PullError(
            f"{repo_id} is gated: accept its licence at {where}/{repo_id}, then set HF_TOKEN to a token of that account"
        ) from None
    except RepositoryNotFoundError:
        raise PullError(f"no model repository {repo_id!r} at {where} (or it is private: set HF_TOKEN)") from None
    except RevisionNotFoundError:
        raise PullError(f"{repo_id} has no revision {revision!r} at {where}") from None
    except RemoteEntryNotFoundError as e:
        name = str(getattr(e.response, "url", "")).rsplit("/resolve/", 1)[-1].split("/", 1)[-1]
        raise PullError(f"{repo_id} has no file {name!r} at {where}") from None
    except OfflineModeIsEnabled:
        raise PullError("HF_HUB_OFFLINE is set: unset it to pull a model") from None
    except HfHubHTTPError as e:
        status = e.response.status_code if e.response is not None else "?"
        raise PullError(f"{where} answered {status} for {repo_id}: {_first_line(e)}") from None
    except httpx2.HTTPError as e:
        raise PullError(f"cannot reach {where} ({type(e).__name__}: {_first_line(e)})") from None


def clean(text: object, limit: int = 120) -> str:
    """Text from the hub (a licence, a class or file name) as one printable line of at most `limit` characters."""
    line = "".join(c if c.isprintable() else " " for c in str(text)).strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _first_line(e: BaseException) -> str:
    lines = [s for s in str(e).splitlines() if s.strip()]
    return lines[0] if lines else type(e).__name__


def plan(
    repo_id: str, *, revision: str = "main", variant: str | None = None, patterns: tuple[str, ...] = (), llm=False
) -> Plan:
    """Ask the hub what `repo_id` holds and choose the files: a diffusers pipeline's components, or (llm) one GGUF.
    The listing is checked as it is read (`_listed`); nothing is written but a pipeline's model_index.json, read
    into memory."""
    from huggingface_hub import HfApi, constants

    api = HfApi()
    with hub_errors(repo_id, revision), malformed(repo_id):
        info = api.model_info(repo_id, revision=revision, files_metadata=True)
    with malformed(repo_id):
        siblings = {str(s.rfilename): s for s in info.siblings or []}
        card = info.card_data
        licence = (card.get("license_name") or card.get("license")) if card is not None else None
        licence = licence or next((t.split(":", 1)[1] for t in info.tags or [] if t.startswith("license:")), None)
        gated = bool(info.gated)
    commit = str(info.sha)
    if not _COMMIT.fullmatch(commit):
        raise PullError(f"{endpoint()} sent a malformed listing for {repo_id}: {clean(commit, 60)!r} is not a commit")
    result = Plan(
        repo_id=repo_id,
        revision=revision,
        commit=commit,
        files=[],
        licence=clean(licence) if licence else None,
        gated=gated,
        cache_dir=Path(constants.HF_HUB_CACHE).expanduser(),
    )
    if llm:
        chosen = _gguf_files(repo_id, list(siblings), patterns)
    elif patterns:  # one file, as named
        chosen = [n for n in patterns if n in siblings]
        if len(chosen) != len(patterns):
            raise PullError(f"{repo_id} has no file {patterns[0]!r} at {endpoint()}")
    else:
        if "model_index.json" not in siblings:
            raise PullError(f"{repo_id} is not a diffusers pipeline (no model_index.json): CHIEF cannot render with it")
        listed = _listed(repo_id, "model_index.json", siblings["model_index.json"])
        if listed.size > INDEX_LIMIT:
            raise PullError(f"{repo_id}: its model_index.json is over {INDEX_LIMIT >> 10} KiB, not a pipeline's")
        with hub_errors(repo_id, revision):  # into memory: the cache is written after the disk check
            index = json_object(repo_id, "model_index.json", _read(result, listed))
        result.pipeline, result.index = clean(index.get("_class_name", "?"), 80), index
        with malformed(repo_id):
            chosen = pipeline_files(index, list(siblings), variant)
    result.files = [_listed(repo_id, name, siblings[name]) for name in chosen]
    return result


@contextmanager
def malformed(repo_id: str) -> Iterator[None]:
    """What the hub sent cannot be read as a listing: one line, no traceback."""
    try:
        yield
    except PullError:
        raise
    except (ValueError, TypeError, KeyError, AttributeError, IndexError) as e:
        raise PullError(
            f"{endpoint()} sent a malformed listing for {repo_id} ({type(e).__name__}): nothing was fetched"
        ) from None


def json_object(repo_id: str, name: str, data: bytes) -> dict:
    try:
        value = json.loads(data)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise PullError(f"{repo_id}/{name} from {endpoint()} is not a JSON object: not a pipeline's index")
    return value


def safe_name(name: str) -> bool:
    """A path a repo may hold: relative, forward slashes, no `.`/`..`/empty part, printable, not absurdly long."""
    parts = name.split("/")
    return (
        0 < len(name) <= 1000
        and name.isprintable()
        and "\\" not in name
        and ":" not in parts[0]
        and all(part not in ("", ".", "..") for part in parts)
    )


def _listed(repo_id: str, name: str, sibling) -> RemoteFile:
    """The listing's entry for `name` as a RemoteFile, checked: a path inside the repo, a size, a blob name that is a
    hash (the LFS sha256, else the git blob id). One line for anything else."""
    bad = lambda why: PullError(f"{endpoint()} sent a malformed listing for {repo_id}: {clean(name, 80)!r} {why}")  # noqa: E731
    if not safe_name(name):
        raise bad("is not a path inside the repo")
    size = getattr(sibling, "size", None)
    lfs = getattr(sibling, "lfs", None)
    etag = getattr(lfs, "sha256", None) if lfs is not None else getattr(sibling, "blob_id", None)
    if size is None or etag is None:
        raise PullError(
            f"{endpoint()} gave no size or hash for {repo_id}/{clean(name, 80)}: cannot check the disk first"
        )
    if isinstance(size, bool) or not isinstance(size, int) or not 0 <= size <= MAX_FILE_BYTES:
        raise bad(f"has no valid size ({clean(size, 40)!r})")
    if not isinstance(etag, str) or not _HASH.fullmatch(etag):
        raise bad(f"has no valid hash ({clean(etag, 40)!r})")
    return RemoteFile(name, size, etag)


def _weight_variant(name: str) -> tuple[bool, str | None]:
    """(is a weights file or a weights index, its variant infix or None)."""
    base = PurePosixPath(name).name
    if ".index." in base and base.endswith(".json"):  # model.safetensors.index.json / .index.fp16.json
        head, _, tail = base.partition(".index.")
        parts = tail[: -len(".json")].split(".")
        return head.endswith(WEIGHT_SUFFIXES), (parts[0] if parts and parts[0] else None)
    suffix = next((s for s in WEIGHT_SUFFIXES if base.endswith(s)), None)
    if suffix is None:
        return False, None
    stem = _SHARD.sub("", base[: -len(suffix)])
    parts = stem.split(".")
    return True, (parts[-1] if len(parts) > 1 else None)


def pipeline_files(index: dict, names: list[str], variant: str | None) -> list[str]:
    """The files a diffusers pipeline loads: model_index.json, and per component folder its other files and one
    set of weights (safetensors when there are any, the asked variant or none)."""
    components = [k for k, v in index.items() if isinstance(v, list) and len(v) == 2 and v[0] and v[1]]
    chosen = ["model_index.json"]
    for comp in sorted(components):
        inside = [n for n in names if n.startswith(comp + "/")]
        weights = {n: _weight_variant(n)[1] for n in inside if _weight_variant(n)[0]}
        chosen += [n for n in inside if n not in weights]
        if not weights:
            continue
        mine = [n for n, v in weights.items() if v == variant]
        if variant and not mine:  # as diffusers loads it: a component without the variant keeps its plain weights
            mine = [n for n, v in weights.items() if v is None]
        if not mine:
            have = sorted({v or "none" for v in weights.values()})
            raise PullError(
                f"component {comp!r} has no {'variant ' + repr(variant) if variant else 'weights without a variant'}"
                f" (it has: {', '.join(have)}): pass --variant " + (have[0] if have[0] != "none" else "with none")
            )
        safe = [n for n in mine if ".safetensors" in PurePosixPath(n).name]
        chosen += safe or mine
    return chosen


def _gguf_files(repo_id: str, names: list[str], patterns: tuple[str, ...]) -> list[str]:
    """One GGUF model (all its shards): the catalogue's pattern, else the only one, else the Q4_K_M one."""
    from huggingface_hub.utils import filter_repo_objects

    ggufs = [n for n in names if n.lower().endswith(".gguf")]
    if patterns:
        ggufs = list(filter_repo_objects(ggufs, allow_patterns=list(patterns)))
    models = sorted({_SHARD.sub("", n[: -len(".gguf")]) for n in ggufs if "mmproj" not in n.lower()})
    if len(models) > 1:
        models = [m for m in models if "q4_k_m" in m.lower()] or models
    if not models:
        raise PullError(f"{repo_id} has no GGUF file" + (f" matching {', '.join(patterns)}" if patterns else ""))
    if len(models) > 1:
        shown = ", ".join(clean(m, 80) for m in models[:4])
        raise PullError(f"{repo_id} holds several GGUF models ({shown}): name one as {repo_id}:FILE.gguf")
    return [n for n in ggufs if _SHARD.sub("", n[: -len(".gguf")]) == models[0]]


def _partials(blobs: Path, etag: str) -> list[Path]:
    """What interrupted downloads of blob `etag` left: `<etag>.<id>.incomplete` (huggingface_hub >= 1.x) or
    `<etag>.incomplete` (older releases)."""
    if not blobs.is_dir():
        return []
    return [p for p in blobs.glob(glob.escape(etag) + "*.incomplete") if p.is_file()]


def free_bytes(path: Path) -> int:
    """Free space on the disk that holds `path` (its nearest existing parent)."""
    p = path
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def check_disk(p: Plan) -> tuple[int, int]:
    """(bytes still to fetch, bytes free); a one-line refusal when they do not fit."""
    need = p.total_bytes - p.have_bytes()
    free = free_bytes(p.storage())
    if need > free:
        raise PullError(
            f"{p.repo_id} needs {size_text(need)} more on disk ({size_text(p.total_bytes)} in all) but "
            f"{p.cache_dir} has {size_text(free)} free: free some space or set HF_HOME to a larger disk"
        )
    return need, free


def size_text(n: int) -> str:
    for unit, scale in (("TB", 10**12), ("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def progress_bars():
    """huggingface_hub's tqdm, shown on stderr even when it is not a terminal (a log still shows the bytes);
    HF_HUB_DISABLE_PROGRESS_BARS still turns it off."""
    from huggingface_hub.utils import tqdm

    class Bars(tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = False
            kwargs.setdefault("mininterval", 0.5)
            super().__init__(*args, **kwargs)

    return Bars


@dataclass
class Pulled:
    repo_id: str
    commit: str
    folder: str
    files: list[str]
    bytes: int
    fetched_bytes: int
    resumed: list[str]
    licence: str | None
    gated: bool
    pipeline: str | None


def pull(p: Plan, tqdm_class: type | None = None) -> Pulled:
    """Check the disk, then fetch each chosen file into the hub's shared cache (`_fetch`: checked against the
    listing, continued where a killed pull stopped), with progress bars on stderr."""
    need, _ = check_disk(p)
    tqdm_class = tqdm_class or progress_bars()
    storage = p.storage()
    snapshot = _inside(storage / "snapshots", p.commit)
    resumed = []
    files = tqdm_class(total=len(p.files), desc=f"Fetching {len(p.files)} files", unit="file")
    sent = tqdm_class(total=need, desc="Downloading", unit="B", unit_scale=True, unit_divisor=1024)
    try:
        with _Client() as client:
            for f in p.files:
                if _fetch(p, f, client, sent):
                    resumed.append(f.path)
                _point(snapshot, f, storage / "blobs")
                files.update(1)
        sent.set_description_str("Download complete")
    except PullError:
        _tidy(p)
        raise
    finally:
        sent.close()
        files.close()
    if p.revision != p.commit:  # the revision asked for names this commit (as huggingface_hub records it)
        ref = _inside(storage / "refs", p.revision)
        ref.parent.mkdir(parents=True, exist_ok=True)
        ref.write_text(p.commit)
    return Pulled(
        repo_id=p.repo_id,
        commit=p.commit,
        folder=str(snapshot),
        files=[f.path for f in p.files],
        bytes=p.total_bytes,
        fetched_bytes=need,
        resumed=resumed,
        licence=p.licence,
        gated=p.gated,
        pipeline=p.pipeline,
    )


def _tidy(p: Plan) -> None:
    """After a refusal: the repo's folders in the cache and its locks, when no file was kept in them (a part to
    continue, a blob another pull fetched)."""
    storage = p.storage()
    if storage.is_dir() and not any(f.is_file() or f.is_symlink() for f in storage.rglob("*")):
        shutil.rmtree(storage, ignore_errors=True)
        shutil.rmtree(p.cache_dir / ".locks" / storage.name, ignore_errors=True)
        for empty in (p.cache_dir / ".locks", p.cache_dir):
            with suppress(OSError):
                empty.rmdir()


def _inside(folder: Path, name: str) -> Path:
    """`folder/name`, refused unless it stays inside `folder` once resolved (its parent: the path may be a link the
    cache made, such as a snapshot's pointer to its blob)."""
    if not safe_name(name):
        raise PullError(f"refused to write {clean(name, 80)!r}: not a name inside {folder}")
    path = folder / name
    base = folder.resolve()
    if not path.parent.resolve().is_relative_to(base) or path.name in ("", ".", ".."):
        raise PullError(f"refused to write {clean(name, 80)!r}: it resolves outside {folder}")
    return path


def _point(snapshot: Path, f: RemoteFile, blobs: Path) -> None:
    """The snapshot's file `f.path`: a relative link to its blob (a copy where links cannot be made)."""
    pointer = _inside(snapshot, f.path)
    blob = _inside(blobs, f.etag)
    pointer.parent.mkdir(parents=True, exist_ok=True)
    _inside(snapshot, f.path)  # again, now that its folders exist
    if pointer.is_symlink() or pointer.exists():
        pointer.unlink()
    try:
        pointer.symlink_to(os.path.relpath(blob, pointer.parent))
    except OSError:
        shutil.copyfile(blob, pointer)


class _Client:
    """An HTTP client that follows redirects itself: the token (huggingface_hub's headers) goes to the configured
    endpoint's host only, never to a host a redirect names; only http and https are followed."""

    def __init__(self) -> None:
        import httpx2
        from huggingface_hub import constants

        timeout = float(constants.HF_HUB_DOWNLOAD_TIMEOUT)
        self.http = httpx2.Client(follow_redirects=False, timeout=httpx2.Timeout(timeout, read=max(timeout, 60.0)))
        self.origin = _origin(endpoint())

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc) -> None:
        self.http.close()

    def headers(self, url: str, extra: dict[str, str]) -> dict[str, str]:
        from huggingface_hub.utils import build_hf_headers

        headers = build_hf_headers()
        if _origin(url) != self.origin:
            headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        return {**headers, **extra}

    @contextmanager
    def get(self, url: str, extra: dict[str, str] | None = None):
        """A streamed GET of `url`, redirects followed (each hop's headers decided anew); raises the hub's errors."""
        from urllib.parse import urljoin

        from huggingface_hub.utils import hf_raise_for_status

        for _ in range(_REDIRECTS + 1):
            with self.http.stream("GET", url, headers=self.headers(url, extra or {})) as r:
                if r.is_redirect and "location" in r.headers:
                    url = urljoin(url, r.headers["location"])
                    if not url.startswith(("https://", "http://")):
                        raise PullError(f"{endpoint()} redirected a download to {clean(url, 80)!r}: refused")
                    continue
                if r.status_code >= 400:
                    r.read()
                    hf_raise_for_status(r)
                yield r
                return
        raise PullError(f"{endpoint()} redirected a download more than {_REDIRECTS} times: refused")


def _origin(url: str) -> tuple[str, str]:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme.lower(), f"{(parts.hostname or '').lower()}:{port}"


def _url(p: Plan, f: RemoteFile) -> str:
    from urllib.parse import quote

    return f"{endpoint().rstrip('/')}/{p.repo_id}/resolve/{p.commit}/{quote(f.path, safe='/')}"


class _Digest:
    """The hash a file must have: its LFS sha256, else its git blob id (sha1 of `blob SIZE\\0` and the bytes)."""

    def __init__(self, f: RemoteFile) -> None:
        self.want = f.etag
        if len(f.etag) == 64:
            self.h = hashlib.sha256()
        else:
            self.h = hashlib.sha1(usedforsecurity=False)
            self.h.update(b"blob %d\0" % f.size)

    def update(self, data: bytes) -> None:
        self.h.update(data)

    @property
    def ok(self) -> bool:
        return self.h.hexdigest() == self.want


def _read(p: Plan, f: RemoteFile) -> bytes:
    """A small listed file (a pipeline's index) into memory, checked against its listed size and hash."""
    digest, got = _Digest(f), bytearray()
    with _Client() as client, client.get(_url(p, f)) as r:
        for block in r.iter_bytes():
            got += block
            if len(got) > f.size:
                raise _too_much(p, f)
    digest.update(bytes(got))
    if len(got) != f.size or not digest.ok:
        raise PullError(f"{p.repo_id}/{f.path} from {endpoint()} is not the file its listing describes: refused")
    return bytes(got)


def _too_much(p: Plan, f: RemoteFile) -> PullError:
    return PullError(
        f"{p.repo_id}/{f.path}: {endpoint()} sent more than the {f.size} bytes its listing gave; nothing of it is kept"
    )


def _fetch(p: Plan, f: RemoteFile, client: _Client, bar) -> bool:
    """Make blob `f.etag` hold `f`'s bytes, under the library's lock for that blob; True when it continued what an
    interrupted pull left. A body longer than listed is cut off and removed; a whole file is checked against its
    size and hash; a connection that ends early leaves its part to continue."""
    from huggingface_hub.utils import WeakFileLock

    blobs = p.storage() / "blobs"
    blob = _inside(blobs, f.etag)
    if blob.is_file() and blob.stat().st_size == f.size:
        return False
    blobs.mkdir(parents=True, exist_ok=True)
    locks = p.cache_dir / ".locks" / p.storage().name
    locks.mkdir(parents=True, exist_ok=True)
    with WeakFileLock(str(_inside(locks, f"{f.etag}.lock"))):
        if blob.is_file() and blob.stat().st_size == f.size:
            return False
        part = _inside(blobs, f"{f.etag}.incomplete")
        parts = sorted(_partials(blobs, f.etag), key=lambda q: q.stat().st_size)
        keep = parts.pop() if parts else None
        for dead in parts:  # the lock is ours: no live download owns these
            dead.unlink(missing_ok=True)
        if keep is not None and keep != part:
            os.replace(keep, part)
        done = part.stat().st_size if keep is not None else 0
        if not 0 < done < f.size:
            part.unlink(missing_ok=True)
            done = 0
        digest = _Digest(f)
        if done:
            with part.open("rb") as old:
                while block := old.read(1 << 20):
                    digest.update(block)
        with hub_errors(p.repo_id, p.revision):
            extra = {"Range": f"bytes={done}-"} if done else {}
            with client.get(_url(p, f), extra) as r:
                if done and r.status_code != 206:  # the range was not honoured: the whole file again
                    done, digest = 0, _Digest(f)
                length = r.headers.get("content-length")
                if length is not None and length.isdigit() and done + int(length) > f.size:
                    part.unlink(missing_ok=True)
                    raise _too_much(p, f)
                bar.update(done)
                got = done
                with part.open("ab" if done else "wb") as out:
                    for block in r.iter_bytes(1 << 20):
                        got += len(block)
                        if got > f.size:
                            out.close()
                            part.unlink(missing_ok=True)
                            raise _too_much(p, f)
                        out.write(block)
                        digest.update(block)
                        bar.update(len(block))
        if got != f.size or not digest.ok:
            part.unlink(missing_ok=True)
            if done:
                raise PullError(
                    f"{p.repo_id}/{f.path}: the continued file does not match the hub's; run the pull again"
                )
            raise PullError(
                f"{p.repo_id}/{f.path}: {endpoint()} sent {got} bytes that do not match the listing "
                f"({f.size} bytes, hash {f.etag[:12]}…); nothing of it is kept"
            )
        os.replace(part, blob)
    return bool(done)


def cached_file(repo_id: str, filename: str) -> Path | None:
    """A file of a pulled repo in the local cache (never downloaded), or None."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename)
    return Path(found) if isinstance(found, str) else None
