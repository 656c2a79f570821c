"""Hand-written storyboard files (YAML or JSON): load and validate before anything is written."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from storage.parsing import ParseError, parse_json, parse_yaml
from storage.schema import Storyboard, first_error

MAX_STORYBOARD_BYTES = 4 * 2**20  # 300 shots with every text field full is under 2 MB


class StoryboardFileError(ValueError):
    """A storyboard file is unreadable or invalid; the message names the file and the first bad field."""


def load_storyboard(path: Path) -> Storyboard:
    path = Path(path)
    try:
        if path.stat().st_size > MAX_STORYBOARD_BYTES:
            raise StoryboardFileError(
                f"{path}: too big for a storyboard ({path.stat().st_size} bytes > {MAX_STORYBOARD_BYTES})"
            )
        text = path.read_text(encoding="utf-8")
        parse = parse_json if path.suffix.lower() == ".json" else parse_yaml
        data = parse(text, f"{path}: cannot read storyboard")
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
