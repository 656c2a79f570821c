"""The web app's shared helpers and the creator's path do not import each other (at the top or inside a function):
app.ui.common builds the status bar with app.ui.flow, so flow must not need common."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported(module: str) -> set[str]:
    """Every module `module` imports, anywhere in its file (`from app.ui import x` counts as app.ui.x)."""
    tree = ast.parse((ROOT / (module.replace(".", "/") + ".py")).read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
    return out


def test_common_and_flow_do_not_import_each_other():
    common, flow = imported("app.ui.common"), imported("app.ui.flow")
    assert not ("app.ui.flow" in common and "app.ui.common" in flow), (sorted(common), sorted(flow))
    assert "app.ui.common" not in flow
