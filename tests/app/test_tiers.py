"""Two tiers, one lineage (issue 32) through the CLI and the Studio on the animatic, which draws both tiers alike
but keys and labels them apart; a creator's LoRAs through `chief lora`."""

import json

import pytest

from generation.tiny import build_wan_lora
from tests.conftest import tiny_board

pytestmark = pytest.mark.slow  # several renders of a 4-shot film through the CLI


def _new(chief, tmp_path) -> str:
    import yaml

    path = tmp_path / "board.yaml"
    path.write_text(yaml.safe_dump(tiny_board(4).model_dump(mode="json")))
    return json.loads(chief("--json", "new", "--storyboard", str(path)).stdout)["project"]


def _shots(res) -> dict:
    data = json.loads(res.stdout)
    return data, {s["shot_id"]: s for s in data["shots"]}


def test_drafts_then_a_finalised_shot_then_finals_one_lineage(chief, tmp_path):
    pid = _new(chief, tmp_path)
    data, drafts = _shots(chief("--json", "render", pid, "--tier", "draft"))
    assert {s["tier"] for s in drafts.values()} == {"draft"} and data["label"].endswith("every shot a draft")
    assert "draft (the animatic draws both tiers alike)" in data["label"]
    data, mixed = _shots(chief("--json", "render", pid, "--tier", "final", "--shots", "s2"))
    assert (mixed["s2"]["tier"], mixed["s2"]["status"]) == ("final", "rendered")
    assert mixed["s2"]["key"] != drafts["s2"]["key"]  # cached apart
    assert all(mixed[s]["tier"] == "draft" and mixed[s]["key"] == drafts[s]["key"] for s in ("s1", "s3", "s4"))
    assert data["label"].endswith("3 of 4 shots drafts (s1, s3, s4)")
    text = chief("render", pid, "--tier", "final", "--shots", "s2").stdout
    assert "drafts: s1, s3, s4" in text
    data, again = _shots(chief("--json", "render", pid, "--tier", "draft"))
    assert (again["s2"]["tier"], again["s2"]["status"]) == ("final", "reused")  # a finalised shot stays final
    assert data["rendered"] == 0
    chief("film", pid, "--tier", "final")  # the project's default tier: a new version
    data, finals = _shots(chief("--json", "render", pid))
    assert {s["tier"] for s in finals.values()} == {"final"} and "· every shot final" in data[
        "label"
    ]  # (a film cut before may follow)
    assert finals["s2"]["status"] == "reused" and data["rendered"] == 3


def test_critics_are_told_which_watched_shots_are_drafts(studio):
    pid = studio.create_from_storyboard(tiny_board(3)).project_id
    studio.render(pid, tier="draft")
    render = studio.render(pid, tier="final", scope=studio.scope(pid, None, None, "s3"))
    v = studio.version(pid)
    label = studio._watching.film_view(v, render).renderer_label
    assert "Shots s1, s2 are drafts: fast renders" in label and "s3" not in label.split("Shots")[1]
    assert "preview" not in label.split("Shots")[1]  # a draft is not an animatic (critic_user.j2's previz note)


def test_lora_add_list_remove(chief, tmp_path):
    pid = _new(chief, tmp_path)
    lora = build_wan_lora(tmp_path / "keeper look.safetensors", seed=5)
    res = chief("lora", "add", pid, str(lora), "--character", "Keeper", "--scale", "0.7")
    assert "LoRA keeper look (Keeper's shots, weight 0.7)" in res.stdout
    assert "not checked: animatic takes no LoRA" in res.stdout  # said, not silent
    listed = json.loads(chief("--json", "lora", "list", pid).stdout)["loras"]
    assert [(x["name"], x["character"], x["scale"]) for x in listed] == [("keeper look", "Keeper", 0.7)]
    res = chief("lora", "add", pid, str(lora), "--character", "Nobody", ok=False)
    assert res.exit_code == 1 and res.stderr.strip().endswith("no character 'Nobody' in v2's bible")
    chief("lora", "remove", pid, "keeper look")
    assert json.loads(chief("--json", "lora", "list", pid).stdout)["loras"] == []
    (tmp_path / "notes.txt").write_text("x")
    res = chief("lora", "add", pid, str(tmp_path / "notes.txt"), ok=False)
    assert res.stderr.count("\n") == 1 and "a LoRA is a .safetensors file" in res.stderr


def test_doctor_shows_the_speed_settings(chief):
    res = chief("--json", "doctor", env={"CHIEF_VIDEO_CACHE": "all", "CHIEF_VIDEO_ATTENTION": "native"})
    speed = json.loads(res.stdout)["speed"]
    assert (speed["cache"], speed["attention"], speed["attention_used"]) == ("all", "native", "native")
    assert speed["compiles"] is False  # no CUDA here: `auto` leaves compilation off
    text = chief("doctor", env={"CHIEF_VIDEO_DRAFT_LORA": "/x/high.safetensors,/x/low.safetensors"}).stdout
    assert "· cache draft (CHIEF_VIDEO_CACHE) · draft LoRA: /x/high.safetensors, /x/low.safetensors" in text
