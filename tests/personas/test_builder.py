"""Building a persona from a viewer's comments: offline statistics, and through a local OpenAI-compatible server."""

from __future__ import annotations

import json
import re

import pytest

from agents.base import AgentError
from agents.comments import Comment, load_comments
from agents.persona_builder import PersonaOut, build_persona
from agents.personas import load_persona_file, persona_to_yaml
from storage.schema import DIMENSIONS
from tests.agents.openai_server import ok

PII = ["Kate", "Winters", "katew", "@", "http", "example.com", "blog."]


def _assert_no_pii(text: str) -> None:
    for bad in PII:
        assert bad not in text, f"{bad!r} leaked into the persona"


def _cited(evidence: dict, key: str) -> set[int]:
    return {int(re.match(r"#(\d+):", q).group(1)) for q in evidence[key]}


def test_offline_persona_cites_its_comments(viewer_file, tmp_path):
    comments = load_comments(viewer_file)
    p = build_persona(comments, "Colour-loving viewer")
    assert p.id == "colour_loving_viewer" and p.source == "built"
    assert "built offline from 8 comments" in p.who
    # loves come from the positive comments, hates from the negative ones, each with its evidence
    assert p.loves[0] == "visuals and cinematography" and _cited(p.evidence, "loves: visuals and cinematography") == {
        1,
        8,
    }
    assert "pacing" in p.hates and _cited(p.evidence, "hates: pacing") == {2}
    assert "flashing lights" in p.hates
    for field in ("loves", "hates", "viewing_history"):
        for item in getattr(p, field):
            assert p.evidence[f"{field}: {item}"], f"{field} item {item!r} cites nothing"
    assert p.viewing_history[0] == "Blade Runner 2049 (rated 9.0/10)"
    # weights: visuals are what this viewer talks about most
    assert set(p.weights) == set(DIMENSIONS) and max(p.weights, key=p.weights.get) == "visual_quality"
    assert p.weights["visual_quality"] > p.weights["intent_faithfulness"]
    # tastes from vocabulary: a dark image, flashing and slowness bothered them; they watch with subtitles
    assert p.tastes.brightness > 0.5 and p.tastes.flash_sensitivity > 0.3 and p.tastes.captions > 0.4
    assert p.tastes.shot_seconds < 5 and p.tastes.patience < 0.5
    assert _cited(p.evidence, "tastes.flash_sensitivity") == {5} and _cited(p.evidence, "tastes.brightness") == {4}
    # the same YAML form as the builtin personas, and it reads back
    text = persona_to_yaml(p)
    _assert_no_pii(text)
    path = tmp_path / f"{p.id}.yaml"
    path.write_text(text, encoding="utf-8")
    assert load_persona_file(path) == p


def test_offline_tastes_follow_the_viewer():
    slow = [
        Comment(i, t)
        for i, t in enumerate(
            [
                "I love long takes and a slow burn",
                "contemplative and quiet, beautiful",
                "Too fast, choppy cuts everywhere. Awful",
            ],
            1,
        )
    ]
    fast = [
        Comment(i, t) for i, t in enumerate(["So slow and boring", "it drags, too long", "tedious, I got bored"], 1)
    ]
    a, b = build_persona(slow, "Slow"), build_persona(fast, "Fast")
    assert a.tastes.shot_seconds > 5 > b.tastes.shot_seconds
    assert a.tastes.patience > 0.5 > b.tastes.patience


