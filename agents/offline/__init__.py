"""The offline roles — planner, critic, refiner — deterministic, no network, heuristic, and they use their inputs.

They return the same types as the LLM roles and say what they are (`mode = "offline"`):
- `planner.py`: an idea (`idea.py` reads it) becomes a beat sheet, scenes and shots (`story.py` templates);
- `critic.py`: what `checks.py` finds in the storyboard and in the frames `measure.py` measures, raised per persona
  in its own voice (`voice.py`), with concrete changes (`directions.py`);
- `refiner.py`: creator notes (`notes.py` reads them) and the panel's directions become edits;
- `describe.py`: what each shot's frames show, in words, for a critic model that reads text only.
"""

from agents.offline.critic import OfflineCritic
from agents.offline.describe import describe_frames
from agents.offline.planner import OfflinePlanner
from agents.offline.refiner import OfflineRefiner

__all__ = ["OfflineCritic", "OfflinePlanner", "OfflineRefiner", "describe_frames"]
