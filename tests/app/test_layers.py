"""The services stand side by side (docs/DESIGN.md, Layers): read from the source with `ast`.

Every module of `app/services/` is a service module, and the Studio (`app/studio.py`) stands above them. A service may
use the services below it through their methods only (`self.clips.path(...)`, never
`self.rendering.film.clip_path(...)`), may import from a sibling service module only its service class (a class built
with the context, `Class(ctx, ...)`), and the services stand on at most 4 floors.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import app

APP = Path(app.__file__).parent
SERVICES = APP / "services"
MAX_FLOORS = 4


def _modules() -> dict[str, ast.Module]:
    """Every module of the services package, and the Studio."""
    out = {p.stem: ast.parse(p.read_text()) for p in SERVICES.glob("*.py") if p.stem != "__init__"}
    return out | {"studio": ast.parse((APP / "studio.py").read_text())}


def _service_classes(tree: ast.Module) -> set[str]:
    """The classes a module defines whose `__init__` takes the context first: its service classes."""
    out = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            if init is not None and len(init.args.args) > 1 and init.args.args[1].arg == "ctx":
                out.add(node.name)
    return out


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(services module, names) for every `from app.services.x import ...` anywhere in the module (lazy ones too)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app.services."):
            out.append((node.module.split(".")[2], [a.name for a in node.names]))
    return out


def graph() -> tuple[dict[str, set[str]], dict[str, set[str]], dict[str, ast.Module]]:
    """(module -> the service modules it imports, module -> its service classes, module -> its tree)."""
    modules = _modules()
    classes = {name: _service_classes(tree) for name, tree in modules.items()}
    edges = {name: {m for m, _ in _imports(tree) if m != name} for name, tree in modules.items()}
    return edges, classes, modules


def floors(edges: dict[str, set[str]]) -> dict[str, int]:
    @functools.cache
    def floor(m: str) -> int:
        return 1 + max((floor(d) for d in edges[m]), default=0)

    return {m: floor(m) for m in edges}


def reach_throughs(tree: ast.Module, held: set[str]) -> list[str]:
    """`self.<service>.<attribute>.<anything>` chains: a service used through one of its parts."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            inner = node.value
            if (
                isinstance(inner.value, ast.Attribute)
                and isinstance(inner.value.value, ast.Name)
                and inner.value.value.id == "self"
                and inner.value.attr.lstrip("_") in held
            ):
                found.append(f"line {node.lineno}: self.{inner.value.attr}.{inner.attr}.{node.attr}")
    return found


def test_the_wiring_is_read():
    edges, classes, _ = graph()
    # the reader finds the services and their imports: a broken reader would pass everything below
    assert {"projects", "clips", "rendering", "watching", "takes", "keyframes", "consistency", "thumbnails"} <= set(
        edges
    )
    assert "clips" in edges["takes"] and "watching" in edges["takes"] and "rendering" in edges["studio"]
    assert classes["clips"] == {"Clips"} and classes["thumbnails"] == {"ClipMedia"}


def test_services_stand_on_at_most_four_floors():
    edges, _, _ = graph()
    f = floors({m: d for m, d in edges.items() if m != "studio"})
    assert max(f.values()) <= MAX_FLOORS, {m: n for m, n in sorted(f.items(), key=lambda kv: -kv[1])}
    assert edges["projects"] == set()  # the ground floor: the versions use no other service


def test_the_floor_count_can_fail():
    chain = {"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {"e"}, "e": set()}
    assert max(floors(chain).values()) == 5


def test_no_service_imports_a_sibling_for_a_helper():
    _, classes, modules = graph()
    bad = []
    for name, tree in modules.items():
        if name == "studio":  # the facade re-exports the services' result types
            continue
        for module, names in _imports(tree):
            if module != name and (extra := set(names) - classes[module]):
                bad.append(f"app/services/{name}.py imports {sorted(extra)} from app/services/{module}.py")
    assert not bad, bad


def test_no_service_reaches_through_a_sibling():
    _, _, modules = graph()
    held = set(modules)  # attribute names a service is held under: self.clips, self._clips, ...
    bad = {name: found for name, tree in modules.items() if (found := reach_throughs(tree, held))}
    assert not bad, bad


def test_the_reach_through_check_can_fail():
    tree = ast.parse("class T:\n    def f(self):\n        return self.rendering.film.clip_path('x')\n")
    assert reach_throughs(tree, {"rendering"}) == ["line 3: self.rendering.film.clip_path"]
    assert reach_throughs(ast.parse("self.clips.path('x')"), {"clips"}) == []
