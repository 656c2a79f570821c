"""extract_json: linear in the answer's length, with a size cap (issue 14: 105 s on a 400 KB brace-heavy answer)."""

from __future__ import annotations

import json

import pytest

from agents.json_answer import MAX_JSON_ATTEMPTS, extract_json, scan_json

BOUND = 2 * MAX_JSON_ATTEMPTS + 1  # characters read or counted per character of answer, at most


def nested_garbage(depth: int, width: int) -> str:
    """`{"k":1,...,"k":{"k":1,...` `depth` levels deep and never valid: every `{` starts an attempt that reads to the end."""
    level = "{" + '"k":1,' * width + '"k":'
    return level * depth + "x" + "}" * depth


def test_nested_garbage_is_read_a_bounded_number_of_times():
    text = nested_garbage(depth=300, width=20)
    scan = scan_json(text)
    assert scan.value is None and scan.problem.startswith("the answer is not valid JSON")
    # Trying every `{` would read the text ~depth = 300 times; the scan reads it at most BOUND times.
    assert scan.work <= BOUND * len(text)


def test_five_megabytes_of_braces_stay_linear():
    text = nested_garbage(depth=400, width=2000)  # ~5 MB
    assert len(text) > 4_800_000
    with pytest.raises(ValueError, match="over the cap of 1,000,000"):
        extract_json(text)  # the default cap refuses it before parsing
    scan = scan_json(text)
    assert scan.value is None and scan.work <= BOUND * len(text)


@pytest.mark.parametrize(
    "text", ["{x" * 200_000, "{" * 400_000, '{"}' * 200_000, "{}}" * 100_000 + "{", '{"a": "{' * 50_000]
)
def test_brace_heavy_answers_cost_linear_work(text):
    scan = scan_json(text)
    assert scan.work <= BOUND * len(text) + 1


def test_the_object_after_prose_braces_is_still_found():
    text = "Sure {thinking} {more {nested} thoughts} " * 30 + json.dumps({"verdict": "fine", "score": 7})
    assert extract_json(text)["score"] == 7


def test_a_cut_answer_is_reported_not_an_inner_object():
    with pytest.raises(ValueError, match="incomplete"):
        extract_json('{"verdict": "fine", "notes": {"a": 1}, "tags": ["x"')


def test_too_deep_is_one_clear_line():
    with pytest.raises(ValueError, match="nested too deeply"):
        extract_json('{"a":' * 5000 + "1" + "}" * 5000)


def test_the_cap_is_a_setting():
    answer = json.dumps({"notes": "x" * 5000})
    with pytest.raises(ValueError, match="5,013 characters, over the cap of 2,000"):
        extract_json(answer, max_chars=2000)
    assert extract_json(answer, max_chars=10_000)["notes"] == "x" * 5000
