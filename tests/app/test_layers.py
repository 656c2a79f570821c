"""The app layer's services stand side by side (docs/DESIGN.md, Layers): read from the source with `ast`.

Services are the modules whose class the Studio wires. Each may use the services below it through their
methods only (`self.clips.path(...)`, never `self.rendering.film.clip_path(...)`), may import from a sibling
service module only that module's service class, and the whole stack, the Studio included, is at most 4 floors.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import app

APP = Path(app.__file__).parent
MAX_FLOORS = 4


def _modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text()) for p in APP.glob("*.py") if p.stem != "__init__"}


def _services(modules: dict[str, ast.Module]) -> dict[str, str]:
    """module -> its service class: the classes `Studio.__init__` constructs (`self._x = Class(self.ctx, ...)`)."""
    studio = next(n for n in modules["studio"].body if isinstance(n, ast.ClassDef) and n.name == "Studio")
    init = next(n for n in studio.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    wired = {
        call.func.id
        for call in ast.walk(init)
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and any(isinstance(a, ast.Attribute) and a.attr == "ctx" for a in call.args[:1])
    }
    out = {"studio": "Studio"}
    for name, tree in modules.items():
        for node in tree.body:
            if isinstance(node, ast.ClassDef) and node.name in wired:
                out[name] = node.name
    return out


def _imports(tree: ast.Module) -> list[tuple[str, list[str]]]:
    """(app module, names) for every `from app.x import ...` anywhere in the module (lazy imports included)."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("app."):
            parts = node.module.split(".")
            if len(parts) == 2:
                out.append((parts[1], [a.name for a in node.names]))
    return out


def graph() -> tuple[dict[str, set[str]], dict[str, str], dict[str, ast.Module]]:
    modules = _modules()
    services = _services(modules)
    edges = {s: {m for m, _ in _imports(modules[s]) if m in services and m != s} for s in services}
    return edges, services, modules


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
    edges, services, _ = graph()
    # the reader finds what the Studio wires: a broken reader would pass everything below
    assert {"projects", "clips", "rendering", "watching", "takes", "keyframes", "consistency"} <= set(services)
    assert "clips" in edges["takes"] and "watching" in edges["takes"]


def test_services_stand_on_at_most_four_floors():
    edges, _, _ = graph()
    f = floors(edges)
    assert max(f.values()) <= MAX_FLOORS, {m: n for m, n in sorted(f.items(), key=lambda kv: -kv[1])}
    # Projects and Clips are the ground floor: they use no other service
    assert edges["projects"] == set() and edges["clips"] == set()


def test_no_service_imports_a_sibling_for_a_helper():
    edges, services, modules = graph()
    bad = []
    for name, tree in modules.items():
        if name not in services or name == "studio":  # the facade re-exports the services' result types
            continue
        for module, names in _imports(tree):
            if module in services and module != name:
                extra = set(names) - {services[module]}
                if extra:
                    bad.append(f"app/{name}.py imports {sorted(extra)} from app/{module}.py")
    assert not bad, bad


def test_no_service_reaches_through_a_sibling():
    edges, services, modules = graph()
    held = set(services)  # attribute names a service is held under: self.clips, self._clips, ...
    bad = {name: found for name in services if (found := reach_throughs(modules[name], held))}
    assert not bad, bad


def test_the_reach_through_check_can_fail():
    tree = ast.parse("class T:\n    def f(self):\n        return self.rendering.film.clip_path('x')\n")
    assert reach_throughs(tree, {"rendering"}) == ["line 3: self.rendering.film.clip_path"]
    assert reach_throughs(ast.parse("self.clips.path('x')"), {"clips"}) == []
