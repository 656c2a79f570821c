"""One viewer's comments: read them (plain text, CSV, JSON/JSONL) and strip what identifies anyone.

A comments file comes from outside (an export of someone's reviews), so it is bounded before it is
read: MAX_FILE_BYTES per file, MAX_COMMENTS comments, MAX_AUTHORS author names (a persona is one
viewer), each comment is cut at MAX_COMMENT_CHARS, and all the text to strip (comments, titles and descriptions
as cut) is at most MAX_TOTAL_CHARS, else the file is refused in one line before any is stripped. Stripping is
linear in the text: no pattern is retried from every position of a long run (a crafted comment once took
minutes). The web app strips pasted comments in a worker process (`comments_from_text_apart`), so a big paste
does not slow other sessions' requests in the server process.
"""

from __future__ import annotations

import csv
import functools
import io
import multiprocessing
import re
import threading
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from storage.parsing import ParseError, parse_json

MAX_FILE_BYTES = 32 * 2**20
MAX_COMMENTS = 20_000
MAX_AUTHORS = 20  # distinct names in author columns; their names are stripped from every comment
MAX_COMMENT_CHARS = 5_000  # a long review; anything longer is cut
MAX_TOTAL_CHARS = 2_000_000  # text stripped per file: 20,000 comments of 100 characters; about 2 s of stripping
MAX_PASTED_CHARS = 1_000_000  # comments pasted into the web app


@dataclass(frozen=True)
class Comment:
    """One comment by the viewer (already sanitized). `index` is 1-based, in file order."""

    index: int
    text: str
    title: str = ""  # what was watched
    rating: float | None = None  # 0..10
    description: str = ""  # what the watched item is about (used to rate it in calibration)


# ------------------------------------------------------------------------------------------- privacy

_URL = re.compile(r"(?i)\b(?:https?://|ftp://|www\.)\S+")
_EMAIL = re.compile(r"(?i)(?<![\w.+-])[\w.+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)+")
_TLDS = "com|net|org|io|co|uk|de|fr|jp|tv|me|ly|be|gg|app|dev|info|xyz|edu|gov|us|ca|au"
# labels of at most 63 characters, at most 8 of them (what DNS allows, nearly), starting only where a run of
# domain characters starts: each start is bounded work, and a long run ("a-.a-.a-.…") is not tried from inside
_DOMAIN = re.compile(r"(?i)(?<![a-z0-9.-])(?:[a-z0-9-]{1,63}\.){1,8}(?:" + _TLDS + r")\b(?:/\S*)?")
_HANDLE = re.compile(r"(?<![\w/])@[A-Za-z0-9_](?:[A-Za-z0-9_.]*[A-Za-z0-9_])?")
_REDDIT_USER = re.compile(r"(?i)(?<![\w])/?u/[A-Za-z0-9_-]+")
_PHONE = re.compile(r"(?<![\w+])\+?\(?\d[\d\s().-]{6,}\d(?!\w)")
_NAME = r"[A-Z][a-zA-Z'\-]*\.?(?:\s+[A-Z][a-zA-Z'\-]*\.?){0,3}"
_SIGNATURE = re.compile(r"(?:^|\s)(?:—|–|--|~|-)\s*" + _NAME + r"\s*$")
_BY_NAME = re.compile(r"\b(?P<verb>\w+\s+)?(?i:by)\s+(?P<name>" + _NAME + ")")
# film credits keep their names; any other "by <Name>" (posted, written, reviewed ...) may name a user, so it goes
_CREDIT_VERBS = {
    "directed",
    "produced",
    "scored",
    "shot",
    "edited",
    "animated",
    "composed",
    "narrated",
    "voiced",
    "drawn",
    "illustrated",
    "photographed",
    "choreographed",
}
_YEARS = re.compile(r"(?:1[89]|20)\d\d\s*[-–/]\s*(?:(?:1[89]|20)\d\d|\d\d)")
_SPACES = re.compile(r"[ \t]{2,}")
# A match may only start where a run of its class starts: a search that failed from inside a long run would
# otherwise be retried from every later position of it (quadratic on a comment of spaces).
_SPACE_BEFORE_PUNCT = re.compile(r"(?<!\s)\s+([,.!?;:])")
_EMPTY_BRACKETS = re.compile(r"\(\s*\)|\[\s*\]")
# what a removed link or handle leaves dangling at the end ("more at", "cc", "via")
_DANGLING = re.compile(
    r"(?i)(?<![\s,;:])[\s,;:]*\b(?:cc|h/t|via|see|more at|more on|check out|visit|follow me on|follow me at|"
    r"contact me at|email me at|mail me at|mail me|email me|call me on|call me at)\s*[:.]?\s*$"
)


