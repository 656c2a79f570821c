"""Hand-written storyboard files (YAML or JSON): load and validate before anything is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from storage.parsing import ParseError, TooManyNodes, parse_json, parse_yaml
from storage.schema import Limits, Storyboard, first_error

MAX_STORYBOARD_BYTES = 4 * 2**20  # 300 shots with every text field full is under 2 MB
# values (YAML nodes) per shot with every field and list full, and for the rest (bible, locations, scenes): a file
# with more cannot be within `max_shots`, so it is refused while it is parsed
NODES_PER_SHOT, NODES_BESIDE_SHOTS = 64, 20_000


class StoryboardFileError(ValueError):
    """A storyboard file is unreadable or invalid; the message names the file and the first bad field."""


def load_storyboard(
    path: Path, max_shots: int = Limits.model_validate({}).max_shots, limits: Limits | None = None
) -> Storyboard:
    """The storyboard in a YAML or JSON file, refused in one line when unreadable, invalid, or bigger than a
    storyboard of `max_shots` shots can be (counted while parsing). With `limits` (which then give `max_shots`),
    a file over a cap (shots, film minutes, shot seconds, lines in a shot, fps, frame size) is refused on the parsed
    values, before the storyboard is validated field by field."""
    path = Path(path)
    if limits is not None:
        max_shots = limits.max_shots
    try:
        if path.stat().st_size > MAX_STORYBOARD_BYTES:
            raise StoryboardFileError(
                f"{path}: too big for a storyboard ({path.stat().st_size} bytes > {MAX_STORYBOARD_BYTES})"
            )
        text = path.read_text(encoding="utf-8")
        parse = parse_json if path.suffix.lower() == ".json" else parse_yaml
        data = parse(text, f"{path}: cannot read storyboard", max_nodes=max_shots * NODES_PER_SHOT + NODES_BESIDE_SHOTS)
    except TooManyNodes as e:
        raise StoryboardFileError(
            f"{e}: more than a storyboard of at most {max_shots} shots holds (the max_shots cap; raise the setting "
            "to load more)"
        ) from None
    except ParseError as e:
        raise StoryboardFileError(str(e)) from None
    except (OSError, UnicodeDecodeError) as e:
        raise StoryboardFileError(f"{path}: cannot read storyboard ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise StoryboardFileError(f"{path}: a storyboard must be a mapping with title and scenes")
    found = limits.problem(_Outline.of(data)) if limits is not None else None  # type: ignore[arg-type]
    if found:
        cap, what = found
        reason = (Limits.model_fields[cap].description or "").rstrip(".")
        raise StoryboardFileError(
            f"{path}: {what} is over the limit CHIEF_{cap.upper()}={getattr(limits, cap):g} ({reason}): change the "
            "storyboard, or raise the setting"
        )
    try:
        return Storyboard.model_validate(data)
    except ValidationError as e:
        raise StoryboardFileError(f"{path}: {first_error(e)}") from None


@dataclass
class _ShotOutline:
    shot_id: str
    duration: float
    dialogue: list


@dataclass
class _Outline:
    """What `Limits.problem` reads of a storyboard (shots, their lengths and lines, fps, frame size), taken from
    parsed values before validation: a file over a cap is refused without validating thousands of fields first.
    A value of the wrong type is left to validation (read here as its default)."""

    scenes: list[list[_ShotOutline]]
    fps: float | None
    width: float | None
    height: float | None

    @classmethod
    def of(cls, data: dict) -> _Outline:
        def number(value, default):
            return value if isinstance(value, (int, float)) and not isinstance(value, bool) else default

        def shot(i: int, s) -> _ShotOutline:
            s = s if isinstance(s, dict) else {}
            lines = s.get("dialogue")
            return _ShotOutline(
                str(s.get("shot_id", f"#{i + 1}")),
                number(s.get("duration"), 5.0),
                lines if isinstance(lines, list) else [],
            )

        scenes = (
            [sc.get("shots") for sc in data.get("scenes") or [] if isinstance(sc, dict)]
            if isinstance(data.get("scenes"), list)
            else []
        )
        return cls(
            [[shot(i, s) for i, s in enumerate(shots)] for shots in scenes if isinstance(shots, list)],
            number(data.get("fps"), None),
            number(data.get("width"), None),
            number(data.get("height"), None),
        )

    def shots(self) -> list[_ShotOutline]:
        return [s for shots in self.scenes for s in shots] or [_ShotOutline("", 0.0, [])]

    def duration(self) -> float:
        return sum(s.duration for s in self.shots())


def dump_storyboard(board: Storyboard) -> str:
    import yaml

    return yaml.safe_dump(board.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
