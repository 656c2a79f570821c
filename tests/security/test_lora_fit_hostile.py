"""LoRAs that are not whole, and LoRAs that come in an archive (issue 54 item 10): the fit check refuses a LoRA whose
A/B pairs are incomplete or that adapts a module in some blocks of the model but not in others (a file holding part
of its tensors), and an archive's LoRA file is checked at import as `chief lora add` checks one, in one line, with
nothing written. A GGUF's chat template is rendered in Jinja's sandbox (llama-cpp-python's minimum version)."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path

import pytest

from generation.base import RenderError
from generation.loras import check_file, fit
from generation.tiny import build_wan_lora
from storage.archives import ArchiveError
from tests.conftest import tiny_board

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def whole(tmp_path_factory) -> Path:
    return build_wan_lora(tmp_path_factory.mktemp("loras") / "whole.safetensors", seed=3)


def edited(src: Path, out: Path, keep=lambda key: True, change=None) -> Path:
    """A copy of the LoRA at `src` with only the tensors `keep(key)` says, each through `change(key, tensor)`."""
    from safetensors.torch import load_file, save_file

    tensors = {k: (change(k, t) if change else t) for k, t in load_file(str(src)).items() if keep(k)}
    save_file(tensors, str(out), metadata={"format": "pt"})
    return out


def check(wan: Path, lora: Path):
    return fit("WanPipeline", wan, lora, ("transformer",))


def refused(wan: Path, lora: Path) -> str:
    with pytest.raises(RenderError) as e:
        check(wan, lora)
    text = str(e.value)
    assert text and "\n" not in text
    return text


def test_a_whole_lora_fits_and_one_that_adapts_fewer_kinds_everywhere_too(tiny_models, whole, tmp_path):
    wan = Path(tiny_models("wan"))
    assert check(wan, whole).text == "16 layers, rank 4"
    only_q = build_wan_lora(tmp_path / "q.safetensors", seed=3, targets=["to_q"])  # fewer modules, in every block
    assert check(wan, only_q).text == "4 layers, rank 4"


@pytest.mark.parametrize(
    "drop",
    [
        "blocks.1.attn1.to_k.lora_B",  # one layer has lora_A only
        "blocks.0.attn2.to_out.0.lora_A",  # one layer has lora_B only
    ],
)
def test_a_lora_whose_pairs_are_incomplete_is_refused(tiny_models, whole, tmp_path, drop):
    lora = edited(whole, tmp_path / "half.safetensors", keep=lambda k: drop not in k)
    assert "is incomplete:" in refused(Path(tiny_models("wan")), lora)


def test_a_lora_whose_halves_differ_in_rank_is_refused(tiny_models, whole, tmp_path):
    cut = lambda k, t: t[:2] if "blocks.0.attn1.to_v.lora_A" in k else t  # noqa: E731 -- A of rank 2, B of rank 4
    lora = edited(whole, tmp_path / "ranks.safetensors", change=cut)
    assert "is inconsistent: blocks.0.attn1.to_v" in refused(Path(tiny_models("wan")), lora)


@pytest.mark.parametrize(
    "keep",
    [
        lambda k: ".blocks.1." not in k,  # half its tensors: the second block's all gone
        lambda k: "blocks.0.attn2.to_k" not in k,  # one module missing from one block, pairs whole
    ],
    ids=["a block missing", "a module missing in one block"],
)
def test_a_lora_that_covers_part_of_what_it_claims_is_refused(tiny_models, whole, tmp_path, keep):
    lora = edited(whole, tmp_path / "part.safetensors", keep=keep)
    text = refused(Path(tiny_models("wan")), lora)
    assert "is incomplete: it adapts " in text and "in other 'blocks' blocks but not blocks." in text


@pytest.mark.parametrize(
    "blob",
    [
        b"\x10\x00\x00\x00\x00\x00\x00\x00" + b'{"a":{"data_offsets":[0,999]}}',  # a tensor past the end
        b"\xff" * 8 + b"{}",  # a header longer than the file
        b"not a safetensors file at all",
    ],
)
def test_a_file_that_is_not_safetensors_is_refused(tmp_path, blob):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(blob)
    with pytest.raises(RenderError):
        check_file(bad)


def snapshot(home: Path) -> list[str]:
    return sorted(str(p.relative_to(home)) for p in home.rglob("*") if p.is_file() and ".db" not in p.name)


def archive_with(make_studio, tmp_path, lora: Path) -> Path:
    """An archive of a project holding `lora`, made where nothing checks it (the animatic takes LoRAs unchecked)."""
    st = make_studio(home=tmp_path / "maker")
    pid = st.create_from_storyboard(tiny_board(2)).project_id
    st.lora_add(pid, lora, character="Keeper")
    return st.export_project(pid, tmp_path / "with-lora.chief.zip")


def test_an_archives_lora_is_checked_at_import_as_lora_add_checks_it(tiny_models, make_studio, tmp_path, whole):
    from generation.diffusers_backend import DiffusersBackend

    backend = DiffusersBackend(Path(tiny_models("wan")))
    misfit = build_wan_lora(tmp_path / "misfit.safetensors", seed=5, head_dim=16)
    out = archive_with(make_studio, tmp_path, misfit)
    st = make_studio(backend=backend, steps=2, home=tmp_path / "importer")
    before = snapshot(st.config.home)
    with pytest.raises(ArchiveError) as e:
        st.import_project(out)
    text = str(e.value)
    assert "\n" not in text and text.startswith("media/") and "(a LoRA): LoRA refused: " in text
    assert "does not fit the model" in text
    assert st.projects() == [] and snapshot(st.config.home) == before

    half = edited(whole, tmp_path / "half.safetensors", keep=lambda k: ".blocks.1." not in k)
    with pytest.raises(ArchiveError) as e:
        st.import_project(archive_with(make_studio, tmp_path / "again", half))
    assert "is incomplete" in str(e.value) and st.projects() == []


def test_an_archives_lora_that_is_no_safetensors_is_refused_on_the_animatic_too(make_studio, tmp_path):
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x08\x00\x00\x00\x00\x00\x00\x00[1,2,3]" + b"\0" * 64)
    out = archive_with(make_studio, tmp_path, junk)
    st = make_studio(home=tmp_path / "importer")
    with pytest.raises(ArchiveError) as e:
        st.import_project(out)
    assert "(a LoRA): " in str(e.value) and "not a safetensors file" in str(e.value)
    assert st.projects() == []


# A GGUF's chat template (its `tokenizer.chat_template` metadata) is rendered by llama-cpp-python's server. Each of
# these reaches Python's internals from the template; outside a sandbox the first runs a shell command.
HOSTILE_TEMPLATES = [
    "{{ cycler.__init__.__globals__.os.popen('touch {marker}').read() }}",
    "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "{% for m in messages %}{{ m.__class__.__base__.__subclasses__() }}{% endfor %}",
]
SANDBOXED_FROM = "0.2.72"  # llama_cpp/llama_chat_format.py: ImmutableSandboxedEnvironment from 0.2.72 on


def test_pyproject_asks_for_the_llama_cpp_python_that_sandboxes_chat_templates():
    import tomllib

    from packaging.requirements import Requirement
    from packaging.version import Version

    root = Path(__file__).resolve().parents[2]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    listed = [
        Requirement(r)
        for group in [project["dependencies"], *project["optional-dependencies"].values()]
        for r in group
        if Requirement(r).name == "llama-cpp-python"
    ]
    assert listed, "llama-cpp-python is listed nowhere in pyproject.toml"
    for req in listed:
        assert not req.specifier.contains("0.2.71") and req.specifier.contains(SANDBOXED_FROM)
        assert all(Version(s.version) >= Version(SANDBOXED_FROM) for s in req.specifier if s.operator == ">=")


@pytest.mark.parametrize("template", HOSTILE_TEMPLATES)
def test_a_hostile_chat_template_raises_a_sandbox_error_instead_of_running(tmp_path, template):
    """Through llama-cpp-python's own formatter where it is installed (`make real-server`), else through the
    environment it renders with from SANDBOXED_FROM on (ImmutableSandboxedEnvironment, trim and lstrip blocks)."""
    from jinja2.exceptions import SecurityError
    from packaging.version import Version

    marker = tmp_path / "ran"
    template = template.replace("{marker}", str(marker))
    messages = [{"role": "user", "content": "hello"}]
    try:
        import llama_cpp
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    except ImportError:  # not installed here: the sandbox it renders in
        import jinja2
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        env = ImmutableSandboxedEnvironment(loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True)
        render = lambda: env.from_string(template).render(messages=messages)  # noqa: E731
    else:
        assert Version(llama_cpp.__version__) >= Version(SANDBOXED_FROM)
        formatter = Jinja2ChatFormatter(template=template, eos_token="</s>", bos_token="<s>")
        render = lambda: formatter(messages=messages)  # noqa: E731
    with pytest.raises(SecurityError):
        render()
    assert not marker.exists()
