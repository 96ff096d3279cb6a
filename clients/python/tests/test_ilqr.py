"""The iLQR example (examples/ilqr_panda.py) against a real denocd: it reaches the target with the hand
within 1 cm, in at most its 60 iterations, with every torque within its budget, and writes
its plot."""

import json

from conftest import PACKAGE_ROOT
from test_readme_and_examples import run


def test_ilqr_reaches_the_target(server, tmp_path):
    out = run([str(PACKAGE_ROOT / "examples" / "ilqr_panda.py"), "--server", server.target, "--out",
               str(tmp_path)], server, cwd=tmp_path)
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["final_distance_m"] < 0.01, summary
    assert 1 <= summary["iterations"] <= 60, summary
    assert summary["final_cost"] < summary["initial_cost"], summary
    assert summary["max_abs_torque_over_limit"] <= 1.0, summary
    png = tmp_path / "ilqr_panda.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
