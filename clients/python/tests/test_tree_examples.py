"""The legged-robot examples run against a real server as a user runs them (the installed package), each
writing its PNG and its numbers: Solo-12's base balanced by the four foot forces (the six base entries of
inverse dynamics with the foot wrenches below 1e-9, standing and along the squat), and the humanoid's
momentum and energy held along the zero-gravity rollout (1e-9 relative). And the README's tree example as
written, from the repository's root, its output compared with the README's."""

import json

import pytest

from conftest import PACKAGE_ROOT, REPO
from test_readme_and_examples import fenced_blocks, run


def test_readme_tree_example_as_written(server):
    found = fenced_blocks()
    index = next(i for i, (language, text) in enumerate(found) if language == "python" and "root=" in text)
    code, expected = found[index][1], found[index + 1][1].strip()
    assert run(["-c", code], server, cwd=REPO).strip() == expected


def run_example(name, server, tmp_path) -> dict:
    out = run([str(PACKAGE_ROOT / "examples" / f"{name}.py"), "--server", server.target, "--out", str(tmp_path)],
              server, cwd=tmp_path)
    png = tmp_path / f"{name}.png"
    assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", out
    assert str(png) in out
    print(out)
    return json.loads((tmp_path / f"{name}.json").read_text())


def test_solo12_standing(server, tmp_path):
    r = run_example("solo12_standing", server, tmp_path)
    weight = r["weight"]
    assert r["static_balance_residual"] < 1e-9 and r["squat_balance_residual"] < 1e-9
    # standing still: the four vertical forces carry the weight, symmetric robot: a quarter each
    assert sum(f[2] for f in r["static_foot_forces"]) == pytest.approx(weight, rel=1e-12)
    for f in r["static_foot_forces"]:
        assert f[2] == pytest.approx(weight / 4, rel=1e-6) and abs(f[0]) < 1e-9 and abs(f[1]) < 1e-9
    assert r["ik_error"] < 1e-12 and r["joint_check"] < 1e-9
    # the joints' velocities and accelerations (the service's Jacobians and (dJ/dt) qd) against central
    # differences of the Newton solution, h = 10 ms: O(h^2)
    assert r["velocity_check"] < 1e-3 and r["acceleration_check"] < 1e-2 and r["newton_check"] < 1e-2


def test_humanoid_zero_g(server, tmp_path):
    r = run_example("humanoid_zero_g", server, tmp_path)
    for quantity in ("linear", "angular", "energy"):
        assert r["drift"]["0.001"][quantity] < 1e-9, quantity
    assert 8 < r["energy_ratio"] < 32  # RK4: fourth order
    assert r["com_check"] < 1e-9 and r["linear_check"] < 1e-12
