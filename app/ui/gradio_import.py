"""Two steps of Gradio's import that CHIEF's processes skip, set up by `lighten()` before gradio is imported:

- **Type stubs.** Gradio writes `.pyi` stubs next to its own component sources each time a component class is
  defined (`gradio/component_meta.py` `create_or_modify_pyi`, a help for the editors of Gradio's components): it
  parses every component's source with `ast` at every import of gradio (1.5 s of CPU here, a third of `chief serve`'s
  start) and writes into the installed package when a stub differs. CHIEF never needs those stubs, and never writes
  into its installation: that step does nothing in this process.
- **Event docstrings.** Each component class renders the docstring of each of its events with jinja
  (`gradio/events.py` `EventListener.set_doc`: `Template(doc).render(component=name)`), compiling the same 36
  docstrings into Python code again for each of the 63 classes (216 compiles). `Template` there compiles each
  docstring once and keeps it; rendering is unchanged (a compiled template renders any component's name).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable
from functools import lru_cache
from types import ModuleType

STUBS, WRITER = "gradio.component_meta", "create_or_modify_pyi"
EVENTS, TEMPLATE = "gradio.events", "Template"


def _no_stubs(*_args, **_kwargs) -> None:
    return None


@lru_cache(maxsize=512)
def _template(source: str):
    """jinja's Template for `source`, compiled once (Gradio calls it with the docstring alone)."""
    from jinja2 import Template

    return Template(source)


def _skip_stubs(module: ModuleType) -> None:
    setattr(module, WRITER, _no_stubs)  # read by ComponentMeta.__new__ when each component class is made


def _compile_docs_once(module: ModuleType) -> None:
    setattr(module, TEMPLATE, _template)  # read by EventListener.set_doc


PATCHES: dict[str, Callable[[ModuleType], None]] = {STUBS: _skip_stubs, EVENTS: _compile_docs_once}


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader, patch: Callable[[ModuleType], None]) -> None:
        self.inner, self.patch = inner, patch

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        self.patch(module)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        patch = PATCHES.get(fullname)
        if patch is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader, patch)
        return spec


def lighten() -> None:
    """From now on in this process, gradio is imported without those two steps (a no-op once gradio is imported:
    its components are made by then)."""
    if not any(m in sys.modules for m in PATCHES) and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
