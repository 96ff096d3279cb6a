"""GetServerInfo against a denocd started with chosen limits (the answer must be the flags), the default
deadline, batches above the server's --max-states split by the client and joined in order (equal to
one-state calls and to the core in-process), and lookup by name that refuses ambiguity."""

import warnings

import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP, close, run_cli


def test_server_info_is_the_flags(start_server):
    server = start_server("--max-dof", "12", "--max-states", "7", "--max-message-bytes", "3000000",
                          "--max-streams", "5")
    with denoc.Client(server.target) as c:
        assert c.timeout == denoc.DEFAULT_TIMEOUT == 30.0
        info = c.get_server_info()
        assert info.version == denoc.__version__
        assert info.proto_package == "denoc.v1"
        assert (info.max_dof, info.max_states, info.max_streams) == (12, 7, 5)
        assert info.max_receive_message_bytes == info.max_send_message_bytes == 3000000
        assert info.tokens_required is False
        assert c.max_states() == 7


def test_server_info_needs_a_token_when_tokens_are_on(start_server, tmp_path):
    tokens = tmp_path / "tokens"
    tokens.write_text("alice token-of-alice\n")
    server = start_server("--token-file", str(tokens))
    with denoc.Client(server.target) as c, pytest.raises(denoc.UnauthenticatedError):
        c.get_server_info()
    with denoc.Client(server.target, token="token-of-alice") as c:
        assert c.get_server_info().tokens_required is True


def test_batches_above_max_states_are_split(start_server, tmp_path):
    server = start_server("--max-states", "4")
    rng = np.random.default_rng(7)
    count = 11  # 4 + 4 + 3
    with denoc.Client(server.target) as c:
        panda = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        n = panda.dof
        q, qd = rng.uniform(-1.5, 1.5, (count, n)), rng.uniform(-2, 2, (count, n))
        qdd, tau = rng.uniform(-5, 5, (count, n)), rng.uniform(-20, 20, (count, n))
        wrench = rng.uniform(-3, 3, (count, 6))

        got = c.inverse_dynamics(panda, q, qd, qdd)
        states = [{"q": list(map(float, q[k])), "qd": list(map(float, qd[k])), "qdd": list(map(float, qdd[k]))}
                  for k in range(count)]
        core = np.array([r["tau"] for r in run_cli("id", PANDA_HAND, states, tmp_path,
                                                   "--tip-link", PANDA_TIP)])
        close(got, core, "split inverse dynamics vs the core")

        with_wrench = c.inverse_dynamics(panda, q, qd, qdd, tip_wrench=wrench)
        one_by_one = np.array([c.inverse_dynamics(panda, q[k], qd[k], qdd[k], tip_wrench=wrench[k])
                               for k in range(count)])
        close(with_wrench, one_by_one, "split inverse dynamics with wrenches vs one-state calls")

        qdd_fd = c.forward_dynamics(panda, q, qd, tau, route="fixman")
        close(qdd_fd, np.array([c.forward_dynamics(panda, q[k], qd[k], tau[k], route="fixman")
                                for k in range(count)]), "split forward dynamics vs one-state calls")
        # forward dynamics inverts inverse dynamics: tau = ID(q, qd, FD(q, qd, tau))
        # (to the conditioning of I(q): 1e-9 relative)
        np.testing.assert_allclose(c.inverse_dynamics(panda, q, qd, qdd_fd), tau, rtol=0, atol=1e-9 * 20)

        f = c.full_factor(panda, q, qd, convective=True, bias=True, gravity_torque=True, inverse=True)
        assert f.inertia.shape == (count, n, n) and f.log_det.shape == (count,)
        for k in range(count):
            one = c.full_factor(panda, q[k], qd[k], convective=True, bias=True, gravity_torque=True,
                                inverse=True)
            for name in ("inertia", "u", "d", "convective", "bias", "gravity_torque", "inverse"):
                close(getattr(f, name)[k], getattr(one, name), f"split full factor {name}, state {k}")
            assert abs(f.log_det[k] - one.log_det) <= 1e-12 * max(1.0, abs(one.log_det))
        # the deprecated spelling still works, with a warning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old = c.full_factor(panda, q[:2], gravity_vector=True)
            close(old.gravity_vector, f.gravity_torque[:2], "deprecated gravity_vector")
        assert any(issubclass(w.category, DeprecationWarning) for w in caught)


def test_find_model_refuses_ambiguity(start_server):
    server = start_server("--examples=false")
    doc = {"format": "denoc-dh/1", "name": "twin", "angle_unit": "rad", "links": [
        {"type": "revolute", "a": 0.5, "b": 0.0, "alpha": 0.0, "theta": 0.0, "mass": 1.0, "com": [-0.25, 0, 0],
         "inertia": {"principal": [0.001, 0.02, 0.02]}}]}
    with denoc.Client(server.target) as c:
        a = c.register_dh(doc, gravity=[0, 0, -9.81])
        b = c.register_dh(doc, gravity=[0, -9.81, 0])
        assert a.model_id != b.model_id
        with pytest.raises(denoc.FailedPreconditionError) as e:
            c.find_model("twin")
        assert a.model_id in e.value.message and b.model_id in e.value.message
        with pytest.raises(denoc.NotFoundError):
            c.find_model("nobody")
        c.delete_model(b)
        assert c.find_model("twin").model_id == a.model_id
