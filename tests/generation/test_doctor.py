"""`chief doctor`: the machine, the families, and a model's memory estimate read from its files without loading it."""

import json

import pytest
from click.testing import CliRunner

from app.cli import main
from generation.memory import model_parts, safetensors_params
from generation.pipelines import _PIPELINES

pytestmark = pytest.mark.slow


def doctor(tmp_path, *args, ok=True):
    res = CliRunner().invoke(
        main, ["--home", str(tmp_path / "home"), "--json", "doctor", *args], catch_exceptions=False
    )
    if ok:
        assert res.exit_code == 0, res.output + res.stderr
    return res


def file_bytes(folder):
    """What the weight files hold: each file's size less its header (8 bytes of length, then the JSON)."""
    total = 0
    for f in folder.glob("*/*.safetensors"):
        header = int.from_bytes(f.read_bytes()[:8], "little")
        total += f.stat().st_size - 8 - header
    return total


@pytest.mark.parametrize("name", ["wan22", "skyreels_df", "ltx2", "hunyuan15"])
def test_the_weights_estimate_matches_the_files_and_loads_nothing(folders, tmp_path, name):
    from pathlib import Path

    folder = Path(folders(name))
    before = dict(_PIPELINES)
    out = json.loads(doctor(tmp_path, "--model", str(folder), "--vram", "16", "--dtype", "fp32").stdout)
    assert _PIPELINES == before  # nothing was loaded
    est = out["estimate"]
    on_disk = file_bytes(folder)
    assert 0.97 * on_disk <= est["weights_bytes"] <= on_disk
    assert {"weights_bytes", "peak_bytes", "profile", "fits"} <= set(est)
    # The peak is for a 5 s shot at the family's full size: at 16 GiB the fastest profile's untiled VAE decode
    # does not fit, so the first profile that does is recommended, and its peak is the one reported.
    fitting = [n for n, p in est["profiles"].items() if p["fits"]]
    assert est["profile"] == fitting[0] and est["fits"] is True
    assert est["peak_bytes"] == est["profiles"][fitting[0]]["peak_bytes"] <= 16 << 30
    roomy = json.loads(doctor(tmp_path, "--model", str(folder), "--vram", "64", "--dtype", "fp32").stdout)
    assert roomy["estimate"]["profile"] == "fastest"
    assert est["profiles"]["fastest"]["weights_bytes"] == est["weights_bytes"]  # fp32 files, fp32 run
    assert "estimate" in est["method"]


def test_transformer_weights_shrink_under_int8_and_nothing_fits_a_tiny_card(folders, tmp_path):
    from pathlib import Path

    folder = Path(folders("wan22"))
    parts = {p.name: p for p in model_parts(folder)}
    assert set(parts) == {"transformer", "transformer_2", "text_encoder", "vae"}
    assert parts["transformer"].params == sum(
        safetensors_params(folder / "transformer" / "diffusion_pytorch_model.safetensors").values()
    )
    est = json.loads(doctor(tmp_path, "--model", str(folder), "--vram", "0.5", "--dtype", "fp32").stdout)["estimate"]
    profiles = est["profiles"]
    experts = parts["transformer"].params + parts["transformer_2"].params
    assert profiles["fastest"]["weights_bytes"] - profiles["fits 24 GB"]["weights_bytes"] == experts * 3  # 4 -> 1 byte
    assert (
        profiles["fits 8 GB"]["peak_bytes"] < profiles["fits 12 GB"]["peak_bytes"] < profiles["fastest"]["peak_bytes"]
    )
    assert est["profile"] is None and est["fits"] is False  # a full-size frame budget cannot fit 0.5 GiB


def test_the_machine_report_lists_families_and_backends(tmp_path):
    out = json.loads(doctor(tmp_path).stdout)
    names = {f["name"] for f in out["families"]}
    assert {"Wan 2.2", "Wan 2.2 TI2V 5B", "LTX-2", "HunyuanVideo 1.5", "SkyReels-V2"} <= names
    assert all(f["available"] for f in out["families"])  # diffusers 0.42 has every class
    assert out["quantization"]["torchao"] is True and out["estimate"] is None
    assert out["devices"][0]["name"] == "cpu" and out["torch"] and out["diffusers"]
    human = CliRunner().invoke(main, ["--home", str(tmp_path / "home"), "doctor"], catch_exceptions=False).stdout
    assert "quantization: torchao yes" in human


def test_a_folder_that_is_not_a_model_is_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    res = doctor(tmp_path, "--model", str(tmp_path / "empty"), ok=False)
    assert res.exit_code == 1 and "no model_index.json" in res.stderr and len(res.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="checks the refusal on a machine without CUDA")
def test_the_cli_profile_refuses_what_needs_cuda_in_one_line_and_shows_what_runs(folders, tmp_path):
    base = ["--home", str(tmp_path / "home"), "--backend", "diffusers", "--model", folders("wan")]
    res = CliRunner().invoke(main, [*base, "--profile", "fits 8 GB", "status"], catch_exceptions=False)
    assert res.exit_code == 1
    assert res.stderr.strip() == (
        "error: profile fits 8 GB: leaf-level group offloading moves weights between the CPU and a CUDA GPU; "
        "the device is cpu"
    )
    res = CliRunner().invoke(main, [*base, "--profile", "fits 24 GB", "--json", "status"], catch_exceptions=False)
    assert res.exit_code == 0, res.output + res.stderr
    assert "profile fits 24 GB · int8 · no offload · VAE tiling" in res.stdout
