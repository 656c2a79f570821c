"""Gradio writes type stubs (`.pyi`) next to its own component sources each time a component class is defined:
`gradio/component_meta.py` `create_or_modify_pyi`, a help for the editors of Gradio's components, which parses every
component's source with `ast` at every import of gradio (1.5 s of CPU here, a third of `chief serve`'s start) and
writes into the installed package when a stub differs. CHIEF never needs those stubs, and never writes into its
installation: `skip_stub_writing()`, called before gradio is imported, makes that step do nothing in this process.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType

MODULE = "gradio.component_meta"
WRITER = "create_or_modify_pyi"


def _no_stubs(*_args, **_kwargs) -> None:
    return None


class _Loader(importlib.abc.Loader):
    def __init__(self, inner: importlib.abc.Loader) -> None:
        self.inner = inner

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.inner.exec_module(module)
        setattr(module, WRITER, _no_stubs)  # read by ComponentMeta.__new__ when each component class is made


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname != MODULE:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _Loader(spec.loader)
        return spec


def skip_stub_writing() -> None:
    """From now on in this process, gradio's components are defined without their stubs being written (a no-op once
    gradio is imported: its components are made by then)."""
    if MODULE not in sys.modules and not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
