"""Hand-written storyboard files (YAML or JSON): load and validate before anything is written."""

from __future__ import annotations

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


def load_storyboard(path: Path, max_shots: int = Limits.model_validate({}).max_shots) -> Storyboard:
    """The storyboard in a YAML or JSON file, refused in one line when unreadable, invalid, or bigger than a
    storyboard of `max_shots` shots can be (counted while parsing; the caps themselves are the caller's check)."""
    path = Path(path)
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
    try:
        return Storyboard.model_validate(data)
    except ValidationError as e:
        raise StoryboardFileError(f"{path}: {first_error(e)}") from None


def dump_storyboard(board: Storyboard) -> str:
    import yaml

    return yaml.safe_dump(board.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
