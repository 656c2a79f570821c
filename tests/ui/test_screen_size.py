"""The web app stays readable: no function in app/ui is over 120 lines (a screen is a class of handlers and a
layout, not one closure), and no screen imports another (what two screens share lives in app/ui, outside screens/)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

from tests.ui.test_ui_imports import ROOT, imported

UI = ROOT / "app" / "ui"
LIMIT = 120


def functions(root: Path):
    """(file, name, lines) of every function and method under `root`, nested ones too."""
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield (
                    path.relative_to(root.parent.parent),
                    node.name,
                    (node.end_lineno or node.lineno) - node.lineno + 1,
                )


def test_no_function_in_app_ui_is_over_120_lines():
    found = list(functions(UI))
    assert len(found) > 200  # the walk saw the screens' handlers, not an empty folder
    long = [f"{path}:{name} ({n} lines)" for path, name, n in found if n > LIMIT]
    assert not long, long


def screen_packages() -> list[str]:
    """The names of the screen packages under app/ui/screens."""
    return sorted(p.name for p in (UI / "screens").iterdir() if (p / "__init__.py").is_file())


def test_no_screen_imports_another():
    screens = screen_packages()
    assert "storyboard" in screens
    for name in screens:
        others = {f"app.ui.screens.{o}" for o in screens if o != name}
        for path in (UI / "screens" / name).rglob("*.py"):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            crossing = {m for m in imported(module) if any(m == o or m.startswith(o + ".") for o in others)}
            assert not crossing, f"{path.relative_to(UI)} imports {sorted(crossing)}"


def test_the_import_contract_names_every_screen():
    """import-linter's independence contract (pyproject.toml, `make lint`) lists every screen package, so a new screen
    is held apart from the others there too."""
    screens = {f"app.ui.screens.{name}" for name in screen_packages()}
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    independent = [set(c["modules"]) for c in contracts if c["type"] == "independence"]
    assert screens in independent, (sorted(screens), independent)
