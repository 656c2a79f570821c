"""A student's text reaches other tools escaped for each (issue 54 item 6): a spreadsheet never runs a CSV cell as a
formula, a terminal never receives an escape sequence, a bidi override or another non-printing character from a
title, a note or a name, and the hand-off's EDL holds no control or format character."""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest

from app.config import load_config
from app.studio import Studio
from generation.text import csv_cell, json_text, plain, terminal
from storage.owners import Actor, acting
from tests.conftest import invoke_cli, tiny_board

# What a hostile title or note holds: an OSC 52 clipboard write (ended by ST, not BEL), a CSI clear screen in its
# one-byte C1 form, an OSC 8 hyperlink, a right-to-left isolate, a zero-width joiner, a DEL, a line separator
HOSTILE = (
    "Safe\x1b]52;c;cm0gLXJmIH4K\x1b\\ title\x9b2J"
    "\x1b]8;;https://example.invalid/\x07link\x1b]8;;\x07"
    "\u2067evil\u2069\u200d\x7f\u2028end"
)


def printable(text: str, *, lines: bool = True) -> bool:
    """Every character a terminal shows as written (newlines between lines allowed)."""
    return all(c.isprintable() or (lines and c == "\n") for c in text)


@pytest.mark.parametrize(
    "cell",
    [
        '=HYPERLINK("https://x.invalid","y")',
        "+1+cmd|' /C calc'!A0",
        "-2+3",
        "@SUM(A1:A9)",
        "\t=1",
        "\r=1",
        "  =1+1",
        "\uff1dSUM(1)",
    ],
)
def test_a_cell_that_starts_a_formula_is_text(cell):
    assert csv_cell(cell) == "'" + cell
    assert csv_cell("a title") == "a title" and csv_cell(-3.5) == -3.5 and csv_cell(7) == 7


def test_terminal_drops_by_category_not_by_a_list_of_sequences():
    shown = terminal(HOSTILE)
    assert printable(shown, lines=False)
    assert "52;c" not in shown and "example.invalid" not in shown and "2J" not in shown
    assert shown.startswith("Safe title") and "link" in shown and shown.endswith("evil end")
    # characters no list of sequences names: an unassigned code point, a private-use one, a tag character, a
    # soft hyphen, an Arabic letter mark, a C1 NEL: all non-printing by their Unicode category
    odd = "a\U000e0041\ue000\u00ad\u061c\x85\u0378b"
    assert all(unicodedata.category(c) in ("Cf", "Co", "Cn", "Cc") for c in odd[1:-1])
    assert terminal(odd) == "ab"
    assert terminal("two\nlines\x1b[1A", lines=True) == "two\nlines"


def test_json_output_escapes_what_a_terminal_would_run_and_reads_back_the_same():
    text = json.dumps({"title": HOSTILE + "\U000e0063"}, ensure_ascii=False, indent=2)
    safe = json_text(text)
    assert printable(safe) and json.loads(safe) == json.loads(text)


def test_edl_text_holds_no_control_or_format_character():
    assert plain("A\u202enote\x1b[31m\u2066 x\u2069\x00") == "Anote[31m x"
    assert printable(plain(HOSTILE), lines=False)


@pytest.fixture
def home(tmp_path, empty_database):
    """A data folder with a student's project whose title and note are hostile."""
    folder = tmp_path / "home"
    empty_database(folder)
    st = Studio(load_config({"home": folder, "narration": False}, environ={}))
    try:
        st.accounts.add("teach", "a long password", teacher=True)
        with acting(Actor("mallory")):
            board = tiny_board(1).model_copy(update={"title": "@SUM(1+1)*cmd" + HOSTILE})
            pid = st.create_from_storyboard(board).project_id
            st.add_note(pid, '=IMPORTXML("http://x.invalid")' + HOSTILE, "s1")
    finally:
        st.db.close()
    return folder, pid


def run(home, *args):
    res = invoke_cli(home, args, {"CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline"})
    assert res.exit_code == 0, res.output + res.stderr
    return res


def test_class_csv_cells_are_text_and_the_terminal_gets_no_escape(home):
    folder, pid = home
    res = run(folder, "--user", "teach", "class", "report", "--csv")
    assert printable(res.stdout)
    rows = list(csv.DictReader(io.StringIO(res.stdout)))
    (row,) = [r for r in rows if r["project_id"] == pid]
    assert row["title"].startswith("'@SUM(1+1)*cmd")
    for r in rows:
        assert all(not cell or cell[0] not in "=+-@\t\r" for cell in r.values())

    human = run(folder, "--user", "teach", "class", "report").stdout
    assert printable(human) and "mallory" in human and "52;c" not in human


@pytest.mark.parametrize(
    "args", [("projects",), ("--json", "projects"), ("log", "{pid}"), ("show", "{pid}"), ("show", "{pid}", "--yaml")]
)
def test_cli_listings_print_no_escape(home, args):
    folder, pid = home
    res = invoke_cli(folder, [a.format(pid=pid) for a in args], {"CHIEF_NARRATION": "0", "CHIEF_AGENTS": "offline"})
    assert printable(res.stdout + res.stderr)
    assert "\u2067" not in res.stdout and "\x1b" not in res.stdout


def test_an_error_that_quotes_a_name_prints_no_escape(home):
    folder, _ = home
    res = invoke_cli(folder, ["log", "p_\x1b]0;owned\x07\u202e"], {"CHIEF_NARRATION": "0"})
    assert res.exit_code == 1
    assert printable(res.stdout + res.stderr) and "\x1b" not in res.stderr
