"""The camera moves are defined once (storage.schema.Camera); the tables that speak or draw them elsewhere (the
video prompt's words, the offline agents' words, the hints read from notes, the animatic's moves) must agree with
it: a move added to the schema and forgotten in one of them fails here."""

from __future__ import annotations

import numpy as np

from agents.offline.directions import CAMERA_HINTS, CAMERA_OF_WORDS
from agents.offline.words import CAMERA_WORDS as OFFLINE_WORDS
from generation.animatic import _camera
from generation.base import CAMERA_WORDS as PROMPT_WORDS
from generation.base import with_camera
from storage.schema import CAMERA_MOVES


def test_every_table_names_exactly_the_schema_moves():
    moves = set(CAMERA_MOVES)
    assert set(PROMPT_WORDS) == moves
    assert set(OFFLINE_WORDS) == moves
    assert set(CAMERA_HINTS.values()) == moves  # every move can be asked for in a note
    assert set(CAMERA_OF_WORDS.values()) == moves  # the offline words are distinct, so they read back


def test_every_move_but_static_is_told_and_drawn():
    canvas = np.random.default_rng(0).uniform(0, 255, (90, 120, 3)).astype(np.float32)
    for move in CAMERA_MOVES:
        told = with_camera("A shot.", move)
        first, last = (_camera(canvas, move, t, 64, 48, seed=1) for t in (0.0, 1.0))  # the view moves, or not
        if move == "static":
            assert told == "A shot." and np.array_equal(first, last)
        else:
            assert told != "A shot." and not np.array_equal(first, last), move
