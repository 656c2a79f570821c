"""Projects and their version tree: create, list, find, trash and restore; save, fork, check out and diff
versions; the critics' panel and the project's own personas (both are part of a version)."""

from __future__ import annotations

from pydantic import ValidationError

from app.config import Config, env_names
from app.context import Context
from app.errors import StudioError
from storage.edits import StoryboardDiff, diff_storyboards
from storage.records import Project, UsageRecord, Version, VersionBundle, VersionNode
from storage.schema import Persona, Shot, Storyboard, first_error

# A shot's field, a story's field, in the word a version's label uses for it.
_FIELD_WORDS = {
    "prompt": "picture",
    "negative_prompt": "picture",
    "keyframe": "keyframe",
    "seed": "take",
    "camera": "camera",
    "duration": "timing",
    "dialogue": "lines",
    "narration": "narration",
    "sounds": "sounds",
    "description": "description",
    "characters": "cast",
    "locked": "lock",
    "continuity": "continuity",
    "title": "title",
    "logline": "story",
    "style_guide": "style",
    "fps": "picture size",
    "width": "picture size",
    "height": "picture size",
    "film": "film options",
}


def change_word(d: StoryboardDiff) -> str:
    """What a version changed from its parent, in a word or two for its label ("lines", "sounds & music", "3 shots
    added"): the kinds of change, most touched first, at most two named ("+N" more); "" when nothing changed."""
    from collections import Counter

    counts: Counter[str] = Counter()
    for c in d.shots:
        if c.status in ("added", "removed"):
            counts[f"shot {c.status}"] += 1
        elif c.status == "moved":
            counts["order"] += 1
        for f in c.fields:
            counts[_FIELD_WORDS.get(f, f.replace("_", " "))] += 1
    for key in d.story:
        word = key.split(" ")[0] if " " in key else key  # "music sc1", "music level sc1", "voice Ada"
        counts[{"music": "music", "effects": "sounds", "voice": "voice"}.get(word, _FIELD_WORDS.get(key, word))] += 1
    counts.update("characters" for _ in d.characters)
    if not counts:
        return ""
    words = [f"{n} shots {w.split(' ')[1]}" if w.startswith("shot ") and n > 1 else w for w, n in counts.most_common()]
    return " & ".join(words[:2]) + (f" +{len(words) - 2}" if len(words) > 2 else "")


