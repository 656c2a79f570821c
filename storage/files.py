"""Hand-written storyboard files (YAML or JSON): load and validate before anything is written."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ValidationError

from storage.schema import Storyboard, first_error


class StoryboardFileError(ValueError):
    """A storyboard file is unreadable or invalid; the message names the file and the first bad field."""


def load_storyboard(path: Path) -> Storyboard:
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, yaml.YAMLError) as e:
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
