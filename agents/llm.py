"""The openai SDK wrapper every LLM role uses: structured outputs with fallbacks, one repair, retries, usage.

Works with any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio, llama.cpp).
Structured output is asked for in the strongest form the server accepts (json_schema strict → json_object
→ plain text with JSON extraction), remembered per endpoint and model; the answer streams in (progress,
stall detection, cancel), is validated with pydantic, repaired once, or an error names the role, the model,
the endpoint, the server's own reason and what to change. The API key never appears in a repr, a log line,
an error or the endpoint memory file. See docs/llm-servers.md for what each server supports.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

from agents.base import AgentError, AnswerTooLong, Cancelled, RequestTooLarge
from agents.content import estimate_tokens, image_part, subsample, video_part
from agents.exchange import Answer, Call, Exchange, FormatRefused
from agents.json_answer import extract_json, scan_json, strict_json_schema, validation_problems
from agents.llm_config import LLMConfig, env_name
from agents.streaming import Cancel, Deadline, Progress
from prompts import render
from storage.run import RunContext
from storage.schema import Usage

__all__ = [
    "AnswerTooLong",
    "Cancelled",
    "Deadline",
    "LLMClient",
    "LLMConfig",
    "Progress",
    "RequestTooLarge",
    "estimate_tokens",
    "extract_json",
    "image_part",
    "scan_json",
    "strict_json_schema",
    "subsample",
    "validation_problems",
    "video_part",
]

log = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
Mode = Literal["json_schema", "json_object", "text"]
MODES: tuple[Mode, ...] = ("json_schema", "json_object", "text")


class LLMClient:
    """One OpenAI-compatible endpoint, shared by all roles: structured answers over an Exchange."""

    def __init__(
        self,
        config: LLMConfig,
        *,
        sleep: Callable[[float], None] | None = None,
        start: Callable[[], object] | None = None,
    ):
        """`start`: called once before the first request (a local model server CHIEF starts on first use)."""
        self.config = config
        self.exchange = Exchange(config, sleep=sleep, start=start)
        self.endpoint, self.memory, self.limit = self.exchange.endpoint, self.exchange.memory, self.exchange.limit

    def __repr__(self) -> str:
        return f"LLMClient({self.config.describe()})"

    @property
    def sdk(self):
        return self.exchange.sdk

    # -- limits callers size their requests by

    def max_tokens_for(self, role: str, model: str | None = None) -> int:
        """The answer budget of `role`; for `model`, never over the output cap its server revealed (remembered)."""
        own = self.config.max_tokens_for(role)
        cap = self.memory.get(model).get("output_cap") if model else None
        return min(own, cap) if isinstance(cap, int) and cap > 0 else own

    def estimate_tokens(self, messages: list[dict]) -> int:
        """Prompt tokens of `messages`, roughly, with images at the configured detail's cost."""
        return self.exchange.estimate_tokens(messages)

    def context_tokens(self, model: str) -> tuple[int, str]:
        """(tokens, where that figure comes from): the context_tokens setting, or less if the server says so."""
        return self.exchange.context_tokens(model)

    # -- structured output

    def deadline(self, ctx: RunContext | None = None) -> Deadline:
        """One action's time (a plan, a critic watching, a proposal): pass it to each of the action's calls.
        The `action_timeout` setting, or less when the run's own deadline (`ctx.deadline`) comes first."""
        seconds, left = self.config.action_timeout, ctx.remaining() if ctx is not None else None
        if left is not None:
            seconds = left if seconds is None else min(seconds, left)
        return Deadline(seconds)

    def structured(
        self,
        role: str,
        model: str,
        messages: list[dict],
        result_type: type[T],
        *,
        check: Callable[[T], list[str]] | None = None,
        on_length: Literal["repair", "raise"] = "repair",
        length_hint: str = "ask for less (a smaller chunk)",
        max_tokens: int | None = None,
        on_progress: Callable[[Progress], None] | None = None,
        cancel: Cancel = None,
        deadline: Deadline | None = None,
        schema: dict | None = None,
    ) -> tuple[T, Usage]:
        """Ask `model` for a `result_type`; validate (and `check` for semantic problems), repair once, or raise.

        `schema`: the JSON schema to ask for, when it says more than `result_type`'s own (enums of this request's
        ids, for a server's constrained decoding); the answer is still validated as `result_type`.

        on_length="raise": an answer cut off at the output limit raises AnswerTooLong instead of a repair (for
        callers that can ask for less; `length_hint` is what its line says to do). `max_tokens` overrides the role's budget. `cancel` (a CancelToken)
        closes the connection. `deadline` bounds this call; pass one Deadline to several calls to bound
        an action. Raises AgentError (AnswerTooLong, RequestTooLarge) or Cancelled with one line.
        """
        schema = schema or strict_json_schema(result_type)
        name = re.sub(r"[^A-Za-z0-9_-]", "_", result_type.__name__)[:64]
        cap = self.memory.get(model).get("output_cap")
        cap = cap if isinstance(cap, int) and cap > 0 else self.config.max_output_tokens
        budget = min(max_tokens or self.max_tokens_for(role), self.config.max_output_tokens, cap)
        call = Call(role, model, budget, deadline or Deadline(self.config.action_timeout), cancel, on_progress)
        if cap < self.config.max_output_tokens:
            call.server_cap = cap  # the cap the server revealed earlier
        try:
            mode, answer = self._ask(call, messages, schema, name)
            value, problem = self._parse(answer, result_type, check)
            if problem is None:
                return value, sum(call.usage, Usage())
            self._server_cap(call, answer)  # the repair (or the caller's smaller request) is sized by it
            self._too_long(call, answer, problem, on_length, length_hint)
            log.info("%s (%s): repairing: %s", role, model, problem[:200])
            repair = messages + self._repair_messages(answer, problem, schema if mode != "json_schema" else None)
            answer = self._ask_mode(call, repair, schema, name, mode)
            value, problem = self._parse(answer, result_type, check)
            if problem is None:
                return value, sum(call.usage, Usage())
            self._too_long(call, answer, problem, on_length, length_hint)
            if answer.finish_reason == "length":
                what, hint = self._cut_line(call, answer, problem[:500], "ask for less")
                raise AgentError(
                    self.exchange.line(call, f"no valid {result_type.__name__} after one repair: {what}", hint)
                )
            raise AgentError(
                self.exchange.line(call, f"no valid {result_type.__name__} after one repair: {problem[:500]}")
            )
        except (AgentError, Cancelled) as e:
            e.usage = sum(call.usage, Usage())  # what the failed call cost (requests sent: usage.calls)
            raise
        except Exception as e:  # anything unexpected: still one clear line
            err = AgentError(self.exchange.line(call, f"{type(e).__name__}: {e}"))
            err.usage = sum(call.usage, Usage())
            raise err from None

    def _server_cap(self, call: Call, answer: Answer) -> bool:
        """An answer the server cut off below the max_tokens it was sent: its own output cap, now known. Remembered
        for the model (budgets and plans are sized by it from now on, `max_tokens_for`); True when newly learned."""
        n = answer.completion_tokens
        if answer.finish_reason != "length" or not (0 < n < answer.asked) or n >= call.max_tokens:
            return False
        log.warning(
            "%s (%s): the server cut the answer off at %d output tokens, below the %d asked; using %d from now on "
            "(set %s=%d)",
            call.role,
            call.model,
            n,
            answer.asked,
            n,
            env_name("max_output_tokens"),
            n,
        )
        self.memory.remember(call.model, output_cap=n)
        call.max_tokens = call.server_cap = n
        self.exchange.progress(call, 0, time.monotonic(), note=f"the server caps answers at {n} tokens")
        return True

    def _too_long(self, call: Call, answer: Answer, problem: str, on_length: str, hint: str) -> None:
        """Raise AnswerTooLong for a cut-off answer when the caller asked to (it will ask for less)."""
        if answer.finish_reason == "length" and on_length == "raise":
            raise AnswerTooLong(self.exchange.line(call, *self._cut_line(call, answer, problem, hint)))

    def _cut_line(self, call: Call, answer: Answer, problem: str, hint: str) -> tuple[str, str]:
        """What a cut-off answer says: the real count, and the setting to change."""
        self._server_cap(call, answer)
        n = answer.completion_tokens or answer.asked or call.max_tokens
        if call.server_cap:  # the server's own cap, not ours: name the setting that should say so
            return (
                f"the answer was cut off at {n} output tokens, the server's own cap (below the "
                f"{self.config.max_output_tokens} of {env_name('max_output_tokens')}) ({problem})",
                f"{hint}, or set {env_name('max_output_tokens')}={call.server_cap} (or raise the server's limit)",
            )
        kind = call.role.split()[0]
        setting = (
            f"{kind}_max_tokens"
            if kind in ("planner", "refiner", "critic") and call.max_tokens < self.config.max_output_tokens
            else "max_output_tokens"
        )
        return (
            f"the answer was cut off at {n} output tokens ({problem})",
            f"{hint}, or raise {env_name(setting)} (now {call.max_tokens})",
        )

    def _ask(self, call: Call, messages: list[dict], schema: dict, name: str) -> tuple[Mode, Answer]:
        """Try the strongest response_format this endpoint accepts for the model, remembering refusals."""
        forced = self.config.response_format
        first = forced if forced != "auto" else self.memory.get(call.model).get("response_format", "json_schema")
        modes = MODES[MODES.index(first) :] if first in MODES else MODES
        for mode in modes if forced == "auto" else (forced,):
            try:
                return mode, self._ask_mode(call, messages, schema, name, mode)
            except FormatRefused as e:
                if forced != "auto":
                    raise AgentError(
                        self.exchange.line(
                            call,
                            f"the server refuses response_format {mode}: {e}",
                            f"set {env_name('response_format')}=auto",
                        )
                    ) from None
                following = MODES[MODES.index(mode) + 1]
                log.warning(
                    "%s (%s): the server refuses response_format %s (%s); using %s from now on",
                    call.role,
                    call.model,
                    mode,
                    str(e)[:120],
                    following,
                )
                self.memory.remember(call.model, response_format=following)
                self.exchange.progress(call, 0, time.monotonic(), note=f"server refuses {mode}: using {following}")
        raise AssertionError("unreachable: text mode sends no response_format")

    def _ask_mode(self, call: Call, messages: list[dict], schema: dict, name: str, mode: Mode) -> Answer:
        if mode != "json_schema":
            messages = messages + [
                {
                    "role": "system",
                    "content": render("json_instructions.j2", schema=json.dumps(schema, separators=(",", ":"))),
                }
            ]
        fmt = {
            "json_schema": {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}},
            "json_object": {"type": "json_object", "schema": schema},
        }.get(mode)  # llama-cpp-python: a grammar from it
        return self.exchange.request(call, messages, fmt)

    # -- parsing and repair

    def _parse(
        self, answer: Answer, result_type: type[T], check: Callable[[T], list[str]] | None
    ) -> tuple[Any, str | None]:
        """(value, None) or (None, what was wrong)."""
        if answer.refusal:
            return None, f"the model refused: {answer.refusal[:300]}"
        if answer.finish_reason == "content_filter":
            return None, "the answer was blocked by the server's content filter"
        if not answer.content:
            return None, f"the answer was empty (finish_reason {answer.finish_reason})"
        cut = "the answer was cut off at the token limit; " if answer.finish_reason == "length" else ""
        try:
            data = extract_json(answer.content, max_chars=self.config.max_answer_chars)
        except ValueError as e:
            return None, cut + str(e)
        try:
            value = result_type.model_validate(data)
        except ValidationError as e:
            return None, cut + "the JSON does not match the schema: " + "; ".join(validation_problems(e))
        if check is not None:
            problems = check(value)
            if problems:
                return None, "; ".join(problems)
        return value, None

    def _repair_messages(self, answer: Answer, problem: str, schema: dict | None) -> list[dict]:
        previous = answer.content or answer.refusal or ""
        if len(previous) > 6000:
            previous = previous[:6000] + " …(cut)"
        text = render(
            "repair.j2",
            problem=problem,
            truncated=answer.finish_reason == "length",
            schema=json.dumps(schema, separators=(",", ":")) if schema else "",
        )
        return [{"role": "assistant", "content": previous or "(no answer)"}, {"role": "user", "content": text}]
