"""Models onto this machine through huggingface_hub: a diffusers video pipeline (`chief models pull`) or a GGUF
language model (`chief models pull --llm`), into the hub's shared cache, so the hub id then loads offline.

What is fetched is chosen from the repo's own listing before anything is written: a pipeline's model_index.json
names its components, and each component folder gives its configs, tokenizer files and one set of weights
(safetensors before .bin; the `--variant` infix, e.g. `model.fp16.safetensors`, or none). The disk is checked
against the sizes the hub reports; a gated repo's licence is said in one line. huggingface_hub does the rest: the
endpoint (HF_ENDPOINT), the token (HF_TOKEN or `hf auth login`, sent only to the endpoint, never printed or
stored here), the cache (HF_HOME / HF_HUB_CACHE), progress bars, and retries with a Range request when a
connection drops. One thing it no longer does (huggingface_hub >= 1.x writes each download to a process-unique
temporary file): continue a file that a killed process left half-written. `_resume` does that with the library's
own `http_get(resume_size=...)`, under the library's lock for that blob, before the snapshot download runs.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from generation.base import RenderError

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".ckpt", ".pth", ".pt", ".msgpack", ".onnx", ".h5", ".gguf")
# "model.fp16.safetensors", "model.fp16-00001-of-00002.safetensors", "model.safetensors.index.fp16.json"
_SHARD = re.compile(r"-\d{5}-of-\d{5}$")
INDEX_LIMIT = 1 << 20  # a model_index.json is a few hundred bytes


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
    """Ask the hub what `repo_id` holds and choose the files: a diffusers pipeline's components, or (llm) one GGUF."""
    from huggingface_hub import HfApi, constants, hf_hub_download

    api = HfApi()
    with hub_errors(repo_id, revision):
        info = api.model_info(repo_id, revision=revision, files_metadata=True)
    siblings = {s.rfilename: s for s in info.siblings or []}
    card = info.card_data
    licence = (card.get("license_name") or card.get("license")) if card is not None else None
    licence = licence or next((t.split(":", 1)[1] for t in info.tags or [] if t.startswith("license:")), None)
    result = Plan(
        repo_id=repo_id,
        revision=revision,
        commit=str(info.sha),
        files=[],
        licence=clean(licence) if licence else None,
        gated=bool(info.gated),
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
        if (siblings["model_index.json"].size or 0) > INDEX_LIMIT:
            raise PullError(f"{repo_id}: its model_index.json is over {INDEX_LIMIT >> 10} KiB, not a pipeline's")
        with (
            hub_errors(repo_id, revision),
            tempfile.TemporaryDirectory() as tmp,
        ):  # the cache is written after the disk check
            index_path = hf_hub_download(repo_id, "model_index.json", revision=result.commit, local_dir=tmp)
            index = json.loads(Path(index_path).read_text())
        result.pipeline, result.index = clean(index.get("_class_name", "?"), 80), index
        chosen = pipeline_files(index, list(siblings), variant)
    for name in chosen:
        s = siblings[name]
        etag = s.lfs.sha256 if s.lfs is not None else s.blob_id
        if s.size is None or etag is None:
            raise PullError(f"{endpoint()} gave no size or hash for {repo_id}/{name}: cannot check the disk first")
        result.files.append(RemoteFile(name, int(s.size), str(etag)))
    return result


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


def _resume(p: Plan, tqdm_class=None) -> list[str]:
    """Finish the files an interrupted pull left half-written, from where they stop (a Range request), with the
    library's own `http_get`, holding the library's lock for each blob (so a live download is never touched)."""
    from huggingface_hub import get_hf_file_metadata, hf_hub_url
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import WeakFileLock, build_hf_headers

    blobs = p.storage() / "blobs"
    locks = p.cache_dir / ".locks" / p.storage().name
    resumed = []
    for f in p.files:
        if (blobs / f.etag).is_file() or not _partials(blobs, f.etag):
            continue
        locks.mkdir(parents=True, exist_ok=True)
        with WeakFileLock(str(locks / f"{f.etag}.lock")):
            parts = sorted(_partials(blobs, f.etag), key=lambda q: q.stat().st_size)
            if (blobs / f.etag).is_file() or not parts:
                continue
            keep = parts.pop()
            for dead in parts:  # the lock is ours, so no live download owns these
                dead.unlink(missing_ok=True)
            done = keep.stat().st_size
            if not 0 < done < f.size:
                keep.unlink()
                continue
            with hub_errors(p.repo_id, p.revision):
                meta = get_hf_file_metadata(hf_hub_url(p.repo_id, f.path, revision=p.commit))
                # Another file now, or one Xet serves (its partial file need not be a prefix, and hf_xet keeps its
                # own chunk cache): leave it to the snapshot download.
                if meta.etag != f.etag or meta.size != f.size or meta.xet_file_data is not None:
                    keep.unlink()
                    continue
                with keep.open("ab") as out:
                    http_get(
                        meta.location,
                        out,
                        resume_size=done,
                        headers=build_hf_headers(),
                        expected_size=f.size,
                        displayed_filename=f.path,
                        tqdm_class=tqdm_class,
                    )
            if keep.stat().st_size != f.size or not _matches(keep, f.etag):
                keep.unlink()
                raise PullError(
                    f"{p.repo_id}/{f.path}: the continued file does not match the hub's; run the pull again"
                )
            os.replace(keep, blobs / f.etag)
            resumed.append(f.path)
    return resumed


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


def _matches(path: Path, etag: str) -> bool:
    """An LFS file's etag is its sha256: check a continued file against it (a git blob id is not checked)."""
    if not re.fullmatch(r"[0-9a-f]{64}", etag):
        return True
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest() == etag


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
    """Check the disk, finish what an interrupted pull left, then `snapshot_download` the chosen files (progress
    bars on stderr, the hub's shared cache)."""
    from huggingface_hub import snapshot_download

    need, _ = check_disk(p)
    tqdm_class = tqdm_class or progress_bars()
    resumed = _resume(p, tqdm_class)
    with hub_errors(p.repo_id, p.revision):
        folder = snapshot_download(
            p.repo_id,
            revision=p.revision,
            allow_patterns=[glob.escape(f.path) for f in p.files],
            tqdm_class=tqdm_class,
        )
    return Pulled(
        repo_id=p.repo_id,
        commit=p.commit,
        folder=str(folder),
        files=[f.path for f in p.files],
        bytes=p.total_bytes,
        fetched_bytes=need,
        resumed=resumed,
        licence=p.licence,
        gated=p.gated,
        pipeline=p.pipeline,
    )


def cached_file(repo_id: str, filename: str) -> Path | None:
    """A file of a pulled repo in the local cache (never downloaded), or None."""
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo_id, filename)
    return Path(found) if isinstance(found, str) else None
