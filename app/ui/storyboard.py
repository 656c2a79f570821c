"""Storyboard screen: the shots as an editable table; add, remove and reorder; saving makes a new version."""

from __future__ import annotations

import gradio as gr

from app.ui.common import Ctx, guard, need_project, ver
from app.ui.story import _rows, saved_message

COLUMNS = ["scene", "shot_id", "prompt", "negative_prompt", "duration", "seed", "camera", "narration", "locked",
           "continuity"]
DATATYPES = ["str", "str", "str", "str", "number", "number", "str", "str", "bool", "bool"]


def board_to_rows(board) -> list[list]:
    return [[scene.scene_id, s.shot_id, s.prompt, s.negative_prompt, s.duration, s.seed, s.camera, s.narration,
             s.locked, s.continuity] for scene in board.scenes for s in scene.shots]


def _bool(x) -> bool:
    if isinstance(x, str):
        return x.strip().lower() in ("true", "1", "yes", "y", "x")
    return bool(x)


def _text(x) -> str:
    return "" if x is None else str(x).strip()


def rows_to_board(base, rows):
    """The edited table applied to `base`: rows in film order; fields not in the table (dialogue, characters,
    scene titles) are kept by id; rows without a shot_id are new shots; blank rows are dropped."""
    from storage.schema import Storyboard

    old_shots = {s.shot_id: s for s in base.shots()}
    old_scenes = {sc.scene_id: sc for sc in base.scenes}
    groups: list[tuple[str, list[dict]]] = []
    scene = base.scenes[0].scene_id
    for i, row in enumerate(_rows(rows), 1):
        row = (list(row) + [None] * len(COLUMNS))[:len(COLUMNS)]
        sc, sid, prompt, neg, dur, seed, cam, narr, locked, cont = row
        if not _text(prompt) and not _text(sid):
            continue
        scene = _text(sc) or scene
        shot = old_shots[_text(sid)].model_dump() if _text(sid) in old_shots else {}
        if _text(sid):
            shot["shot_id"] = _text(sid)
        try:
            shot.update(prompt=_text(prompt), negative_prompt=_text(neg),
                        duration=float(dur) if _text(dur) else shot.get("duration", 5.0),
                        seed=int(float(seed)) if _text(seed) else shot.get("seed", 0),
                        camera=_text(cam) or "static", narration=_text(narr), locked=_bool(locked),
                        continuity=_bool(cont))
        except ValueError:
            raise ValueError(f"row {i}: duration and seed must be numbers") from None
        if groups and groups[-1][0] == scene:
            groups[-1][1].append(shot)
        else:
            groups.append((scene, [shot]))
    if not groups:
        raise ValueError("a storyboard needs at least one shot")
    scenes = []
    for scene_id, shots in groups:
        old = old_scenes.get(scene_id)
        scenes.append({"scene_id": scene_id, "title": old.title if old else "", "description": old.description if old else "",
                       "shots": shots})
    data = base.model_dump()
    data["scenes"] = scenes
    return Storyboard.model_validate(data)


def _row_index(rows: list, n) -> int:
    if n in (None, "") or not 1 <= int(n) <= len(rows):
        raise gr.Error(f"row must be between 1 and {len(rows)}")
    return int(n) - 1


def add_row(rows, n):
    rows = [list(r) for r in _rows(rows)]
    i = _row_index(rows, n) if rows else -1
    scene = rows[i][0] if rows else ""
    rows.insert(i + 1, [scene, "", "a new shot", "", 3.0, 0, "static", "", False, False])
    return rows


def remove_row(rows, n):
    rows = [list(r) for r in _rows(rows)]
    rows.pop(_row_index(rows, n))
    return rows


def move_row(rows, n, delta: int):
    rows = [list(r) for r in _rows(rows)]
    i = _row_index(rows, n)
    j = min(max(i + delta, 0), len(rows) - 1)
    rows.insert(j, rows.pop(i))
    return rows, j + 1


def build(ctx: Ctx) -> None:
    studio = ctx.studio
    gr.Markdown("Edit cells directly. Rows are shots in film order; leave `shot_id` empty for a new shot. "
                f"Camera moves: {', '.join(__import__('storage.schema', fromlist=['CAMERA_MOVES']).CAMERA_MOVES)}.")
    table = gr.Dataframe(headers=COLUMNS, datatype=DATATYPES, value=[], type="array", interactive=True,
                         label="Shots", elem_id="shots_table", wrap=True, max_height=600, show_row_numbers=True)
    with gr.Row():
        row_no = gr.Number(label="Row", value=1, precision=0, minimum=1, elem_id="shot_row", scale=1)
        add = gr.Button("Add shot after", elem_id="shot_add_btn", scale=1)
        remove = gr.Button("Remove", elem_id="shot_remove_btn", scale=1)
        up = gr.Button("Move up", elem_id="shot_up_btn", scale=1)
        down = gr.Button("Move down", elem_id="shot_down_btn", scale=1)
        save = gr.Button("Save storyboard (new version)", variant="primary", elem_id="shots_save_btn", scale=2)
    message = gr.Markdown(elem_id="shots_message")

    @guard
    def load(pid, v):
        if not pid:
            return [], ""
        version = studio.version(pid, ver(v))
        return board_to_rows(version.storyboard), f"v{version.number}: {len(version.storyboard.shots())} shots"

    @guard
    def save_board(pid, v, rows):
        pid = need_project(pid)
        base = studio.version(pid, ver(v))
        board = rows_to_board(base.storyboard, rows)
        nv, branched = studio.save_storyboard(pid, board, base.number, "storyboard edit")
        return nv.number, board_to_rows(nv.storyboard), saved_message(nv, branched)

    ctx.tabs["storyboard"].select(load, [ctx.pid, ctx.version], [table, message], api_name="load_storyboard")
    add.click(guard(add_row), [table, row_no], table, api_visibility="private")
    remove.click(guard(remove_row), [table, row_no], table, api_visibility="private")
    up.click(guard(lambda r, n: move_row(r, n, -1)), [table, row_no], [table, row_no], api_visibility="private")
    down.click(guard(lambda r, n: move_row(r, n, 1)), [table, row_no], [table, row_no], api_visibility="private")
    save.click(save_board, [ctx.pid, ctx.version, table], [ctx.version, table, message], api_name="save_storyboard")
