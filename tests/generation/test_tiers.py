"""Two tiers and LoRAs (issue 32) on the tiny random-weight Wan, loaded through the product's own code: the draft's
transformer work counted by forward hooks, a LoRA's effect on the pixels and the clip key, a LoRA that does not fit
refused in one line."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np
import pytest
import torch
from safetensors.torch import load_file, save_file

from bench.gpu_diffusers import transformer_work
from generation.base import RenderError, ShotRequest, clip_key, file_sha256
from generation.diffusers_backend import DiffusersBackend
from generation.pipelines import _PIPELINES
from generation.speed import Speed
from generation.tiny import build_wan_lora
from generation.video_io import read_frames

pytestmark = pytest.mark.slow

# 16x16, 5 frames (0.5 s at 8 fps under 4k+1): the final's 50 steps with CFG stay a few seconds on a CPU
SHOT = ShotRequest("s1", "a red cat dances in the rain", duration=0.5, width=16, height=16, fps=8)


@pytest.fixture(scope="module")
def loras(tmp_path_factory):
    root = tmp_path_factory.mktemp("loras")
    return {
        "speed": build_wan_lora(root / "speed.safetensors", seed=3),
        "look": build_wan_lora(root / "look.safetensors", seed=5),
        "shapes": build_wan_lora(root / "shapes.safetensors", seed=3, head_dim=16),
    }


def warm_pipe(backend):
    return next(e.pipe for (m, o), e in _PIPELINES.items() if m == backend.model and o == backend.options)


def frames(path):
    return np.stack(read_frames(path)[0]).astype(np.int16)


def one_line(err: pytest.ExceptionInfo) -> str:
    message = str(err.value)
    assert "\n" not in message and message
    return message


def test_a_draft_shot_does_at_most_an_eighth_of_a_final_shots_transformer_work(folders, loras, tmp_path):
    backend = DiffusersBackend(folders("wan"), speed=Speed(draft_lora=(str(loras["speed"]),)))
    draft, final = backend.resolve(SHOT.with_(tier="draft")), backend.resolve(SHOT)
    backend.render(draft, tmp_path / "warm.mp4")  # loads the pipeline and the speed LoRA
    pipe = warm_pipe(backend)
    work = {}
    for name, request in (("draft", draft), ("final", final)):
        with transformer_work(pipe) as counts:
            backend.render(request, tmp_path / f"{name}.mp4")
        work[name] = dict(counts)
    print(f"transformer work per shot: draft {work['draft']}, final {work['final']}")
    assert work["final"]["passes"] > 0 and work["draft"]["passes"] > 0
    assert work["draft"]["tokens"] * 8 <= work["final"]["tokens"]
    # the tier and what it changes are in the clip key and the label: drafts and finals are cached apart
    assert clip_key(backend, draft) != clip_key(backend, final)
    assert draft.loras == ((file_sha256(loras["speed"]), 1.0, "transformer"),) and final.loras == ()
    assert backend.tier_label("draft").startswith("draft: 4 steps, guidance 1, speed LoRA ×1")
    assert backend.tier_label("final") == "final: 50 steps, guidance 5"
    # the same seed and keyframe go to both tiers: a final is the draft's shot at full quality
    assert (draft.seed, draft.keyframe_sha256, draft.prompt) == (final.seed, final.keyframe_sha256, final.prompt)


def test_a_lora_changes_the_pixels_and_the_key_and_acts_only_on_its_shots(folders, loras, tmp_path):
    backend = DiffusersBackend(folders("wan"))
    look = loras["look"]
    plain = backend.resolve(SHOT.with_(steps=2))
    styled = backend.resolve(SHOT.with_(steps=2, loras=((file_sha256(look), 1.0, "all"),), lora_files=(str(look),)))
    assert clip_key(backend, plain) != clip_key(backend, styled)
    weaker = styled.with_(loras=((file_sha256(look), 0.5, "all"),))
    assert clip_key(backend, weaker) != clip_key(backend, styled)  # its weight is in the key too
    before = frames(backend.render(plain, tmp_path / "before.mp4").path)
    with_lora = frames(backend.render(styled, tmp_path / "lora.mp4").path)
    after = frames(backend.render(plain, tmp_path / "after.mp4").path)
    assert np.abs(with_lora - before).mean() > 0.5  # the LoRA changes the picture
    assert np.array_equal(before, after)  # and is off for the next shot that does not take it


def test_a_lora_that_does_not_fit_the_model_is_refused_in_one_line(folders, loras, tmp_path):
    backend = DiffusersBackend(folders("wan"))
    assert backend.check_lora(loras["look"]).text == "16 layers, rank 4"
    with pytest.raises(RenderError) as err:
        backend.check_lora(loras["shapes"])
    assert one_line(err).startswith("shapes.safetensors does not fit the model: blocks.0.attn1.to_")
    assert "has 24 inputs, the LoRA [4, 32]" in one_line(err)
    renamed = {k.replace("attn1", "attn7"): v for k, v in load_file(loras["look"]).items()}  # layers it lacks
    save_file(renamed, tmp_path / "keys.safetensors")
    with pytest.raises(RenderError) as err:
        backend.check_lora(tmp_path / "keys.safetensors")
    assert one_line(err).startswith("keys.safetensors does not fit the model: it has no layer blocks.")
    (tmp_path / "junk.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(RenderError) as err:
        backend.check_lora(tmp_path / "junk.safetensors")
    assert one_line(err).startswith("junk.safetensors is not a LoRA diffusers can read")


def test_a_two_expert_draft_loads_one_lora_per_expert(folders, tmp_path):
    """Wan 2.2 A14B: the high-noise LoRA into `transformer`, the low-noise one into `transformer_2`
    (load_into_transformer_2); one file for two experts is refused in one line."""
    high = build_wan_lora(tmp_path / "high.safetensors", seed=11)
    low = build_wan_lora(tmp_path / "low.safetensors", seed=12)
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan22"), speed=Speed(draft_lora=(str(high),))).resolve(SHOT.with_(tier="draft"))
    assert "needs 2 file(s), comma-separated; got 1" in one_line(err)
    backend = DiffusersBackend(folders("wan22"), speed=Speed(draft_lora=(str(high), str(low))))
    draft = backend.resolve(SHOT.with_(tier="draft"))
    assert [t for _, _, t in draft.loras] == ["transformer", "transformer_2"]
    backend.render(draft, tmp_path / "draft.mp4")
    pipe = warm_pipe(backend)
    for part, sha in (("transformer", file_sha256(high)), ("transformer_2", file_sha256(low))):
        assert list(getattr(pipe, part).peft_config) == [f"chief_{sha[:16]}"]
    assert pipe._guidance_scale_2 == 1.0  # the draft's extra arguments: no CFG on the low-noise expert either
    with torch.no_grad():
        backend.render(backend.resolve(SHOT.with_(steps=2)), tmp_path / "final.mp4")
    assert pipe._guidance_scale_2 == 3.0  # the final's row


def test_speed_settings_are_refused_in_one_line_where_the_machine_cannot(folders):
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan"), speed=Speed(compile="on"))
    assert one_line(err) == "CHIEF_VIDEO_COMPILE=on compiles for a CUDA GPU; the device is cpu"
    with pytest.raises(RenderError) as err:
        DiffusersBackend(folders("wan"), speed=Speed(attention="flash"))
    assert one_line(err) == "CHIEF_VIDEO_ATTENTION=flash needs a CUDA GPU; the device is cpu"
    backend = DiffusersBackend(folders("wan"), speed=Speed(cache="all"))
    final = backend.resolve(SHOT)
    assert final.cache == "FirstBlockCache(threshold=0.05)"  # on finals only when asked, and then in the key
    assert clip_key(backend, final) != clip_key(DiffusersBackend(folders("wan")), SHOT.with_())
    assert backend.label.endswith("attention native · not compiled · cache on drafts and finals")


def test_every_row_s_cache_hook_knows_its_family_s_blocks():
    """A row's cache attaches to the blocks diffusers' hooks know (TransformerBlockRegistry): the transformer class
    of each row's pipeline, read from the pipeline's signature, has its main block registered."""
    import inspect
    import re

    import diffusers
    from diffusers.hooks._helpers import TransformerBlockRegistry

    from generation.families import FAMILIES, VARIANTS

    TransformerBlockRegistry._register()  # diffusers fills its registry on first use
    known = {cls.__name__ for cls in TransformerBlockRegistry._registry}
    rows = [(c, f) for c, f in FAMILIES.items()] + [(c, f) for c, fs in VARIANTS.items() for f in fs]
    checked = 0
    for cls_name, row in rows:
        if row.cache is None and (row.draft is None or row.draft.cache is None):
            continue
        hint = inspect.signature(getattr(diffusers, cls_name).__init__).parameters["transformer"].annotation
        name = re.search(r"(\w+Transformer\w*Model)", str(hint))
        assert name is not None, hint
        transformer = getattr(diffusers, name.group(1))
        blocks = transformer._repeated_blocks
        if not blocks:  # diffusers names no repeated block for this class: nothing to read it from
            continue
        assert blocks[0] in known, (row.name, blocks)  # its main block
        checked += 1
    assert checked >= 4
    assert "SkyReelsV2TransformerBlock" not in known  # why the SkyReels-V2 row has no cache (a draft failed with one)
