"""Trees through the client against the C++ core computed in-process by the `denoc` command-line tool
(`denoc id|fd|factor MODEL --root floating|planar --states FILE --wrench LINK:w[:local] --format json`),
element by element to RTOL: Solo-12 and the simple humanoid under a floating and a planar root (and Solo-12's
fixed-root tree), inverse dynamics with and without external wrenches on named links, forward dynamics
with them (the articulated-body route) and without (both tree routes), and the full factor (I, U, D,
log det, I^-1)."""

import zlib

import numpy as np
import pytest

import denoc
from conftest import MODELS, close, run_cli

SOLO = MODELS / "trees" / "solo12.urdf"
HUMANOID = MODELS / "trees" / "simple_humanoid.urdf"
COUNT = 6
CASES = [(SOLO, "floating"), (SOLO, "planar"), (SOLO, "fixed"), (HUMANOID, "floating"), (HUMANOID, "planar")]


def as_json(**arrays) -> list:
    names = list(arrays)
    return [{name: [float(x) for x in arrays[name][k]] for name in names} for k in range(COUNT)]


def wrench_option(link: str, wrench, reference: str) -> str:
    return f"--wrench={link}:{','.join(repr(float(x)) for x in wrench)}:{reference}"


@pytest.fixture(scope="module", params=CASES, ids=[f"{p.stem}-{r}" for p, r in CASES])
def case(request, server):
    path, root = request.param
    with denoc.Client(server.target, timeout=60) as c:
        model = c.register_urdf(path, root=root)
    rng = np.random.default_rng(zlib.crc32(f"{path.stem} {root}".encode()))
    q = denoc.random_configuration(model, rng, COUNT)
    qd, qdd, tau = (rng.uniform(-1, 1, (COUNT, model.nv)) for _ in range(3))
    # two wrenches on named frames: a link far down the tree in world axes, the root link (or, for a fixed
    # root, the first link) in its own axes; the same for every state (the CLI's --wrench)
    links = [model.link_names[-1], model.frames[model.nu + 1].name if root != "fixed" else model.link_names[0]]
    wrenches = [(links[0], rng.uniform(-3, 3, 6), "world"), (links[1], rng.uniform(-3, 3, 6), "local")]
    return path, root, model, q, qd, qdd, tau, wrenches


def cli(command, case, tmp_path, states, *extra):
    path, root = case[0], case[1]
    return run_cli(command, path, states, tmp_path, "--root", root, *extra)


def test_inverse_dynamics(client, case, tmp_path):
    path, root, model, q, qd, qdd, tau, wrenches = case
    ref = cli("id", case, tmp_path, as_json(q=q, qd=qd, qdd=qdd))
    close(client.inverse_dynamics(model, q, qd, qdd), [s["tau"] for s in ref], f"tau {path.stem} {root}")
    options = [wrench_option(*w) for w in wrenches]
    ref = cli("id", case, tmp_path, as_json(q=q, qd=qd, qdd=qdd), *options)
    got = client.inverse_dynamics(model, q, qd, qdd, wrenches=wrenches)
    close(got, [s["tau"] for s in ref], f"tau with wrenches {path.stem} {root}")
    with client.stream() as s:
        close(np.array([s.inverse_dynamics(model, q[k], qd[k], qdd[k], wrenches=wrenches) for k in range(COUNT)]),
              [r["tau"] for r in ref], "the stream's tau with wrenches")


def test_forward_dynamics(client, case, tmp_path):
    path, root, model, q, qd, qdd, tau, wrenches = case
    for route in ("saha", "cholesky"):
        ref = cli("fd", case, tmp_path, as_json(q=q, qd=qd, tau=tau), "--route", route)
        close(client.forward_dynamics(model, q, qd, tau, route=route), [s["qdd"] for s in ref], f"qdd {route}")
    options = [wrench_option(*w) for w in wrenches]
    ref = cli("fd", case, tmp_path, as_json(q=q, qd=qd, tau=tau), *options)
    close(client.forward_dynamics(model, q, qd, tau, wrenches=wrenches), [s["qdd"] for s in ref],
          f"qdd with wrenches {path.stem} {root}")
    with client.stream() as s:
        close(np.array([s.forward_dynamics(model, q[k], qd[k], tau[k], wrenches=wrenches) for k in range(COUNT)]),
              [r["qdd"] for r in ref], "the stream's qdd with wrenches")


def test_full_factor(client, case, tmp_path):
    path, root, model, q, qd, qdd, tau, wrenches = case
    ref = cli("factor", case, tmp_path, as_json(q=q), "--inverse")
    f = client.full_factor(model, q, inverse=True)
    n = model.nv
    assert f.inertia.shape == (COUNT, n, n) and f.d.shape == (COUNT, n)
    close(f.inertia, [s["I"] for s in ref], "I")
    close(f.u, [s["U"] for s in ref], "U")
    close(f.d, [s["D"] for s in ref], "D")
    close(f.log_det, [s["log_det"] for s in ref], "log det")
    close(f.inverse, [s["I_inv"] for s in ref], "I^-1")
