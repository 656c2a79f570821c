"""Several processes accept proposals on the same project at the same moment: every edit survives (the
later ones as branches), version numbers stay unique, and the database stays consistent."""

from __future__ import annotations

import json

from tests.fault.conftest import assert_sound, board, make_studio, popen_python

ACCEPT = """
import json, sys
from app.config import load_config
from app.studio import Studio
st = Studio(load_config({{"home": {home!r}, "narration": False, "agents": "offline"}}, environ={{}}))
st.version({pid!r})  # connect and migrate before the barrier
print("ready", flush=True)
sys.stdin.readline()  # the barrier: the test writes "go" once every process is ready
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

    procs = [
        popen_python(home, ACCEPT.format(home=str(home), pid=pid, prop=prop.id, edit=k), stdin=True) for k in (1, 2, 3)
    ]
    for p in procs:  # every process is up and connected ...
        assert p.stdout.readline().strip() == "ready", p.stderr.read()
    for p in procs:  # ... then all accept at once
        p.stdin.write("go\n")
        p.stdin.flush()
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
