"""Re-registration: a model registered on one server, the client then reaching a second server with an empty
store: calls succeed after a transparent re-registration. Retries of idempotent calls on UNAVAILABLE."""

import threading

import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP


def test_same_client_second_server_at_same_address(start_server):
    first = start_server(store="store-a")
    with denoc.Client(first.target, timeout=30, retries=8, retry_backoff=0.05) as c:
        panda = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        q = np.linspace(-0.5, 0.5, 7 * 10).reshape(10, 7)
        tau = c.inverse_dynamics(panda, q, q, q)
        first.stop()
        # a replacement on the same address with an empty store: the model is unknown there
        second = start_server("--examples", "false", store="store-b", port=first.port)
        assert panda.model_id not in [m.model_id for m in c.list_models()]
        np.testing.assert_array_equal(c.inverse_dynamics(panda, q, q, q), tau)  # re-registered, retried
        info = c.get_model(panda)
        assert info.model_id == panda.model_id and info.source == "urdf"
        assert any(p.name == f"{panda.model_id}.pb" for p in second.records_dir.iterdir())


def test_other_client_with_model_sources(start_server):
    a = start_server(store="store-a")
    b = start_server("--examples", "false", store="store-b")
    with denoc.Client(a.target, timeout=30) as ca:
        panda = ca.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        q = np.full((3, 7), 0.3)
        tau = ca.inverse_dynamics(panda, q, q, q)
        qdd = ca.forward_dynamics(panda, q, q, tau)
        factor = ca.full_factor(panda, q)
        sources = ca.model_sources
    assert list(sources) == [panda.model_id]
    # every kind of call re-registers once, then succeeds
    for call in ("id", "fd", "factor", "simulate", "stream"):
        with denoc.Client(b.target, timeout=30, model_sources=sources) as cb:
            if call != "stream":  # the control-loop stream does not re-register
                # b loses it (its record removed by hand: not deleted, so no tombstone)
                (b.records_dir / f"{panda.model_id}.pb").unlink(missing_ok=True)
            if call == "id":
                np.testing.assert_array_equal(cb.inverse_dynamics(panda, q, q, q), tau)
            elif call == "fd":
                np.testing.assert_allclose(cb.forward_dynamics(panda, q, q, tau), qdd, rtol=0, atol=0)
            elif call == "factor":
                np.testing.assert_array_equal(cb.full_factor(panda, q).inertia, factor.inertia)
            elif call == "simulate":
                batches = list(cb.simulate(panda, q[0], t_end=0.05, dt_out=0.01))
                assert batches[-1].last and sum(len(x.t) for x in batches) == 6
            else:
                with cb.stream() as s:
                    np.testing.assert_array_equal(s.inverse_dynamics(panda, q[0], q[0], q[0]), tau[0])


def test_unknown_to_the_client_is_not_found(start_server):
    a = start_server()
    with denoc.Client(a.target, timeout=30) as c:
        panda = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        c.delete_model(panda)  # the client forgets the source too
        with pytest.raises(denoc.NotFoundError):
            c.inverse_dynamics(panda, np.zeros(7))


def test_a_model_deleted_by_another_client_is_not_registered_again(start_server):
    # two replicas sharing one store: deleted on b by another client, the holder of the source calls a
    a = start_server(store="shared")
    b = start_server(store="shared")
    with denoc.Client(a.target, timeout=30) as holder, denoc.Client(b.target, timeout=30) as other:
        panda = holder.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        q = np.zeros(7)
        holder.inverse_dynamics(panda, q, q, q)  # a holds it in memory
        other.delete_model(panda)
        for call in ("id", "simulate"):
            with pytest.raises(denoc.NotFoundError) as e:
                if call == "id":
                    holder.inverse_dynamics(panda, q, q, q)
                else:
                    list(holder.simulate(panda, q, t_end=0.05, dt_out=0.01))
            assert denoc.was_deleted(e.value.message), e.value.message
            assert not (a.records_dir / f"{panda.model_id}.pb").exists(), f"{call} registered it again"
        assert panda.model_id not in holder.model_sources
        # registered explicitly: served again
        assert holder.register_urdf(PANDA_HAND, tip_link=PANDA_TIP).model_id == panda.model_id
        holder.inverse_dynamics(panda, q, q, q)


def test_retries_on_unavailable_reach_a_server_that_comes_back(start_server):
    first = start_server()
    port = first.port
    with denoc.Client(first.target, timeout=30, retries=10, retry_backoff=0.05) as c:
        arm = c.find_model("stanford_arm")
        first.stop()
        timer = threading.Timer(0.5, lambda: start_server(store="store-2", port=port))
        timer.start()
        try:
            tau = c.inverse_dynamics(arm, np.zeros(6))  # UNAVAILABLE until the second server listens
        finally:
            timer.join()
        assert tau.shape == (6,) and tau[2] > 0
