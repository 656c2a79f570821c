"""The JSON side of structured output: the strict schema asked for, and the object found in the answer.

`extract_json` is linear in the answer's length: a decode attempt starts only where an object can start
(`{` then `"` or `}`), and after MAX_JSON_ATTEMPTS failed attempts the answer is declared not JSON (each
failed attempt may read to the end, and Python's JSONDecodeError counts the lines before the error).
An answer over the size cap is refused before any parsing.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

MAX_ANSWER_CHARS = 1_000_000  # the default cap (LLMConfig.max_answer_chars)
MAX_JSON_ATTEMPTS = 16  # failed decode attempts before giving up on an answer


class Closed(BaseModel):
    """The base of every answer model: a closed object (no extra keys), as strict structured outputs require."""

    model_config = ConfigDict(extra="forbid")


_DROP_KEYS = {
    "default",
    "title",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "uniqueItems",
    "examples",
}


SMALL_RANGE = 10  # a bounded number spanning at most this is sent as an enum


def _small_range(node: dict) -> list | None:
    """A number or integer node bounded on both sides by at most SMALL_RANGE: its values, whole (integers) or by
    halves (numbers); None otherwise."""
    lo, hi, kind = node.get("minimum"), node.get("maximum"), node.get("type")
    if kind not in ("integer", "number") or not isinstance(lo, int | float) or not isinstance(hi, int | float):
        return None
    if not 0 <= hi - lo <= SMALL_RANGE or lo != int(lo):
        return None
    if kind == "integer":
        return list(range(int(lo), int(hi) + 1))
    return [int(lo + k / 2) if k % 2 == 0 else lo + k / 2 for k in range(int((hi - lo) * 2) + 1)]


def strict_json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's JSON schema in OpenAI strict form: every object closed and every property required.

    Validation keywords (lengths, ranges, patterns) are dropped — pydantic checks them afterwards and the
    repair request quotes what failed — except a small numeric range (a score 0..10, an urgency 1..5): it becomes an
    `enum` of its whole numbers (half points for a float), which a server's constrained decoding enforces where it
    ignores ranges (llama.cpp's grammar: a weak model answered scores of -1 twice and its critique failed). Open
    dicts cannot be strict: send a DTO with named fields instead.
    """
    schema = copy.deepcopy(model.model_json_schema())

    def fix(node: Any, path: str, names: bool = False) -> Any:
        if isinstance(node, dict) and names:  # a map of property / definition names: keep every key
            return {k: fix(v, f"{path}.{k}") for k, v in node.items()}
        if isinstance(node, dict):
            if (steps := _small_range(node)) is not None:
                node = {**node, "enum": steps}
            node = {k: v for k, v in node.items() if k not in _DROP_KEYS}
            if node.get("type") == "object" or "properties" in node:
                extra = node.get("additionalProperties")
                if isinstance(extra, dict) or ("properties" not in node and extra is not False):
                    raise ValueError(
                        f"{model.__name__}: {path or 'root'} is an open mapping; strict schemas need named fields"
                    )
                node["additionalProperties"] = False
                node["required"] = list(node.get("properties", {}))
            return {k: fix(v, path, names=k in ("properties", "$defs")) for k, v in node.items()}
        if isinstance(node, list):
            return [fix(v, path) for v in node]
        return node

    return fix(schema, "")


_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.S)
_START = re.compile(r'\{\s*["}]')  # where a JSON object can start: a brace, then a key or the closing brace


@dataclass
class JsonScan:
    value: dict | None
    problem: str | None
    work: (
        int  # characters the decoder read or counted, over every attempt: at most (2 x MAX_JSON_ATTEMPTS + 1) x length
    )


def scan_json(text: str) -> JsonScan:
    """The first JSON object in `text` (inside ```json fences first, then anywhere), or what was wrong."""
    decoder = json.JSONDecoder()
    text = text.strip()
    work, incomplete, gave_up = 0, False, False
    for cand in [m.group(1) for m in _FENCE.finditer(text)] + [text]:
        failed = 0
        for start in _START.finditer(cand):
            pos = start.start()
            try:
                obj, end = decoder.raw_decode(cand, pos)
            except json.JSONDecodeError as e:
                work += (e.pos - pos) + e.pos  # read up to the error; the error counts the lines before it
                if e.pos >= len(cand) or e.msg.startswith("Unterminated string"):
                    incomplete = True  # it ran to the end: cut off, and an inner object would mislead
                    break
                failed += 1
                if failed >= MAX_JSON_ATTEMPTS:
                    gave_up = True
                    break
                continue
            except RecursionError:
                return JsonScan(None, "the JSON is nested too deeply", work)
            work += end - pos
            return JsonScan(obj, None, work)
    if incomplete:
        problem = "the JSON object is incomplete (the answer was probably cut off)"
    elif gave_up:
        problem = f"the answer is not valid JSON (no object among its first {MAX_JSON_ATTEMPTS} candidates)"
    else:
        problem = "the answer is not valid JSON" if "{" in text else "no JSON object found in the answer"
    return JsonScan(None, problem, work)


def extract_json(text: str, *, max_chars: int = MAX_ANSWER_CHARS) -> dict:
    """The first JSON object in `text`: strips ```json fences and prose around it. Raises ValueError."""
    if len(text) > max_chars:
        raise ValueError(f"the answer is {len(text):,} characters, over the cap of {max_chars:,} (max_answer_chars)")
    found = scan_json(text)
    if found.value is None:
        raise ValueError(found.problem)
    return found.value


def validation_problems(error: ValidationError, limit: int = 12) -> list[str]:
    """Short 'path: message' lines for a repair request."""
    out = []
    for e in error.errors()[:limit]:
        where = ".".join(str(p) for p in e["loc"]) or "(root)"
        out.append(f"{where}: {e['msg']}")
    if error.error_count() > limit:
        out.append(f"... and {error.error_count() - limit} more")
    return out