def _by_name(m: re.Match) -> str:
    # "directed by Satoshi Kon" names a filmmaker (content); "posted by John Smith" names a user.
    verb = (m.group("verb") or "").strip().lower()
    return m.group(0) if verb in _CREDIT_VERBS else (m.group("verb") or "")


def _phone(m: re.Match) -> str:
    s = m.group(0)
    return s if sum(c.isdigit() for c in s) < 7 or _YEARS.fullmatch(s.strip()) else ""


def sanitize(text: str, names: set[str] | frozenset[str] = frozenset()) -> str:
    """`text` without links, emails, @handles, u/users, phone numbers, signatures, "by <Name>" and the given `names`.

    Linear in the length of `text` (every pattern does bounded work per position; see _DOMAIN, _DANGLING),
    which is cut to MAX_COMMENT_CHARS first."""
    t = text = _cut(text)
    t = _URL.sub("", t)
    t = _EMAIL.sub("", t)
    t = _DOMAIN.sub("", t)
    t = _HANDLE.sub("", t)
    t = _REDDIT_USER.sub("", t)
    t = _PHONE.sub(_phone, t)
    if names:
        t = _names_pattern(frozenset(names)).sub("", t)
    t = _BY_NAME.sub(_by_name, t)
    t = _SIGNATURE.sub("", t.rstrip())
    if t != text:
        t = _DANGLING.sub("", t)
    t = _SPACES.sub(" ", t)
    t = _SPACE_BEFORE_PUNCT.sub(r"\1", t)
    t = _EMPTY_BRACKETS.sub("", t)
    return t.strip(" \t\n-—–~|:,;")


def _cut(text: str) -> str:
    """At most MAX_COMMENT_CHARS characters, cut at a space when there is one near the end."""
    if len(text) <= MAX_COMMENT_CHARS:
        return text
    head = text[:MAX_COMMENT_CHARS]
    space = head.rfind(" ", MAX_COMMENT_CHARS - 200)
    return head[:space] if space > 0 else head


@functools.lru_cache(maxsize=16)
def _names_pattern(names: frozenset[str]) -> re.Pattern:
    """One pattern for all the names (longest first), so a comment is scanned once, not once per name."""
    alts = sorted({n.strip() for n in names if len(n.strip()) >= 2}, key=lambda n: (-len(n), n))
    return re.compile(r"(?i)(?<!\w)(?:" + "|".join(map(re.escape, alts)) + r")(?!\w)") if alts else re.compile(r"(?!)")


# ------------------------------------------------------------------------------------------- reading

_AUTHOR_FIELDS = (
    "author",
    "user",
    "username",
    "user_name",
    "author_name",
    "handle",
    "screen_name",
    "by",
    "email",
    "from",
)
_TEXT_FIELDS = ("text", "comment", "body", "review", "content")
_TITLE_FIELDS = ("title", "item", "film", "movie", "video", "show", "watched", "name")  # Letterboxd: Name
_RATING_FIELDS = ("rating", "score", "stars")
_DESC_FIELDS = ("description", "synopsis", "summary", "plot")


def _pick(row: dict, keys: tuple[str, ...]) -> str:
    lowered = {str(k).strip().lower(): v for k, v in row.items() if k is not None}
    for k in keys:
        v = lowered.get(k)
        if v not in (None, ""):
            return str(v).strip()
    return ""


def _parse_rating(raw: str, where: str) -> tuple[float | None, float | None]:
    """(value, scale) where scale is known from '4/5', '80%'; else (value, None). Empty: (None, None)."""
    raw = raw.strip()
    if not raw:
        return None, None
    if len(raw) > 20:
        raise ValueError(f"{where}: rating {raw[:20]!r}… is not a number (use e.g. 7, 3.5, 4/5 or 80%)")
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*/\s*(\d+(?:\.\d+)?)", raw)
    if m:
        return float(m.group(1)), float(m.group(2))
    m = re.fullmatch(r"(-?\d+(?:\.\d+)?)\s*%", raw)
    if m:
        return float(m.group(1)), 100.0
    if raw and set(raw) <= {"★", "☆", "*"}:
        return float(raw.count("★") or raw.count("*")), 5.0
    try:
        return float(raw), None
    except ValueError:
        raise ValueError(f"{where}: rating {raw!r} is not a number (use e.g. 7, 3.5, 4/5 or 80%)") from None


def _scale_of(values: list[float]) -> float:
    """The rating scale a file uses, from its largest rating: 0..1, 1..5, 0..10 or 0..100."""
    top = max(values)
    return 1.0 if top <= 1 else 5.0 if top <= 5 else 10.0 if top <= 10 else 100.0


