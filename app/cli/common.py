"""What every command module shares: the context object (the Studio, built on first use), output (JSON on
stdout with --json, else human text), one-line errors, and the common options."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

import click
from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from app.errors import one_line, user_errors
from generation.text import json_text, terminal

if TYPE_CHECKING:
    from app.services.refining import UsageSummary
    from app.studio import Studio
    from storage.records import Version

EXIT_ERROR = 1

_P = ParamSpec("_P")
_T = TypeVar("_T")
_F = TypeVar("_F", bound=Callable[..., Any])


class Ctx:
    """What every command is handed: the global options and the Studio (built on first use)."""

    def __init__(self, home: str | None, as_json: bool, overrides: dict[str, Any], user: str | None = None) -> None:
        self.home, self.json, self.overrides = home, as_json, overrides
        self.user = user
        self._studio: Studio | None = None

    def acting(self) -> Callable[[], None]:
        """Act as `--user` (the local owner by default: storage.owners) until the command ends; returns the undo.
        The account is looked up when the Studio is first built (`studio`)."""
        from storage.owners import ACTOR, LOCAL_OWNER, Actor

        token = ACTOR.set(Actor(self.user or LOCAL_OWNER))
        return lambda: ACTOR.reset(token)

    @property
    def studio(self) -> Studio:
        if self._studio is None:
            from app.config import load_config
            from app.server.progress import quiet_libraries
            from app.studio import Studio

            quiet_libraries()  # our bars on stderr only; no library's "Loading weights" in the output
            config = load_config({"home": self.home, **self.overrides})
            for note in config.notes:  # never a silent change: a withheld key is said on stderr
                secho(f"note: {note}", fg="yellow", err=True)
            studio = Studio(config)
            if self.user:  # an account that is not there is one line, before anything is read or written
                from storage.owners import ACTOR

                ACTOR.set(studio.accounts.actor(self.user))
            self._studio = studio
        return self._studio

    def out(self, data: BaseModel | list | dict | Any, human: str | None = None) -> None:
        """With --json: the result's JSON (pydantic models as their model_dump) on stdout; else the human text."""
        if self.json:
            click.echo(json_text(json.dumps(to_jsonable_python(data), indent=2, ensure_ascii=False)))
        elif human is not None:
            echo(human)

    def header(self) -> None:
        """Which backend, model, still-image backend and agent mode are active (in --json it is the `active` field
        instead)."""
        if not self.json:
            st = self.studio.status()
            secho(
                f"chief · backend: {st.backend_label} · model: {st.model} · stills: {st.images_label} · "
                f"agents: {st.agents}",
                dim=True,
            )


pass_ctx = click.make_pass_decorator(Ctx)


def echo(text: object, **kwargs: Any) -> None:
    """click.echo of text that may hold a title, a note, a name or a file's words: through `generation.text.terminal`
    (escape sequences, controls and bidi overrides dropped; lines kept), so it cannot drive the terminal."""
    click.echo(terminal(text, lines=True), **kwargs)


def secho(text: object, **kwargs: Any) -> None:
    """click.secho (a style: colour, dim) of such text, made safe as `echo` does."""
    click.secho(terminal(text, lines=True), **kwargs)


def err(message: str) -> None:
    secho(f"error: {message}", fg="red", err=True)


def handles_errors(fn: Callable[_P, _T]) -> Callable[_P, _T]:
    """User-facing errors become one line on stderr and exit status 1; no tracebacks."""

    @functools.wraps(fn)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        from generation.base import Cancelled

        try:
            return fn(*args, **kwargs)
        except user_errors() as e:
            err(one_line(e))
            sys.exit(EXIT_ERROR)
        except Cancelled:
            err("cancelled; finished shots are kept")
            sys.exit(130)
        except KeyboardInterrupt:
            err("interrupted; finished work is kept")
            sys.exit(130)

    return wrapper


def json_option(fn: _F) -> _F:
    """Accept --json after the command name too (chief render P --json)."""

    def set_json(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
        if value:
            c = ctx.find_object(Ctx)
            assert c is not None  # the chief group sets it before any command's options
            c.json = True
        return value

    return click.option(
        "--json",
        "as_json_local",
        is_flag=True,
        expose_value=False,
        callback=set_json,
        help="Machine-readable JSON on stdout.",
    )(fn)


def named(v: Version) -> str:
    """A version as the CLI names it: "v6", or "v6 (draft)" while small actions still fold into it."""
    return f"v{v.number}" + (" (draft)" if v.draft else "")


def branch_note(studio: Studio, v: Version) -> str:
    """A line for a version made from one that had already moved on (another process or tab went first)."""
    return (
        f"\nnote: v{v.parent_number} already had a newer version, so this is a new branch (nothing was lost)"
        if studio.branched(v)
        else ""
    )


def version_option(fn: _F) -> _F:
    return click.option("--version", "-v", "version", help="Version number (default: the current version).")(fn)


@overload
def command(fn: Callable[..., Any], *, project: bool = True, **kwargs: Any) -> click.Command: ...


@overload
def command(
    fn: None = None, *, project: bool = True, **kwargs: Any
) -> Callable[[Callable[..., Any]], click.Command]: ...


def command(
    fn: Callable[..., Any] | None = None, *, project: bool = True, **kwargs: Any
) -> click.Command | Callable[[Callable[..., Any]], click.Command]:
    """Shorthand for a command's usual decorators: --json, the context, one-line errors (and a PROJECT argument)."""

    def wrap(f: Callable[..., Any]) -> click.Command:
        f = handles_errors(f)
        f = pass_ctx(f)
        f = json_option(f)
        if project:
            f = click.argument("project")(f)
        return click.command(**kwargs)(f)

    return wrap(fn) if fn is not None else wrap


def usage_line(usage: UsageSummary) -> str:
    t = usage.total
    return (
        f"agent cost for this version: {t.calls} call(s), {t.prompt_tokens + t.completion_tokens} tokens, "
        f"{t.seconds:.1f}s"
    )
