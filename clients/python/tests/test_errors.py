"""Error mapping: status codes become typed exceptions carrying the server's message."""

import grpc
import numpy as np
import pytest

import denoc
from conftest import PANDA_HAND, PANDA_TIP

UNKNOWN = "ab" * 32


@pytest.fixture(scope="module")
def arm(server):
    with denoc.Client(server.target, timeout=30) as c:
        return c.find_model("stanford_arm")


def test_unknown_model(client):
    with pytest.raises(denoc.NotFoundError) as e:
        client.inverse_dynamics(UNKNOWN, np.zeros(6), np.zeros(6), np.zeros(6))
    assert e.value.code == grpc.StatusCode.NOT_FOUND
    assert e.value.message == f"model_id {UNKNOWN} is not registered"
    assert isinstance(e.value, denoc.DenocError) and isinstance(e.value, LookupError)
    for call in (lambda: client.get_model(UNKNOWN), lambda: client.delete_model(UNKNOWN),
                 lambda: client.forward_dynamics(UNKNOWN, np.zeros(6)),
                 lambda: client.full_factor(UNKNOWN, np.zeros(6)),
                 lambda: list(client.simulate(UNKNOWN, np.zeros(6), t_end=1.0))):
        with pytest.raises(denoc.NotFoundError, match=UNKNOWN):
            call()


def test_malformed_model_id(client):
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.get_model("not-an-id")
    assert "model_id" in e.value.message


def test_bad_shapes(client, arm):
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.inverse_dynamics(arm, np.zeros((4, 5)), np.zeros((4, 5)), np.zeros((4, 5)))
    assert e.value.message == "dof is 5, expected the model's dof = 6"
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.inverse_dynamics(arm, np.zeros((4, 6)), np.zeros((3, 6)), np.zeros((4, 6)))
    assert e.value.message == "qd has 18 values, expected count*dof = 24"
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.forward_dynamics(arm, np.zeros(6), np.zeros(6), np.zeros(7))
    assert "tau has 7 values" in e.value.message
    q = np.zeros((2, 6))
    q[1, 4] = np.nan
    with pytest.raises(denoc.InvalidArgumentError, match=r"q\[10\] \(state 1, column 4\) is nan"):
        client.inverse_dynamics(arm, q)
    with pytest.raises(denoc.InvalidArgumentError, match="expected a 1-D array"):  # checked by the client
        client.inverse_dynamics(arm, np.zeros((2, 3, 6)))
    with pytest.raises(ValueError):  # InvalidArgumentError is a ValueError too
        client.forward_dynamics(arm, np.zeros(6), route="gauss")


def test_bad_urdf(client):
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.register_urdf("<robot name='broken'><link name='a'></robot>")
    assert e.value.code == grpc.StatusCode.INVALID_ARGUMENT and e.value.message
    text = PANDA_HAND.read_text().replace('<mass value="4.970684"/>', '<mass value="-4.970684"/>', 1)
    assert text != PANDA_HAND.read_text()
    with pytest.raises(denoc.InvalidArgumentError) as e:
        client.register_urdf(text, tip_link=PANDA_TIP)
    assert e.value.message.startswith("invalid model:") and "mass" in e.value.message
    assert str(e.value) == f"INVALID_ARGUMENT: {e.value.message}"
    # several leaves without tip_link: the whole tree (docs/trees.md), the two fingers on the hand's link
    tree = client.register_urdf(PANDA_HAND)
    assert (tree.nq, tree.nv, tree.nu, tree.root) == (9, 9, 9, "fixed")
    assert [j.parent for j in tree.joints][-2:] == [6, 6] and tree.joint_names[-2:] == ["panda_finger_joint1",
                                                                                        "panda_finger_joint2"]


def test_limits_and_preconditions(client, arm):
    # the server refuses a batch above --max-states (the raw stub); the client splits it (docs/clients.md)
    from denoc.v1 import dynamics_pb2 as pb
    zeros = [0.0] * (20001 * 6)
    with pytest.raises(grpc.RpcError) as raw:
        client._stub.InverseDynamics(pb.InverseDynamicsRequest(model_id=arm.model_id, count=20001, dof=6, q=zeros,
                                                               qd=zeros, qdd=zeros), timeout=30)
    assert raw.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED and "max-states" in raw.value.details()
    assert client.inverse_dynamics(arm, np.zeros((20001, 6))).shape == (20001, 6)
    with pytest.raises(denoc.FailedPreconditionError):
        client.delete_model(arm)
    with pytest.raises(denoc.InvalidArgumentError, match="t_end"):
        list(client.simulate(arm, np.zeros(6), t_end=-1.0))


def test_stream_error_ends_session(client, arm):
    with client.stream() as s:
        s.inverse_dynamics(arm, np.zeros(6))
        with pytest.raises(denoc.InvalidArgumentError) as e:
            s.inverse_dynamics(arm, np.zeros(5))
        assert e.value.message.startswith("message 1:")  # messages are numbered from 0


def test_unavailable_after_bounded_retries(tmp_path):
    import socket
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with denoc.Client(f"127.0.0.1:{port}", timeout=5, retries=2, retry_backoff=0.01) as c:
        with pytest.raises(denoc.UnavailableError) as e:
            c.list_models()
        assert e.value.code == grpc.StatusCode.UNAVAILABLE and isinstance(e.value, ConnectionError)


def test_deadline(client, arm):
    with pytest.raises(denoc.DeadlineExceededError):
        # a long run (5 M steps) in small batches, so that the server notices the cancellation soon
        list(client.simulate(arm, np.zeros(6), t_end=5.0, integrator="rk4", step=1e-6, dt_out=0.01,
                             batch_size=1, timeout=0.2))


def test_tls_options_read_paths_and_bytes(tmp_path):
    # the server in these tests listens without TLS: a TLS client cannot connect, whichever way the
    # certificate is given, and says so with UNAVAILABLE after its retries
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    pem = tmp_path / "ca.pem"
    pem.write_bytes(b"-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n")
    for root in (pem, str(pem), pem.read_bytes()):
        with denoc.Client(f"127.0.0.1:{port}", timeout=2, retries=0, root_certificates=root) as c:
            with pytest.raises(denoc.UnavailableError):
                c.list_models()