def _rows(path: Path, text: str) -> list[dict]:
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson") or (suffix == ".json" and not text.lstrip().startswith("[")):
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                obj = parse_json(line, f"{path}:{n}")
            except ParseError as e:
                raise ValueError(str(e)) from None
            rows.append(obj if isinstance(obj, dict) else {"text": str(obj)})
        return rows
    if suffix == ".json":
        data = parse_json(text, str(path))
        return [r if isinstance(r, dict) else {"text": str(r)} for r in data]
    if suffix in (".csv", ".tsv"):
        csv.field_size_limit(MAX_FILE_BYTES)
        reader = csv.DictReader(io.StringIO(text), delimiter="\t" if suffix == ".tsv" else ",")
        if not reader.fieldnames or not any(f and f.strip().lower() in _TEXT_FIELDS for f in reader.fieldnames):
            raise ValueError(f"{path}: a CSV of comments needs a 'text' column (found {reader.fieldnames})")
        return list(reader)
    return [{"text": line} for line in text.splitlines() if line.strip()]


def load_comments(path: str | Path) -> list[Comment]:
    """One viewer's comments from plain text (one per line), CSV or JSONL (`text`, optional `title`, `rating`).

    Ratings are normalised to 0..10 ('4/5' and '80%' say their scale; bare numbers use the file's scale, judged
    from its largest rating). Author/user/name columns are never kept, and their values are stripped from every
    comment, along with links, emails, handles and phone numbers.
    """
    p = Path(path)
    if p.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{p}: too big for one viewer's comments ({p.stat().st_size} bytes > {MAX_FILE_BYTES})")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise ValueError(f"{p}: not UTF-8 text") from None
    rows = _rows(p, text)
    if len(rows) > MAX_COMMENTS:
        raise ValueError(f"{p}: {len(rows)} comments, more than the {MAX_COMMENTS} one viewer's file may hold")
    names = {_pick(r, (k,))[:200] for r in rows for k in _AUTHOR_FIELDS} - {""}
    if len(names) > MAX_AUTHORS:
        raise ValueError(
            f"{p}: the comments name {len(names)} different authors; a persona is built from one "
            "viewer's comments (export just theirs)"
        )
    names |= {n.lstrip("@") for n in names}
    total = sum(
        min(len(_pick(r, keys)), MAX_COMMENT_CHARS)
        for r in rows
        for keys in (_TEXT_FIELDS, _TITLE_FIELDS, _DESC_FIELDS)
    )
    if total > MAX_TOTAL_CHARS:
        raise ValueError(
            f"{p}: {total:,} characters of comments, more than the {MAX_TOTAL_CHARS:,} one viewer's file may hold "
            "(keep their latest comments)"
        )
    parsed = []
    for n, row in enumerate(rows, 1):
        value, scale = _parse_rating(_pick(row, _RATING_FIELDS), f"{p} item {n}")
        parsed.append((row, value, scale))
    bare = [v for _, v, s in parsed if v is not None and s is None]
    file_scale = _scale_of(bare) if bare else 10.0
    out: list[Comment] = []
    for row, value, scale in parsed:
        body = sanitize(_pick(row, _TEXT_FIELDS), names)
        if not body:
            continue
        rating = None
        if value is not None:
            rating = round(min(10.0, max(0.0, value * 10.0 / (scale or file_scale))), 3)
        out.append(
            Comment(
                index=len(out) + 1,
                text=body,
                title=sanitize(_pick(row, _TITLE_FIELDS), names),
                rating=rating,
                description=sanitize(_pick(row, _DESC_FIELDS), names),
            )
        )
    if not out:
        raise ValueError(f"{p}: no comments found")
    return out


def comments_from_text(text: str) -> list[Comment]:
    """Comments pasted as plain text, one per line (for the web app's builder)."""
    if len(text) > MAX_PASTED_CHARS:
        raise ValueError(f"too much text pasted ({len(text):,} characters > {MAX_PASTED_CHARS:,})")
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > MAX_COMMENTS:
        raise ValueError(f"{len(lines):,} comments pasted, more than the {MAX_COMMENTS:,} one viewer's may be")
    kept = (sanitize(line) for line in lines)
    return [Comment(index=i, text=t) for i, t in enumerate((t for t in kept if t), 1)]


_worker = None
_worker_lock = threading.Lock()


def comments_from_text_apart(text: str) -> list[Comment]:
    """`comments_from_text` in a worker process (one, started on first use, pastes take turns in it): stripping a
    big paste is CPU work, and in the web server's process it would hold the interpreter lock against every other
    session's requests. The size check runs here first, so an over-size paste is refused without the worker."""
    global _worker
    if len(text) > MAX_PASTED_CHARS:
        raise ValueError(f"too much text pasted ({len(text):,} characters > {MAX_PASTED_CHARS:,})")
    with _worker_lock:
        if _worker is None:
            _worker = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
        worker = _worker
    return worker.submit(comments_from_text, text).result()
