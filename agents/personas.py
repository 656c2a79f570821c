"""The persona library: builtin personas (prompts/personas/*.yaml) and YAML round-trips for custom ones."""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from prompts import persona_files
from storage.schema import MAX_PERSONA_BYTES, Persona  # the cap lives with the type: archives check it too


def _parse(text: str, stem: str, source: str) -> Persona:
    from storage.parsing import parse_yaml

    data = parse_yaml(text, f"persona file {source}", max_bytes=MAX_PERSONA_BYTES)  # a ParseError is a ValueError
    if not isinstance(data, dict):
        raise ValueError(f"persona file {source}: expected a YAML mapping")
    data.setdefault("id", stem)
    if data["id"] != stem:
        raise ValueError(f"persona file {source}: id {data['id']!r} must match the file name {stem!r}")
    try:
        return Persona.model_validate(data)
    except ValidationError as e:  # one line that names the file and the fields
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or '(root)'}: {err['msg']}" for err in e.errors())
        raise ValueError(f"persona file {source}: {problems}") from None


def builtin_personas() -> dict[str, Persona]:
    """All builtin personas by id, in file-name order."""
    out: dict[str, Persona] = {}
    for f in persona_files():
        stem = f.name.removesuffix(".yaml")
        out[stem] = _parse(f.read_text(encoding="utf-8"), stem, f"prompts/personas/{f.name}")
    return out


def load_persona_file(path: str | Path) -> Persona:
    """A persona from a YAML file; its id defaults to (and must match) the file stem."""
    p = Path(path)
    return _parse(p.read_text(encoding="utf-8"), p.stem, str(p))


def persona_to_yaml(persona: Persona) -> str:
    """YAML text that `load_persona_file` reads back to an equal persona (save it as `<id>.yaml`)."""
    import yaml

    data = persona.model_dump(mode="json", exclude_defaults=False)
    if data.get("calibration") is None:
        data.pop("calibration", None)
    if not data.get("evidence"):
        data.pop("evidence", None)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
