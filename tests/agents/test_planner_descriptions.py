"""Shot descriptions (the audio description's words, issue 24 item 6): the LLM planner's shot schema and prompts ask
for one and the storyboard keeps it; the offline planner writes one from each shot's prompt, shortened so it fits a
gap between the shot's lines."""

from __future__ import annotations

from agents.offline.planner import OfflinePlanner
from agents.planner import LLMPlanner
from storage.schema import WORDS_PER_SECOND, fit_gap
from tests.agents.openai_server import ok
from tests.agents.test_planner import _props, plan


def test_the_llm_plan_asks_for_a_description_and_keeps_it(server, client):
    answer = plan(12, 5)
    answer["scenes"][0]["shots"][0]["description"] = "Ada climbs the lighthouse stairs, lamp in hand."
    server.script(ok(answer))  # the other shots answer without one (an older model's answer): they have none
    sb = LLMPlanner(client).plan("an old keeper and a gull", 1).value
    schema = server.requests[-1]["response_format"]["json_schema"]["schema"]
    assert "description" in _props(schema, "scenes", "shots")
    assert "a viewer who cannot see the picture" in server.texts()
    assert sb.shots()[0].description == "Ada climbs the lighthouse stairs, lamp in hand."
    assert sb.shots()[1].description == ""


def test_the_scene_by_scene_plan_asks_each_scene_for_descriptions(config):
    from agents.llm import LLMClient
    from tests.agents import longform
    from tests.agents.openai_server import FakeOpenAI

    with FakeOpenAI(longform.responder, max_output_tokens=4096, context_tokens=32768) as server:
        client = LLMClient(config.model_copy(update={"base_url": server.base_url, "max_concurrency": 4}))
        LLMPlanner(client).plan("a keeper and a gull through a winter of storms", 3)
    scene = next(b for b in server.requests if longform.schema_name(b) == "SceneShotsOut")
    assert "description" in _props(scene["response_format"]["json_schema"]["schema"], "shots")
    assert "short description of what is seen" in scene["messages"][-1]["content"]


def test_the_offline_planner_describes_each_shot_from_its_prompt_within_a_gap():
    for idea, minutes in (
        ("An old lighthouse keeper befriends a lonely whale during a storm", 1.0),
        ("A clockmaker and her clumsy brass robot apprentice must fix the town clock before midnight", 3.0),
    ):
        board = OfflinePlanner().plan(idea, minutes).value
        described = [s for s in board.shots() if s.description]
        print(f"{idea[:30]}: {len(described)} of {len(board.shots())} shots described")
        for s in board.shots()[:6]:
            print(f"  {s.prompt[:60]!r} -> {s.description!r}")
        assert len(described) >= len(board.shots()) // 2
        for s in described:
            words = s.description.rstrip(".").split()
            assert 3 <= len(words) <= 12 and s.description.endswith(".")
            assert not s.description.lower().startswith(("medium shot", "wide shot", "close-up", "establishing"))
            assert all(w.strip(",").lower() in s.prompt.lower() for w in words)  # the prompt's own words
            assert fit_gap(0.0, s.duration, s.speech(), len(words) / WORDS_PER_SECOND)[0] is not None
        on = board.model_copy(update={"film": board.film.model_copy(update={"audio_description": True})})
        assert on.description_warnings() == []  # the plan's descriptions fit their gaps


def test_a_shortened_description_ends_where_a_phrase_ends():
    """Shortened to fit its gap, a description keeps whole clauses of its prompt or stops before a phrase ("in soft
    morning light"), never inside one ("Ada's home in soft.")."""
    from agents.offline.planner import _BOUNDARY, _SHOT_LEAD

    checked = 0
    for idea in (
        "Ada, a young inventor, builds a kite to find her missing father over the sea",
        "An old lighthouse keeper befriends a lonely whale during a storm",
        "Two rival bakers in a tiny mountain village discover a recipe that makes people remember their dreams",
        "A retired astronaut teaches her grandson to read the stars from a rooftop garden",
    ):
        board = OfflinePlanner().plan(idea, 2.0).value
        for s in board.shots():
            if not s.description:
                continue
            said = [w.strip(",.").lower() for w in s.description.split()]
            source = _SHOT_LEAD.sub("", s.prompt).split()
            n = len(said)
            assert [w.strip(",.").lower() for w in source[:n]] == said, (s.prompt, s.description)
            whole = n == len(source) or source[n - 1].endswith(",")
            assert whole or source[n].lower() in _BOUNDARY, (s.prompt, s.description)
            checked += 1
    print(f"{checked} descriptions end where a clause or a phrase ends")
    assert checked > 20
