"""YAML and JSON from outside (storyboard files, archives, comment files, persona files), parsed with limits.

Every failure is a `ParseError` (a ValueError): one line that names the source. Refused, rather than
crashing or silently guessing: text over a size cap, nesting deeper than `MAX_DEPTH` (Python would hit
its recursion limit, and so would validation), a key given twice in one mapping (the YAML and JSON
parsers keep the last one without a word), YAML aliases (`*name`: a few lines can expand to
billions of nodes once the data is walked), and more than `max_nodes` values (mappings, lists and scalars):
YAML is refused while it is composed, at the first node over, so a 100,000-shot file stops after a few
thousand shots instead of costing seconds and hundreds of MB before a later check refuses it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.resolver import Resolver

MAX_DEPTH = 64  # a storyboard is 6 levels deep, an archive's project.json about 12
MAX_NODES = 1_000_000  # values in one document unless the caller says fewer (JSON: after json.loads, which is C)


class ParseError(ValueError):
    """Text that cannot be parsed or breaks a limit; one line naming where."""


class TooManyNodes(ParseError):
    """More values than the caller allows (`max_nodes`)."""


def parse_json(text: str | bytes, where: str, *, max_bytes: int | None = None, max_nodes: int = MAX_NODES) -> Any:
    """JSON with no key twice in an object, at most MAX_DEPTH levels of nesting and `max_nodes` values."""
    if max_bytes is not None and len(text) > max_bytes:
        raise ParseError(f"{where}: too big ({len(text)} bytes > {max_bytes})")
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except _DuplicateKey as e:
        raise ParseError(f"{where}: key {e.args[0]!r} appears twice in one object") from None
    except RecursionError:
        raise ParseError(f"{where}: nested more than {MAX_DEPTH} levels deep") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ParseError(f"{where}: not valid JSON ({str(e).splitlines()[0]})") from None
    _check_depth(data, where, max_nodes)
    return data


def parse_yaml(text: str, where: str, *, max_bytes: int | None = None, max_nodes: int = MAX_NODES) -> Any:
    """YAML (safe types only) with no key twice in a mapping, no aliases, at most MAX_DEPTH levels and
    `max_nodes` values (keys count: each is a node), refused while composing."""
    if max_bytes is not None and len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise ParseError(f"{where}: too big (more than {max_bytes} bytes)")
    loader = _Loader(text, max_nodes)
    try:
        return loader.get_single_data()
    except _TooMany as e:
        raise TooManyNodes(f"{where}: {_yaml_problem(e)}") from None
    except _Refused as e:
        raise ParseError(f"{where}: {_yaml_problem(e)}") from None
    except yaml.YAMLError as e:
        if "maximum nesting depth" in str(getattr(e, "problem", "")):  # libyaml's scanner looked ahead past ours
            mark = getattr(e, "problem_mark", None)
            at = f" at line {mark.line + 1}" if mark is not None else ""
            raise ParseError(f"{where}: nested more than {MAX_DEPTH} levels deep{at}") from None
        raise ParseError(f"{where}: not valid YAML ({_yaml_problem(e)})") from None
    finally:
        loader.dispose()


class _DuplicateKey(Exception):
    pass


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    out: dict = {}
    for k, v in pairs:
        if k in out:
            raise _DuplicateKey(k)
        out[k] = v
    return out


def _check_depth(data: Any, where: str, max_nodes: int = MAX_NODES) -> None:
    """Refuse nesting deeper than MAX_DEPTH and more than `max_nodes` values, keys included as YAML counts them
    (iteratively: the check itself never recurses)."""
    stack = [(data, 1)]
    nodes = 1
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        nodes += 2 * len(node) if isinstance(node, dict) else len(children)
        if nodes > max_nodes:
            raise TooManyNodes(f"{where}: more than {max_nodes:,} values")
        for child in children:
            if isinstance(child, (dict, list)):
                if depth + 1 > MAX_DEPTH:
                    raise ParseError(f"{where}: nested more than {MAX_DEPTH} levels deep")
                stack.append((child, depth + 1))


def _yaml_problem(e) -> str:
    mark = getattr(e, "problem_mark", None)
    what = getattr(e, "problem", None) or str(e).splitlines()[0]
    return f"{what} at line {mark.line + 1}" if mark is not None else what


class _Refused(ConstructorError):
    """YAML that parses but breaks one of our rules."""


class _TooMany(_Refused):
    pass


class _Rules(yaml.SafeLoader if TYPE_CHECKING else object):
    """Composing and constructing with our limits: nesting and nodes counted while composing, duplicate keys and
    aliases refused. Mixed into a loader whose events come from libyaml when it is there (`_Loader`)."""

    _depth: int
    _nodes: int
    _max_nodes: int

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise _Refused(None, None, "aliases (*name) are not allowed", self.peek_event().start_mark)
        self._nodes += 1
        if self._nodes > self._max_nodes:
            raise _TooMany(None, None, f"more than {self._max_nodes:,} values", self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(None, None, f"nested more than {MAX_DEPTH} levels deep", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base class says so
                break
            if duplicate:
                raise _Refused(None, None, f"key {key!r} appears twice in one mapping", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


if getattr(yaml, "__with_libyaml__", False):
    from yaml.cyaml import CParser  # pyright: ignore[reportAttributeAccessIssue]

    class _Loader(_Rules, Composer, CParser, SafeConstructor, Resolver):  # pyright: ignore
        """libyaml reads the text into events (C: a 3.7 MB storyboard of long lines took 3.6 s in PyYAML's
        Python scanner, 0.1 s here); nodes are composed in Python, so `_Rules` counts and refuses as they come."""

        def __init__(self, stream, max_nodes: int = MAX_NODES) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._depth, self._nodes, self._max_nodes = 0, 0, max_nodes

else:  # pragma: no cover - PyYAML built without libyaml

    class _Loader(_Rules, yaml.SafeLoader):  # pyright: ignore
        def __init__(self, stream, max_nodes: int = MAX_NODES) -> None:
            yaml.SafeLoader.__init__(self, stream)
            self._depth, self._nodes, self._max_nodes = 0, 0, max_nodes
