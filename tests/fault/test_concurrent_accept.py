"""Several processes accept proposals on the same project at the same moment: every edit survives (the
later ones as branches), version numbers stay unique, and the database stays consistent."""

from __future__ import annotations

import json
import time

from tests.fault.conftest import assert_sound, board, make_studio, popen_python

ACCEPT = """
import json, sys, time
from app.config import load_config
from app.studio import Studio
st = Studio(load_config({{"home": {home!r}, "narration": False, "agents": "offline"}}, environ={{}}))
st.version({pid!r})  # connect and migrate before the start line
while time.time() < {start!r}:
    time.sleep(0.001)
r = st.accept({pid!r}, {prop!r}, only=[{edit}])
print(json.dumps({{"version": r.version.number, "parent": r.version.parent_number, "branched": r.branched,
                  "edit": {edit}}}))
"""


def test_concurrent_accepts_all_survive(home):
    studio = make_studio(home)
    pid = studio.create_from_storyboard(board(3)).project_id
    for i in range(3):
        studio.add_note(pid, f"make shot {i} brighter and add rain", f"s{i}")
    prop = studio.refine(pid)
    edits = prop.proposal.edits
    assert len(edits) >= 3

    start = time.time() + 4.0  # every process is up and connected by then, then all accept at once
    procs = [
        popen_python(home, ACCEPT.format(home=str(home), pid=pid, prop=prop.id, start=start, edit=k)) for k in (1, 2, 3)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    assert sorted(r["version"] for r in results) == [2, 3, 4]  # unique numbers, none lost
    assert all(r["parent"] == 1 for r in results)
    assert sorted(r["branched"] for r in results) == [False, True, True]  # the first is the line, then branches
    for r in results:
        e = edits[r["edit"] - 1]
        shot = studio.version(pid, r["version"]).storyboard.shot(e.shot_id)
        assert getattr(shot, e.field) == e.new  # this process's edit is in its version
    versions = assert_sound(home, pid)
    assert len(versions) == 4
