"""States per second of inverse_dynamics on a 1000-state batch (printed; no timing assertion)."""

import time

import numpy as np

from conftest import PANDA_HAND, PANDA_TIP


def test_inverse_dynamics_states_per_second(client, capsys):
    panda = client.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1, 1, (1000, 7)) for _ in range(3))
    client.inverse_dynamics(panda, q, qd, qdd)  # warm up (connection, workspaces)
    times = []
    for _ in range(20):
        start = time.perf_counter()
        tau = client.inverse_dynamics(panda, q, qd, qdd)
        times.append(time.perf_counter() - start)
    assert tau.shape == (1000, 7)
    best, median = min(times), float(np.median(times))
    with capsys.disabled():
        print(f"\n[denoc python] inverse_dynamics, 1000-state batch of the 7-DOF Panda, 20 calls: "
              f"median {1000 / median:,.0f} states/s ({median * 1e3:.2f} ms/call), "
              f"best {1000 / best:,.0f} states/s")
