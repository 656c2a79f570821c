"""`chief models pull` against a local hub server (tests/hub_server.py) that answers huggingface_hub's own requests:
a tiny Wan pipeline saved from the real diffusers classes is pulled with progress bars, a pull killed midway is
continued from where it stopped (a Range request), refusals are one line with nothing written, and the pulled hub
id then renders offline through the product.

Each pull runs as a `chief` subprocess: huggingface_hub reads HF_ENDPOINT / HF_HOME / HF_HUB_OFFLINE at import."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.hub_server import HubServer, Repo

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = "transformer/diffusion_pytorch_model.safetensors"
VARIANT = "transformer/diffusion_pytorch_model.fp16.safetensors"
TOKEN = "hf_testtoken_" + "q7Zr2mWx9"  # a made-up token: it must never show up in output or files
CHUNK = 10 * 1024 * 1024
GGUFS = (
    "tiny-instruct-Q2_K.gguf",
    "tiny-instruct-Q4_K_M.gguf",
    "tiny-instruct-Q8_0.gguf",
    "mmproj-tiny-f16.gguf",
)  # huggingface_hub writes a download to disk in chunks of this size


def build_wide_wan(folder: Path) -> Path:
    """A tiny Wan pipeline whose transformer has a wide feed-forward, so its weights file (~14 MB) spans more than
    one of huggingface_hub's 10 MiB write chunks (a killed pull then leaves a partial file behind); plus an fp16
    variant of the transformer and a README, which a default pull must leave alone."""
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, WanPipeline, WanTransformer3DModel

    from generation.tiny import _wan_parts

    tokenizer, vae, text_encoder = _wan_parts()
    torch.manual_seed(0)
    transformer = WanTransformer3DModel(
        patch_size=(1, 2, 2),
        num_attention_heads=2,
        attention_head_dim=12,
        in_channels=16,
        out_channels=16,
        text_dim=32,
        freq_dim=256,
        ffn_dim=36864,
        num_layers=2,
        cross_attn_norm=True,
        qk_norm="rms_norm_across_heads",
        rope_max_seq_len=32,
    )
    pipe = WanPipeline(
        transformer=transformer,
        vae=vae,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=7.0),
        text_encoder=text_encoder,
        tokenizer=tokenizer,  # pyright: ignore[reportArgumentType]
    )
    pipe.save_pretrained(folder)
    transformer.to(torch.float16).save_pretrained(folder / "transformer", variant="fp16")
    (folder / "README.md").write_text("---\nlicense: apache-2.0\n---\n# wide tiny Wan\n")
    return folder


@pytest.fixture(scope="module")
def wan_folder(tmp_path_factory):
    return build_wide_wan(tmp_path_factory.mktemp("hub") / "wide-wan")


@pytest.fixture(scope="module")
def hub(wan_folder, tmp_path_factory):
    from generation.tiny import build_wan22_5b

    five_b = build_wan22_5b(tmp_path_factory.mktemp("hub") / "ti2v-5b")  # the shape of Wan 2.2 TI2V 5B, tiny
    ggufs = tmp_path_factory.mktemp("ggufs")  # a GGUF repo's usual shape: quantizations, a projector
    for i, name in enumerate(GGUFS):
        (ggufs / name).write_bytes(b"GGUF" + bytes([i]) * 4096)
    without_index = Repo.from_folder(wan_folder / "transformer", licence="mit")
    repos = {
        "studio/wide-wan": Repo.from_folder(wan_folder, licence="apache-2.0"),
        "studio/gated-wan": Repo.from_folder(wan_folder, gated="manual", licence="wan-community-licence"),
        "studio/huge-wan": Repo.from_folder(wan_folder, claimed_sizes={WEIGHTS: 3 * 10**15}),
        "studio/half-gone": Repo.from_folder(wan_folder, gone={"vae/config.json"}),
        "studio/just-weights": without_index,
        "Wan-AI/Wan2.2-TI2V-5B-Diffusers": Repo.from_folder(five_b, licence="apache-2.0"),
        "studio/tiny-instruct-gguf": Repo.from_folder(ggufs, licence="apache-2.0"),
    }
    with HubServer(repos, tokens=(TOKEN,)) as server:
        yield server


def env_for(hub: HubServer, hf_home: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_"))}
    return {
        **env,
        "PYTHONPATH": str(ROOT),
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(hf_home),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        **extra,
    }


def chief(args: list[str], env: dict, home: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "--home", str(home), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )


def blobs(hf_home: Path, repo: str) -> Path:
    return hf_home / "hub" / f"models--{repo.replace('/', '--')}" / "blobs"


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("error:")]


RENDER = """
import json, sys
from app.config import load_config
from app.studio import Studio
from storage.schema import Scene, Shot, Storyboard
env = {"CHIEF_VIDEO_BACKEND": "diffusers", "CHIEF_VIDEO_MODEL": sys.argv[2], "CHIEF_STEPS": "2", "CHIEF_NARRATION": "0"}
env.update({"CHIEF_VIDEO_VARIANT": sys.argv[3]} if len(sys.argv) > 3 else {})
st = Studio(load_config({"home": sys.argv[1]}, environ=env))
board = Storyboard(title="pulled", scenes=[Scene(scene_id="a", shots=[Shot(shot_id="s1", prompt="a red cat", duration=0.25, seed=1)])], fps=16, width=32, height=32)
pid = st.create_from_storyboard(board).project_id
r = st.render(pid)
print(json.dumps({"label": st.status().backend_label, "rendered": r.rendered, "model": r.model}))
"""


def test_pull_shows_progress_fetches_one_set_of_weights_and_renders_offline(hub, wan_folder, tmp_path):
    hf_home = tmp_path / "hf"
    res = chief(["--json", "models", "pull", "studio/wide-wan"], env_for(hub, hf_home), tmp_path / "home")
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["setting"] == "CHIEF_VIDEO_MODEL=studio/wide-wan" and out["family"] == "Wan"
    assert out["licence"] == "apache-2.0" and not out["gated"]
    assert "licence: apache-2.0" in res.stderr
    # huggingface_hub's bars, on stderr: the file count and the bytes, to the end
    assert f"Fetching {len(out['files'])} files: 100%" in res.stderr and "Download complete" in res.stderr
    assert WEIGHTS in out["files"] and VARIANT not in out["files"] and "README.md" not in out["files"]
    assert hub.gets(WEIGHTS) and not hub.gets(VARIANT) and not hub.gets("README.md")
    snapshot = Path(out["folder"])
    for name in out["files"]:
        assert (snapshot / name).read_bytes() == (wan_folder / name).read_bytes()

    # Offline, with the endpoint pointing at nothing: the hub id loads from the cache and renders.
    seen = len(hub.requests)
    offline = env_for(hub, hf_home, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    done = subprocess.run(
        [sys.executable, "-c", RENDER, str(tmp_path / "home"), "studio/wide-wan"],
        env=offline,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    rendered = json.loads(done.stdout.strip().splitlines()[-1])
    assert rendered["rendered"] == 1 and rendered["model"] == "studio/wide-wan"
    assert "WanPipeline" in rendered["label"]
    assert len(hub.requests) == seen  # nothing asked of the hub


def test_variant_pull_takes_the_variant_weights_and_the_plain_ones_elsewhere_then_loads_them(hub, tmp_path):
    hf_home = tmp_path / "hf"
    res = chief(["--json", "models", "pull", "studio/wide-wan", "--variant", "fp16"], env_for(hub, hf_home), tmp_path)
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert VARIANT in out["files"] and WEIGHTS not in out["files"]
    assert "vae/diffusion_pytorch_model.safetensors" in out["files"]  # the VAE has no fp16 variant: its own weights
    assert out["setting"] == "CHIEF_VIDEO_MODEL=studio/wide-wan CHIEF_VIDEO_VARIANT=fp16"

    # Offline: the setting it names loads the variant's weights (the plain transformer weights were never fetched,
    # so a load that did not pass the variant fails, in one line)
    offline = env_for(hub, hf_home, HF_HUB_OFFLINE="1", HF_ENDPOINT="http://127.0.0.1:9")
    runs = {}
    for variant in ("fp16", None):
        runs[variant] = subprocess.run(
            [sys.executable, "-c", RENDER, str(tmp_path / "home"), "studio/wide-wan", *([variant] if variant else [])],
            env=offline,
            capture_output=True,
            text=True,
            timeout=600,
            cwd=ROOT,
        )
    assert runs["fp16"].returncode == 0, runs["fp16"].stderr[-3000:]
    rendered = json.loads(runs["fp16"].stdout.strip().splitlines()[-1])
    assert rendered["rendered"] == 1 and "studio/wide-wan · fp16 weights" in rendered["label"]
    assert runs[None].returncode != 0 and "could not load studio/wide-wan" in runs[None].stderr


def kill_midway(hub, wan_folder, env, home, hf_home) -> Path:
    """Start a pull, let the server stall the weights after all but their last KiB, wait until the client has
    written its first 10 MiB chunk, kill it: the partial file it leaves."""
    size = (wan_folder / WEIGHTS).stat().st_size
    assert size > CHUNK + 1024
    hub.stall(WEIGHTS, after=size - 1024)
    proc = subprocess.Popen(
        [sys.executable, "-m", "app.cli", "--home", str(home), "models", "pull", "studio/wide-wan"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        assert hub.stalled.wait(300), "the pull never reached the weights"
        # wait for the client to write its first chunk (a condition, not a fixed delay)
        deadline = time.monotonic() + 120
        partial = []
        while time.monotonic() < deadline:
            partial = [p for p in blobs(hf_home, "studio/wide-wan").glob("*.incomplete") if p.stat().st_size >= CHUNK]
            if partial:
                break
            time.sleep(0.05)
        assert partial, "no partial file was written"
    finally:
        proc.kill()
        proc.wait()
        hub.release.set()
    assert proc.returncode != 0 and partial[0].stat().st_size < size
    return partial[0]


def test_a_killed_pull_continues_with_a_range_request(hub, wan_folder, tmp_path):
    hf_home, home = tmp_path / "hf", tmp_path / "home"
    env = env_for(hub, hf_home)
    written = kill_midway(hub, wan_folder, env, home, hf_home).stat().st_size

    before = len(hub.gets(WEIGHTS))
    res = chief(["--json", "models", "pull", "studio/wide-wan"], env, home)
    assert res.returncode == 0, res.stderr[-3000:]
    again = hub.gets(WEIGHTS)[before:]
    assert [r.range for r in again] == [f"bytes={written}-"]  # only the rest, once
    out = json.loads(res.stdout)
    assert out["resumed"] == [WEIGHTS]
    assert out["fetched_bytes"] <= out["bytes"] - written  # what the killed pull wrote is not fetched again
    pulled = Path(out["folder"]) / WEIGHTS
    assert hashlib.sha256(pulled.read_bytes()).digest() == hashlib.sha256((wan_folder / WEIGHTS).read_bytes()).digest()
    assert not list(blobs(hf_home, "studio/wide-wan").glob("*.incomplete"))


def test_a_damaged_partial_file_is_refused_then_fetched_afresh(hub, wan_folder, tmp_path):
    hf_home, home = tmp_path / "hf", tmp_path / "home"
    env = env_for(hub, hf_home)
    partial = kill_midway(hub, wan_folder, env, home, hf_home)
    with partial.open("r+b") as f:  # one byte of what the killed pull wrote goes bad
        f.seek(4096)
        byte = f.read(1)
        f.seek(4096)
        f.write(bytes([byte[0] ^ 0xFF]))
    res = chief(["models", "pull", "studio/wide-wan"], env, home)
    assert res.returncode == 1
    assert errors(res.stderr) == [
        f"error: studio/wide-wan/{WEIGHTS}: the continued file does not match the hub's; run the pull again"
    ]
    assert not list(blobs(hf_home, "studio/wide-wan").glob("*.incomplete"))  # the bad file is gone
    before = len(hub.gets(WEIGHTS))
    res = chief(["--json", "models", "pull", "studio/wide-wan"], env, home)
    assert res.returncode == 0, res.stderr[-3000:]
    assert [r.range for r in hub.gets(WEIGHTS)[before:]] == [None]  # fetched whole
    pulled = Path(json.loads(res.stdout)["folder"]) / WEIGHTS
    assert pulled.read_bytes() == (wan_folder / WEIGHTS).read_bytes()


def test_a_missing_repo_or_file_is_one_line(hub, tmp_path):
    env = env_for(hub, tmp_path / "hf")
    res = chief(["models", "pull", "studio/no-such-model"], env, tmp_path)
    assert res.returncode == 1
    assert res.stderr.strip().splitlines() == [
        f"error: no model repository 'studio/no-such-model' at {hub.url} (or it is private: set HF_TOKEN)"
    ]
    res = chief(["models", "pull", "studio/just-weights"], env, tmp_path)
    assert res.returncode == 1
    assert errors(res.stderr) == [
        "error: studio/just-weights is not a diffusers pipeline (no model_index.json): CHIEF cannot render with it"
    ]
    res = chief(["models", "pull", "studio/wide-wan", "--revision", "v9"], env, tmp_path)
    assert errors(res.stderr) == [f"error: studio/wide-wan has no revision 'v9' at {hub.url}"]
    res = chief(["models", "pull", "studio/wide-wan"], {**env, "HF_HUB_OFFLINE": "1"}, tmp_path)
    assert res.stderr.strip().splitlines() == ["error: HF_HUB_OFFLINE is set: unset it to pull a model"]
    assert not (tmp_path / "hf").exists()  # refused before a download: nothing written
    # a file the listing names but the hub no longer has: one line (what was fetched before it is kept, to resume)
    res = chief(["models", "pull", "studio/half-gone"], env_for(hub, tmp_path / "hf2"), tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert errors(res.stderr) == [f"error: studio/half-gone has no file 'vae/config.json' at {hub.url}"]


def test_the_disk_is_checked_before_anything_is_written(hub, tmp_path):
    hf_home = tmp_path / "hf"
    res = chief(["models", "pull", "studio/huge-wan"], env_for(hub, hf_home), tmp_path)
    assert res.returncode == 1
    (line,) = errors(res.stderr)
    assert line.startswith("error: studio/huge-wan needs 3000.0 TB more on disk") and "free" in line
    assert not (hf_home / "hub" / "models--studio--huge-wan").exists()
    assert not [r for r in hub.requests if r.method == "GET" and r.path.endswith(WEIGHTS) and "huge" in r.path]


def test_a_gated_repo_says_its_licence_and_takes_the_token_without_showing_it(hub, tmp_path):
    hf_home, home = tmp_path / "hf", tmp_path / "home"
    refused = chief(["models", "pull", "studio/gated-wan"], env_for(hub, hf_home), home)
    assert refused.returncode == 1
    assert errors(refused.stderr) == [
        f"error: studio/gated-wan is gated: accept its licence at {hub.url}/studio/gated-wan, then set HF_TOKEN "
        "to a token of that account"
    ]
    assert not list(hf_home.rglob("*.safetensors"))

    before = len(hub.requests)
    res = chief(["--json", "models", "pull", "studio/gated-wan"], env_for(hub, hf_home, HF_TOKEN=TOKEN), home)
    assert res.returncode == 0, res.stderr[-3000:]
    licence = [line for line in res.stderr.splitlines() if line.startswith("licence:")]
    assert licence == [
        f"licence: wan-community-licence · gated: the files need HF_TOKEN from an account that accepted it at "
        f"{hub.url}/studio/gated-wan"
    ]
    assert all(r.authorized for r in hub.requests[before:] if "/gated-wan/resolve/" in r.path and r.method == "GET")
    assert TOKEN not in res.stdout + res.stderr + refused.stderr
    for folder in (hf_home, home):  # CHIEF stores it nowhere (huggingface_hub keeps no copy of an env token)
        for f in folder.rglob("*"):
            if f.is_file() and not f.is_symlink():
                assert TOKEN.encode() not in f.read_bytes(), f


def test_doctor_recommends_a_family_for_the_card_and_its_pull_command_fetches_it(hub, tmp_path):
    """The doctor's own pull command, run as printed, fetches a pipeline of the family it recommended."""
    from click.testing import CliRunner

    from app.cli import main

    def doctor(*args):
        res = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "--json", "doctor", *args])
        assert res.exit_code == 0, res.output
        return json.loads(res.stdout)

    assert doctor("--vram", "4")["recommended"] is None  # no catalogued card fits 4 GiB
    small, big = doctor("--vram", "10")["recommended"], doctor("--vram", "96")["recommended"]
    assert (small["family"], small["profile"]) == ("Wan", "fits 8 GB") and small["card_vram_gb"] <= 10.7
    assert big["family"] == "Wan 2.2" and big["profile"] == "fastest"
    rec = doctor("--vram", "24")["recommended"]
    assert rec["family"] == "Wan 2.2 TI2V 5B" and rec["profile"] == "fits 24 GB"
    assert rec["tiers"]["final"].startswith("50 steps")
    report = doctor("--vram", "24")
    assert report["llm"].startswith("no LLM found: pull a local model")

    cmd = rec["pull"][0].split()
    assert cmd[:3] == ["chief", "models", "pull"]
    res = chief(["--json", *cmd[1:]], env_for(hub, tmp_path / "hf"), tmp_path / "home")
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["repo_id"] == rec["repo_id"] and out["family"] == rec["family"]
    assert out["setting"] == f"CHIEF_VIDEO_MODEL={rec['repo_id']}"