class Projects:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    @property
    def repo(self):
        return self.ctx.repo

    # ------------------------------------------------------------------ projects
    def create(
        self,
        board: Storyboard,
        *,
        idea: str,
        kind: str,
        message: str,
        panel: list[str] | None = None,
        usage: UsageRecord | None = None,
    ) -> Version:
        """A new project whose v1 is `board` (and what planning it cost), in one transaction."""
        panel = panel if panel is not None else list(self.builtin_personas())
        self.check_panel(panel, [])
        self.check_board(board)
        with self.repo.write() as u:
            v = u.add_project(board, idea=idea, kind=kind, message=message, panel=panel)
            if usage is not None:
                u.add_usage(v, usage)
        return v

    def list(self, include_trashed: bool = False) -> list[Project]:
        with self.repo.read() as u:
            return u.projects(include_trashed)

    def resolve(self, ref: str) -> str:
        """A project id, a unique id prefix, or an exact title."""
        with self.repo.read() as u:
            rows = u.project_titles()
        exact = [pid for pid, _ in rows if pid == ref]
        hits = exact or [pid for pid, _ in rows if pid.startswith(ref)] or [pid for pid, t in rows if t == ref]
        if not hits:
            raise StudioError(f"no project {ref!r} (see `chief projects`)")
        if len(hits) > 1:
            raise StudioError(f"{ref!r} matches {len(hits)} projects; use more of the id")
        return hits[0]

    def project(self, pid: str) -> Project:
        with self.repo.read() as u:
            return u.project(pid)

    def set_trashed(self, pid: str, trashed: bool) -> Project:
        with self.repo.write() as u:
            u.set_trashed(pid, trashed)
            return u.project(pid)

    def find_tagged(self, tag: str) -> Version | None:
        with self.repo.read() as u:
            return u.find_tagged(tag)

    # ------------------------------------------------------------------ versions
    def version(self, pid: str, ref: int | str | None = None) -> Version:
        with self.repo.read() as u:
            return u.version(pid, ref)

    def shot(self, v: Version, shot_id: str) -> Shot:
        """The version's shot, or a one-line error."""
        try:
            return v.storyboard.shot(shot_id)
        except KeyError:
            raise StudioError(f"v{v.number} has no shot {shot_id!r}") from None

    def versions(self, pid: str) -> list[VersionNode]:
        with self.repo.read() as u:
            return u.version_nodes(pid)

    def branched(self, v: Version) -> bool:
        """Whether `v` was made from a version that already had a newer child (someone moved on from it first): what
        `add_child` reports, read back from the tree for actions that return only the version (keyframes,
        references, takes). Version numbers are given in order, so an earlier sibling was there first."""
        if v.parent_number is None or v.kind == "fork":
            return False
        with self.repo.read() as u:
            return any(c.number < v.number for c in u.children(u.version(v.project_id, v.parent_number)))

    def save_storyboard(
        self, pid: str, board: Storyboard, base: int | str | None, message: str = "hand edit", kind: str = "edit"
    ) -> tuple[Version, bool]:
        """A child of `base` with this storyboard. Returns (version, branched): branched when `base`
        was no longer the newest version on its line (someone saved in between). Saving ends a working draft:
        `base`, when it is one, stays as it is (an ordinary version) and the save is its child."""
        self.check_board(board)
        with self.repo.write() as u:
            return u.add_child(u.version(pid, base), board, kind, message)

    def save_merged(
        self, pid: str, page: int, loaded: Storyboard, mine: Storyboard, message: str = "storyboard edit"
    ) -> tuple[Version, bool, bool]:
        """A save from a page that may be stale: what the person changed from `loaded` (the board version `page` had
        when the page got it) to `mine`, applied onto the newest board on `page`'s line (the current version when it
        descends from `page`, else `page` as it is now: a draft may have been amended since), in one transaction
        (`storage.edits.merge_boards`: the same field changed on both sides is refused, nothing saved). Returns
        (version, branched, made): made False when the merge changes nothing (the head comes back)."""
        from storage.edits import merge_boards

        with self.repo.write() as u:
            base = u.version(pid, page)
            current = u.version(pid)
            head = current if any(v.id == base.id for v in u.lineage(current)) else base
            board = merge_boards(loaded, mine, head.storyboard, f"v{head.number}")
            if board == head.storyboard:
                return head, False, False
            self.check_board(board)
            version, branched = u.add_child(head, board, "edit", message)
            return version, branched, True

    def fold(self, v: Version, board: Storyboard, kind: str, message: str) -> Version:
        """A small action's change to `v` (made from `v.storyboard` as read): into `v` itself when it is the open
        working draft, else a new draft child of it (see `storage.repository.Unit.fold`). Refused when the draft
        changed since it was read (another tab amended it): nothing is lost, the action is asked again."""
        self.check_board(board)
        with self.repo.write() as u:
            now = u.version(v.project_id, v.number)
            if now.storyboard != v.storyboard:
                raise StudioError(f"v{v.number} changed while this was prepared (another tab?): do it again")
            return u.fold(now, board, kind, message)[0]

    def set_film_options(self, pid: str, changes: dict, base: int | str | None = None) -> tuple[Version, bool]:
        """A child of `base` whose film options (storage.schema.FilmOptions) take `changes`; (version, made):
        nothing changes, no version (`base` comes back)."""
        v = self.version(pid, base)
        board = with_film_options(v.storyboard, changes)
        if board == v.storyboard:
            return v, False
        message = "film: " + ", ".join(f"{k}={val}" for k, val in changes.items())
        return self.save_storyboard(pid, board, v.number, message)[0], True

    def set_picture(
        self, pid: str, width: int | None, height: int | None, fps: int | None, base: int | str | None = None
    ) -> tuple[Version, bool]:
        """A child of `base` with this frame size and rate (None: the model's own); (version, made) as
        `set_film_options`."""
        v = self.version(pid, base)
        if (width is None) != (height is None):
            raise StudioError("give both width and height, or neither (the model's own size)")
        try:
            board = type(v.storyboard).model_validate(
                {**v.storyboard.model_dump(), "width": width, "height": height, "fps": fps}
            )
        except ValidationError as e:
            raise StudioError(f"picture: {first_error(e)}") from None
        if board == v.storyboard:
            return v, False
        size = f"{width}×{height}" if width else "the model's size"
        return self.save_storyboard(pid, board, v.number, f"picture: {size}, {fps or 'model'} fps")[0], True

    def fork(self, pid: str, ref: int | str | None = None) -> Version:
        """A new branch starting from version `ref` (the current one: None; same storyboard), made current."""
        with self.repo.write() as u:
            parent = u.version(pid, ref)
            return u.add_child(parent, parent.storyboard, "fork", f"fork of v{parent.number}")[0]

    def checkout(self, pid: str, ref: int | str) -> Version:
        """Make an existing version the one commands act on."""
        with self.repo.write() as u:
            v = u.version(pid, ref)
            u.set_current(v)
            return v

    def change_words(self, pid: str, numbers: list[int]) -> dict[int, str]:
        """For each of the versions `numbers`, what it changed from its parent in a word or two (`change_word`;
        a root version: "")."""
        out: dict[int, str] = {}
        with self.repo.read() as u:
            for n in numbers:
                v = u.version(pid, n)
                parent = u.version(pid, v.parent_number) if v.parent_number else None
                out[n] = change_word(diff_storyboards(parent.storyboard, v.storyboard)) if parent else ""
        return out

    def diff(self, pid: str, a: int | str, b: int | str) -> StoryboardDiff:
        va, vb = self.version(pid, a), self.version(pid, b)
        return diff_storyboards(va.storyboard, vb.storyboard).model_copy(
            update={"from_version": va.number, "to_version": vb.number}
        )

    # ------------------------------------------------------------------ the panel and personas
    def set_panel(
        self, pid: str, persona_ids: list[str], base: int | str | None = None, personas: list[Persona] | None = None
    ) -> Version:
        """A child version with a new critics' panel (and, optionally, the project's own personas)."""
        with self.repo.write() as u:
            parent = u.version(pid, base)
            own = personas if personas is not None else parent.personas
            self.check_panel(persona_ids, own)
            return u.add_child(
                parent, parent.storyboard, "panel", "panel: " + ", ".join(persona_ids), panel=persona_ids, personas=own
            )[0]

    def save_persona(self, pid: str, persona: Persona, base: int | str | None = None, on_panel: bool = True) -> Version:
        """Add or replace one of the project's own personas (a new version)."""
        v = self.version(pid, base)
        persona = persona.model_copy(update={"source": "built" if persona.source == "built" else "custom"})
        own = [p for p in v.personas if p.id != persona.id] + [persona]
        panel = v.panel + ([persona.id] if on_panel and persona.id not in v.panel else [])
        return self.set_panel(pid, panel, v.number, own)

    def personas_of(self, v: Version) -> dict[str, Persona]:
        return {**self.builtin_personas(), **{p.id: p for p in v.personas}}

    @staticmethod
    def builtin_personas() -> dict[str, Persona]:
        from agents.personas import builtin_personas

        return builtin_personas()

    def check_board(self, board: Storyboard) -> None:
        """Refuse a storyboard beyond the caps of the configuration (storage.schema.Limits), saying which
        setting raises the cap and why it is there."""
        found = self.ctx.config.limits.problem(board)
        if found:
            cap, what = found
            reason = Config.model_fields[cap].description
            assert reason is not None  # every cap states its reason (storage.schema.Limits)
            reason = reason.rstrip(".")
            raise StudioError(
                f"{what} is over the limit {env_names(cap)[0]}={getattr(self.ctx.config, cap):g} "
                f"({reason}): change the storyboard, or raise the setting"
            )

    def check_bundle(self, bundle: VersionBundle) -> None:
        """A version from outside (an archive) and what hangs off it pass the rules of versions made here."""
        v = bundle.version
        try:
            self.check_board(v.storyboard)
            ids = [p.id for p in v.personas]
            if len(set(ids)) != len(ids):
                raise StudioError("a persona id appears twice among the project's own personas")
            self.check_panel(v.panel, v.personas)
            shots = {s.shot_id for s in v.storyboard.shots()}
            for n in bundle.notes:
                if n.shot_id is not None and n.shot_id not in shots:
                    raise StudioError(f"a note is about shot {n.shot_id!r}, which the version does not have")
        except StudioError as e:
            raise StudioError(f"v{v.number}: {e}") from None

    def check_panel(self, panel: list[str], own: list[Persona]) -> None:
        known = set(self.builtin_personas()) | {p.id for p in own}
        unknown = [p for p in panel if p not in known]
        if unknown:
            raise StudioError(f"unknown persona(s) {unknown}; known: {sorted(known)}")
        if not panel:
            raise StudioError("the critics' panel is empty")


def with_film_options(board: Storyboard, changes: dict) -> Storyboard:
    """`board` with its film options changed (title_card, title_seconds, crossfade, burn_subtitles), checked: a bad
    value is a one-line StudioError naming the field."""
    try:
        film = type(board.film).model_validate({**board.film.model_dump(), **changes})
    except ValidationError as e:
        raise StudioError(f"film options: {first_error(e)}") from None
    return board.model_copy(update={"film": film})
