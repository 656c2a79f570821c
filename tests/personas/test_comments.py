"""Reading a viewer's comments (text, CSV, JSONL), normalising ratings, and stripping what identifies people."""

from __future__ import annotations

import pytest

from agents.comments import comments_from_text, load_comments, sanitize


def test_plain_text_one_comment_per_line(tmp_path):
    path = tmp_path / "c.txt"
    path.write_text("Loved it\n\n  too slow for me  \n", encoding="utf-8")
    cs = load_comments(path)
    assert [(c.index, c.text, c.title, c.rating) for c in cs] == [
        (1, "Loved it", "", None),
        (2, "too slow for me", "", None),
    ]


def test_csv_with_title_and_ratings_on_the_files_scale(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text(
        'text,title,rating,username\n"Great, really",A,4,bob\nMeh,B,2,bob\nOk,C,,alice\nBest,D,5,x\n', encoding="utf-8"
    )
    cs = load_comments(path)
    assert [c.text for c in cs] == ["Great, really", "Meh", "Ok", "Best"]
    assert [c.title for c in cs] == ["A", "B", "C", "D"]
    assert [c.rating for c in cs] == [8.0, 4.0, None, 10.0]  # the largest rating is 5: a 1..5 scale


def test_a_letterboxd_reviews_export(tmp_path):
    path = tmp_path / "reviews.csv"
    path.write_text(
        "Date,Name,Year,Letterboxd URI,Rating,Rewatch,Review\n"
        "2024-01-02,Perfect Days,2023,https://boxd.it/abc,4.5,,Quiet and lovely\n"
        "2024-02-03,Tenet,2020,https://boxd.it/def,2,Yes,Could not follow it\n",
        encoding="utf-8",
    )
    cs = load_comments(path)
    assert [(c.title, c.rating, c.text) for c in cs] == [
        ("Perfect Days", 9.0, "Quiet and lovely"),
        ("Tenet", 4.0, "Could not follow it"),
    ]


def test_jsonl_ratings_that_say_their_scale(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"text": "a", "rating": "4/5"}\n{"text": "b", "rating": "80%"}\n{"text": "c", "rating": 7}\n'
        '{"text": "d", "rating": 0.5, "description": "a quiet film"}\n',
        encoding="utf-8",
    )
    cs = load_comments(path)
    assert [c.rating for c in cs] == [8.0, 8.0, 7.0, 0.5]  # bare numbers up to 10: a 0..10 scale
    assert cs[3].description == "a quiet film"


def test_unreadable_files_fail_with_one_clear_line(tmp_path):
    bad = tmp_path / "c.csv"
    bad.write_text("title,rating\nA,3\n", encoding="utf-8")
    with pytest.raises(ValueError, match="needs a 'text' column"):
        load_comments(bad)
    bad = tmp_path / "c.jsonl"
    bad.write_text('{"text": "a", "rating": "great"}\n', encoding="utf-8")
    with pytest.raises(ValueError, match="rating 'great' is not a number"):
        load_comments(bad)
    bad.write_text('{"text": "a"\n', encoding="utf-8")
    with pytest.raises(ValueError, match=r"c.jsonl:1: not valid JSON"):
        load_comments(bad)
    empty = tmp_path / "e.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no comments"):
        load_comments(empty)


@pytest.mark.parametrize(
    "raw, gone, kept",
    [
        ("see https://example.com/x?a=1 and www.films.org/page", ["example.com", "films.org", "http"], ["see"]),
        ("mail me: jane.doe+films@mail.example.co.uk!", ["jane", "doe", "@", "mail.example"], ["mail me"]),
        ("agree with @film_buff_99 and /u/reeler here", ["film_buff", "reeler", "u/"], ["agree with", "here"]),
        ("call +1 (555) 123-4567 or 020 7946 0958", ["555", "4567", "7946"], ["call"]),
        ("Stunning ending, loved it. — John Smith", ["John", "Smith"], ["Stunning ending, loved it."]),
        ("Posted by Mary Ann Jones: too slow", ["Mary", "Jones"], ["too slow"]),
        ("directed by Satoshi Kon in 1997, rated 8/10", [], ["directed by Satoshi Kon in 1997, rated 8/10"]),
        (
            "the 1999-2004 run was better. Review written by Tom Hall",
            ["Tom", "Hall"],
            ["the 1999-2004 run was better."],
        ),
        ("nice piece on vimeo.com/123 ~ Al", ["vimeo", "Al"], ["nice piece on"]),
    ],
)
def test_sanitize_strips_people_and_links_but_keeps_the_opinion(raw, gone, kept):
    out = sanitize(raw)
    for g in gone:
        assert g not in out
    for k in kept:
        assert k in out


def test_author_columns_are_never_kept_and_their_names_are_stripped(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"text": "I agree with Kate Winters, wonderful", "author": "@kate_w"}\n'
        '{"text": "kate_w is right", "user": "Kate Winters"}\n',
        encoding="utf-8",
    )
    texts = " ".join(c.text for c in load_comments(path))
    assert "Kate" not in texts and "kate_w" not in texts and "wonderful" in texts


def test_pasted_text():
    cs = comments_from_text("Great film @bob\n\nhttp://x.io boring\n")
    assert [(c.index, c.text) for c in cs] == [(1, "Great film"), (2, "boring")]