def test_a_file_full_of_personal_data_leaves_none_in_the_persona(tmp_path):
    path = tmp_path / "pii.csv"
    path.write_text(
        "text,title,rating,author,email\n"
        '"Loved the visuals!! @katew_99 https://kate.example.com/review — Kate Winters",Blade Runner 2049,9,'
        "Kate Winters,kate@mail.example.com\n"
        '"boring and slow, email me at kate.w@mail.example.com or call +44 20 7946 0958",The Irishman,2,Kate Winters,\n'
        '"by Kate Winters: gorgeous colours, see www.katesfilms.org and u/katew",Kate Winters Reviews Coco,10,,\n',
        encoding="utf-8",
    )
    p = build_persona(load_comments(path), "Viewer @katew_99 https://x.io")
    text = persona_to_yaml(p)
    for bad in ("Kate", "Winters", "katew", "@", "http", "www", "example", "katesfilms", "7946", "u/"):
        assert bad not in text, f"{bad!r} leaked into the persona"
    assert "gorgeous colours" in text  # the opinions are kept


def test_no_comments_is_an_error():
    with pytest.raises(ValueError, match="no comments"):
        build_persona([Comment(1, "@someone https://x.io")], "X")


def _answer(**over) -> dict:
    t = lambda text, *idx: {"text": text, "comments": list(idx)}  # noqa: E731
    w = lambda v, *idx: {"value": v, "comments": list(idx)}  # noqa: E731
    out = {
        "who": t("A colour-obsessed viewer who watches with subtitles; ask @katew_99", 1, 6),
        "viewing_history": [t("Blade Runner 2049", 1), t("Studio Ghibli films", 6)],
        "loves": [t("lush colour and light", 1, 8), t("emotional endings", 3)],
        "hates": [t("murky, dark images", 4), t("flashing lights", 5)],
        "notices_first": t("the colour and the light", 1),
        "voice": t("Short and exclamatory", 1, 8),
        "weights": {d: w(1.6 if d == "visual_quality" else 1.0, 1) for d in DIMENSIONS},
        "tastes": {
            "shot_seconds": w(4.0, 2),
            "motion": w(0.6, 8),
            "brightness": w(0.7, 4),
            "contrast": w(0.6),
            "captions": w(0.8, 6),
            "flash_sensitivity": w(0.9, 5),
            "continuity": w(0.5),
            "patience": w(0.3, 2),
        },
    }
    out.update(over)
    return out


def test_llm_persona_through_the_local_server(viewer_file, server, client):
    server.script(ok(_answer()))
    p = build_persona(load_comments(viewer_file), "Colour fan", client=client)
    body = server.requests[0]
    assert body["model"] == "persona-model"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "PersonaOut"
    sent = server.texts(0)
    assert '[4] on "Night Show" (rated 2/10): Too dark' in sent  # numbered, with title and 0..10 rating
    _assert_no_pii(sent)  # comments are sanitized before they leave the machine
    assert p.source == "built" and p.loves == ["lush colour and light", "emotional endings"]
    assert p.weights["visual_quality"] == 1.6 and p.tastes.flash_sensitivity == 0.9
    assert _cited(p.evidence, "loves: lush colour and light") == {1, 8}
    assert _cited(p.evidence, "tastes.flash_sensitivity") == {5} and "tastes.contrast" not in p.evidence
    assert p.evidence["hates: flashing lights"][0].startswith("#5: The flashing lights")
    _assert_no_pii(persona_to_yaml(p))  # what the model echoed is sanitized too


def test_llm_citing_a_comment_that_does_not_exist_is_repaired(viewer_file, server, client):
    bad = _answer(loves=[{"text": "colour", "comments": [42]}])
    server.script(ok(bad), ok(_answer()))
    p = build_persona(load_comments(viewer_file), "Colour fan", client=client)
    assert "comments are numbered 1..8" in server.texts(1)
    assert p.loves[0] == "lush colour and light"


def test_llm_failure_is_one_clear_error(viewer_file, server, client):
    server.script(ok("not json"), ok("still not json"))
    with pytest.raises(AgentError, match=r"persona builder colour_fan \(persona-model\)"):
        build_persona(load_comments(viewer_file), "Colour fan", client=client)


def test_answer_fixture_matches_the_schema():
    PersonaOut.model_validate(json.loads(json.dumps(_answer())))
