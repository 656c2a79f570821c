"""History screen: the version tree drawn as a graph (click a version to compare it with its parent, then open
or fork it), two versions side by side with players that play in sync, and the panel's scores across versions
(a line per persona, with a legend, at whole version numbers). Graph and plot are SVG built in `values.py`, every
text escaped; `handlers.py` holds what the controls do (`HistoryHandlers`), `screen.py` the layout and wiring."""

from app.ui.screens.history.handlers import HistoryHandlers
from app.ui.screens.history.screen import build
from app.ui.screens.history.values import graph_svg, layout, plot_svg, score_series

__all__ = ["HistoryHandlers", "build", "graph_svg", "layout", "plot_svg", "score_series"]
