"""Every prompt as a Jinja2 template file (`*.j2`) and the persona library (`personas/*.yaml`).

Read with importlib.resources and rendered with StrictUndefined, so a missing variable is an error.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources


@lru_cache(maxsize=1)
def _env():
    import jinja2

    def load(name: str) -> str:
        return resources.files(__name__).joinpath(name).read_text(encoding="utf-8")

    return jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )


def render(name: str, **variables: object) -> str:
    """Render template `name` (e.g. "critic_system.j2"); a missing variable raises jinja2.UndefinedError."""
    return _env().get_template(name).render(**variables).strip()


def persona_files() -> list:
    """The builtin persona YAML files (importlib.resources Traversables), sorted by name."""
    folder = resources.files(__name__).joinpath("personas")
    return sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)