def test_an_llm_pull_takes_one_gguf_and_names_the_setting_that_runs_it(hub, tmp_path):
    hf_home = tmp_path / "hf"
    env = env_for(hub, hf_home)
    res = chief(["--json", "models", "pull", "--llm", "studio/tiny-instruct-gguf"], env, tmp_path / "home")
    assert res.returncode == 0, res.stderr[-3000:]
    out = json.loads(res.stdout)
    assert out["files"] == ["tiny-instruct-Q4_K_M.gguf"]  # of several quantizations, the Q4_K_M; no projector
    assert [r.path.rsplit("/", 1)[-1] for r in hub.requests if r.method == "GET" and "gguf/resolve" in r.path] == [
        "tiny-instruct-Q4_K_M.gguf"
    ]
    spec = out["setting"].removeprefix("CHIEF_LOCAL_LLM=")
    assert spec == "studio/tiny-instruct-gguf/tiny-instruct-Q4_K_M.gguf"
    # the setting's value is found offline in the cache, as CHIEF's local runner reads it
    found = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from agents.local_llm import gguf_path; print(gguf_path(sys.argv[1]))",
            spec,
        ],
        env=env_for(hub, hf_home, HF_HUB_OFFLINE="1"),
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).read_bytes() == b"GGUF" + bytes([1]) * 4096
    one = chief(["models", "pull", "--llm", "studio/tiny-instruct-gguf:tiny-instruct-Q8_0.gguf"], env, tmp_path)
    assert one.returncode == 0, one.stderr[-2000:]
    assert "CHIEF_LOCAL_LLM=studio/tiny-instruct-gguf/tiny-instruct-Q8_0.gguf" in one.stdout


def test_text_from_the_hub_is_shown_as_one_short_printable_line():
    from generation.hub import clean

    assert clean("mit\x1b[2J\nand more\x07") == "mit [2J and more"
    assert clean("x" * 500, 50) == "x" * 49 + "…"
