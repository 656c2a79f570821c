"""Sharing the open project (`chief serve --users`): who owns it and who else reads it, and its owner's Share /
Stop sharing with an account or the class (app/services/sharing.py). Shown above the screens; the lead may move it onto the
Projects screen (`ShareBox(ctx)` inside its build)."""

from __future__ import annotations

import gradio as gr

from app.services.sharing import reader_label
from app.ui.common import Ctx, guard, md
from storage.owners import CLASS


class ShareBox:
    def __init__(self, ctx: Ctx) -> None:
        self.studio, self.ctx = ctx.studio, ctx
        with gr.Accordion("Sharing", open=False, elem_id="share_box"):
            self.said = gr.Markdown(elem_id="share_said")
            with gr.Row():
                self.reader = gr.Textbox(
                    label="Share read-only with", placeholder="an account's name, or: class", elem_id="share_reader"
                )
                self.share = gr.Button("Share", elem_id="share_add", scale=0)
                self.stop = gr.Button("Stop sharing", elem_id="share_remove", scale=0)
        ctx.pid.change(guard(self.shown), ctx.pid, self.said, api_visibility="private", show_progress="hidden")
        self.share.click(guard(self.add), [ctx.pid, self.reader], self.said, api_visibility="private")
        self.stop.click(guard(self.remove), [ctx.pid, self.reader], self.said, api_visibility="private")

    def shown(self, pid) -> str:
        if not pid:
            return "Open a project to share it."
        a = self.studio.sharing.access(pid)
        readers = ", ".join(md(reader_label(r)) for r in a.readers) or "no one else"
        mine = "yours" if a.writable else f"{md(a.owner)}'s, read-only for you"
        return f"This project is {mine}; read by {readers}."

    def add(self, pid, reader) -> str:
        self.studio.sharing.share(pid or "", (reader or "").strip())
        return self.shown(pid)

    def remove(self, pid, reader) -> str:
        gone = (reader or "").strip()
        self.studio.sharing.unshare(pid or "", gone)
        files = getattr(self.ctx.demo, "chief_files", None)  # app.ui.launch's FileLedger: take back what was sent
        if files is not None:
            files.forget(None if gone in ("class", CLASS) else gone)
        return self.shown(pid)
