"""Streams: Simulate batches received in order and complete; the control-loop stream in order."""

import numpy as np


def test_simulation_in_order_and_complete(client):
    arm = client.find_model("planar_3r")
    q0 = np.array([0.3, -0.2, 0.1])
    batches = list(client.simulate(arm, q0, t_end=2.0, dt_out=0.01, batch_size=7, rtol=1e-10, atol=1e-12))
    t = np.concatenate([b.t for b in batches])
    np.testing.assert_allclose(t, np.arange(201) * 0.01, rtol=0, atol=1e-12)  # every sample, in order
    assert np.all(np.diff(t) > 0)
    assert [len(b.t) for b in batches] == [7] * 28 + [5]
    assert [b.last for b in batches] == [False] * 28 + [True]
    assert batches[-1].steps > 0 and batches[-1].evaluations > 0
    for b in batches:
        assert b.q.shape == (len(b.t), 3) and b.qd.shape == (len(b.t), 3) and b.energy.shape == b.t.shape
    np.testing.assert_array_equal(batches[0].q[0], q0)
    energy = np.concatenate([b.energy for b in batches])
    assert np.max(np.abs(energy - energy[0])) < 1e-6  # free fall, no damping
    whole = client.simulate_all(arm, q0, t_end=2.0, dt_out=0.01, batch_size=7, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(whole.q, np.concatenate([b.q for b in batches]))
    assert whole.batches == 29


def test_simulation_stopped_early(client):
    arm = client.find_model("stanford_arm")
    gen = client.simulate(arm, np.zeros(6), t_end=10.0, dt_out=0.001, batch_size=10)
    first = next(gen)
    assert len(first.t) == 10 and not first.last
    gen.close()  # cancels the run on the server
    assert client.inverse_dynamics(arm, np.zeros(6)).shape == (6,)  # the client still works


def test_control_loop_stream_in_order(client):
    arm = client.find_model("stanford_arm")
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-1, 1, (50, 6)) for _ in range(3))
    tau = client.inverse_dynamics(arm, q, qd, qdd)
    qdd_back = client.forward_dynamics(arm, q, qd, tau, route="cholesky")
    with client.stream() as s:
        for k in range(50):
            np.testing.assert_array_equal(s.inverse_dynamics(arm, q[k], qd[k], qdd[k]), tau[k])
            np.testing.assert_array_equal(s.forward_dynamics(arm, q[k], qd[k], tau[k], route="cholesky"),
                                          qdd_back[k])
        assert s.sent == 100
