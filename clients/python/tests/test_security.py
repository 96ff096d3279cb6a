"""Transport security and access control against real denocd processes started with TLS, mutual TLS and a
token file, with certificates made by openssl at test time (certs.py): answers over TLS equal the C++ core
in-process (the denoc CLI); the server-name override is what lets a certificate for localhost pass at
127.0.0.1; a missing or foreign client certificate is UnavailableError, a missing or unknown token
UnauthenticatedError, a deletion by another token PermissionDeniedError."""

import os
import re
import subprocess
import sys

import grpc
import numpy as np
import pytest

import denoc
from certs import make_certs
from conftest import PACKAGE_ROOT, PANDA_HAND, PANDA_TIP, REPO, _executable, close, run_cli

STANFORD = REPO / "examples" / "models" / "stanford_arm.json"
TOKENS = "# test tokens\nalice token-of-alice\nbob token-of-bob\n"


def as_json(**arrays):
    count = len(next(iter(arrays.values())))
    return [{k: [float(x) for x in v[i]] for k, v in arrays.items()} for i in range(count)]


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    return make_certs(tmp_path_factory.mktemp("certs"))


def tls_args(certs, cert=None, key=None):
    return ("--tls-cert", str(cert or certs.server_cert), "--tls-key", str(key or certs.server_key))


def connect(target, certs, **kwargs):
    """A TLS client trusting the test CA, with one quick retry and a bounded deadline."""
    kwargs.setdefault("root_certificates", certs.ca)
    return denoc.Client(target, timeout=20, retries=1, retry_backoff=0.02, **kwargs)


def mutual(target, certs, token=None):
    return connect(target, certs, certificate_chain=certs.client_cert, private_key=certs.client_key, token=token)


@pytest.fixture
def token_server(start_server, certs, tmp_path):
    """mutual TLS and two principals, alice and bob"""
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    return start_server(*tls_args(certs), "--tls-client-ca", str(certs.ca), "--token-file", str(tokens))


# ---------------------------------------------------------------------------------------------------- TLS


def test_over_tls_every_call_equals_the_core(start_server, certs, tmp_path):
    server = start_server(*tls_args(certs))
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-2, 2, (20, 7)), rng.uniform(-1, 1, (20, 7))
    qdd, tau = rng.uniform(-3, 3, (20, 7)), rng.uniform(-20, 20, (20, 7))
    with connect(server.target, certs) as c:
        panda = c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        ref = run_cli("id", PANDA_HAND, as_json(q=q, qd=qd, qdd=qdd), tmp_path, "--tip-link", PANDA_TIP)
        close(c.inverse_dynamics(panda, q, qd, qdd), [s["tau"] for s in ref], "tau")
        ref = run_cli("fd", PANDA_HAND, as_json(q=q, qd=qd, tau=tau), tmp_path, "--tip-link", PANDA_TIP)
        close(c.forward_dynamics(panda, q, qd, tau), [s["qdd"] for s in ref], "qdd")
        ref = run_cli("factor", PANDA_HAND, as_json(q=q), tmp_path, "--tip-link", PANDA_TIP, "--inverse")
        factor = c.full_factor(panda, q, inverse=True)
        close(factor.inertia, [s["I"] for s in ref], "I")
        close(factor.log_det, [s["log_det"] for s in ref], "log det I")

        # a Stream session over the same channel
        with c.stream() as s:
            for k in range(4):
                close(s.inverse_dynamics(panda, q[k], qd[k], qdd[k]), c.inverse_dynamics(panda, q[k], qd[k], qdd[k]),
                      f"streamed tau {k}")

        # a streamed simulation, against the CLI's local run of the same model file
        arm = c.register_dh(STANFORD)
        q0 = [0.1, 1.2, 0.05, -0.4, 0.3, 0.2]
        run = c.simulate_all(arm, q0, t_end=0.2, dt_out=0.01)
        out = subprocess.run([_executable("DENOC_CLI"), "simulate", str(STANFORD), "--t-end", "0.2", "--dt-out", "0.01",
                              "--q0=" + ",".join(map(str, q0)), "--no-progress"],
                             capture_output=True, text=True, timeout=60, check=True).stdout
        want = np.loadtxt(out.splitlines()[1:], delimiter=",")
        close(run.t, want[:, 0], "t")
        close(run.q, want[:, 1:7], "q")
        close(run.qd, want[:, 7:13], "qd")


def test_a_tls_server_refuses_plaintext_and_an_untrusted_certificate(start_server, certs):
    server = start_server(*tls_args(certs))
    with denoc.Client(server.target, timeout=20, retries=1, retry_backoff=0.02) as plain:
        with pytest.raises(denoc.UnavailableError):
            plain.list_models()
    with connect(server.target, certs, root_certificates=certs.other_ca) as foreign:
        with pytest.raises(denoc.UnavailableError) as e:
            foreign.list_models()
        assert e.value.code == grpc.StatusCode.UNAVAILABLE and isinstance(e.value, ConnectionError)
    # the CA as PEM text or bytes instead of a path
    for pem in (certs.ca.read_text(), certs.ca.read_bytes()):
        with connect(server.target, certs, root_certificates=pem) as c:
            assert "stanford_arm" in [m.name for m in c.list_models()]


def test_server_name_override_accepts_a_certificate_for_localhost_at_127001(start_server, certs):
    server = start_server(*tls_args(certs, certs.dns_only_cert, certs.dns_only_key))  # DNS:localhost only
    with connect(server.target, certs) as c:
        with pytest.raises(denoc.UnavailableError):
            c.list_models()
    with connect(server.target, certs, server_name="localhost") as c:
        assert "stanford_arm" in [m.name for m in c.list_models()]
    with connect(server.target, certs, server_name="denoc.invalid") as c:
        with pytest.raises(denoc.UnavailableError):
            c.list_models()


# --------------------------------------------------------------------------------------------- mutual TLS


def test_mutual_tls_needs_a_client_certificate_from_the_servers_ca(start_server, certs, tmp_path):
    server = start_server(*tls_args(certs), "--tls-client-ca", str(certs.ca))
    rng = np.random.default_rng(8)
    q, qd, qdd = rng.uniform(-2, 2, (4, 6)), rng.uniform(-1, 1, (4, 6)), rng.uniform(-3, 3, (4, 6))
    with mutual(server.target, certs) as c:
        arm = c.register_dh(STANFORD)
        ref = run_cli("id", STANFORD, as_json(q=q, qd=qd, qdd=qdd), tmp_path)
        close(c.inverse_dynamics(arm, q, qd, qdd), [s["tau"] for s in ref], "tau")
    with connect(server.target, certs) as none:  # no client certificate
        with pytest.raises(denoc.UnavailableError):
            none.list_models()
        with pytest.raises(denoc.UnavailableError):
            none.inverse_dynamics(arm, q, qd, qdd)
    with connect(server.target, certs, certificate_chain=certs.other_cert, private_key=certs.other_key) as other:
        with pytest.raises(denoc.UnavailableError):
            other.list_models()
    with pytest.raises(denoc.InvalidArgumentError, match="certificate_chain and private_key"):
        connect(server.target, certs, certificate_chain=certs.client_cert)


# ------------------------------------------------------------------------------------------------- tokens


def test_without_a_known_token_every_call_is_unauthenticated(token_server, certs):
    with mutual(token_server.target, certs, token="token-of-alice") as alice:
        panda = alice.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
    z = np.zeros(7)
    for token in (None, "token-of-mallory", "token-of-alic"):
        with mutual(token_server.target, certs, token=token) as c:
            calls = {
                "list": c.list_models,
                "register": lambda: c.register_urdf(PANDA_HAND, tip_link=PANDA_TIP),
                "get": lambda: c.get_model(panda),
                "id": lambda: c.inverse_dynamics(panda, z, z, z),
                "fd": lambda: c.forward_dynamics(panda, z, z, z),
                "factor": lambda: c.full_factor(panda, z),
                "simulate": lambda: c.simulate_all(panda, z, t_end=0.05),
                "delete": lambda: c.delete_model(panda),
            }
            for name, call in calls.items():
                with pytest.raises(denoc.UnauthenticatedError) as e:
                    call()
                assert e.value.code == grpc.StatusCode.UNAUTHENTICATED, (token, name)
                assert isinstance(e.value, denoc.DenocError) and e.value.message, (token, name)
                assert str(e.value).startswith("UNAUTHENTICATED: "), (token, name)
                assert token is None or token not in e.value.message, "the token was echoed"
            with c.stream() as s:
                with pytest.raises(denoc.UnauthenticatedError):
                    s.inverse_dynamics(panda, z, z, z)
    with mutual(token_server.target, certs, token="token-of-alice") as alice:
        assert alice.get_model(panda).model_id == panda.model_id  # still there


def test_models_are_shared_but_only_the_owner_deletes(token_server, certs, tmp_path):
    rng = np.random.default_rng(9)
    q, qd, qdd = rng.uniform(-2, 2, (5, 7)), rng.uniform(-1, 1, (5, 7)), rng.uniform(-3, 3, (5, 7))
    with mutual(token_server.target, certs, token="token-of-alice") as alice, \
            mutual(token_server.target, certs, token="token-of-bob") as bob:
        panda = alice.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        assert panda.created is True
        ref = run_cli("id", PANDA_HAND, as_json(q=q, qd=qd, qdd=qdd), tmp_path, "--tip-link", PANDA_TIP)
        close(bob.inverse_dynamics(panda.model_id, q, qd, qdd), [s["tau"] for s in ref], "tau for bob")
        again = bob.register_urdf(PANDA_HAND, tip_link=PANDA_TIP)
        assert again.model_id == panda.model_id and again.created is False

        with pytest.raises(denoc.PermissionDeniedError) as e:
            bob.delete_model(panda)
        assert e.value.code == grpc.StatusCode.PERMISSION_DENIED
        assert isinstance(e.value, PermissionError)
        assert "another token" in e.value.message, e.value.message
        assert panda.model_id in bob.model_sources  # refused: bob keeps the source
        assert alice.get_model(panda).model_id == panda.model_id

        alice.delete_model(panda)
        assert panda.model_id not in alice.model_sources
        with pytest.raises(denoc.NotFoundError):
            alice.get_model(panda)


@pytest.mark.parametrize("token", ["two words", "line\nbreak", "tab\t", "nul\0x", "caf\u00e9"])
def test_a_token_must_be_visible_ascii(token, certs):
    with pytest.raises(denoc.InvalidArgumentError, match="token") as e:
        denoc.Client("127.0.0.1:1", token=token)
    assert token not in e.value.message


def test_readme_tls_example_as_written(start_server, certs, tmp_path):
    """The README's "TLS and tokens" block, run in the directory of the certificates against a server whose
    certificate names localhost only, with mutual TLS and tokens."""
    text = (PACKAGE_ROOT / "README.md").read_text()
    section = text[text.index("## TLS and tokens"):]
    code = re.search(r"^```python\n(.*?)^```$", section, flags=re.M | re.S).group(1)
    tokens = tmp_path / "tokens"
    tokens.write_text(TOKENS)
    server = start_server(*tls_args(certs, certs.dns_only_cert, certs.dns_only_key), "--tls-client-ca", str(certs.ca),
                          "--token-file", str(tokens))
    env = dict(os.environ, DENOC_SERVER=server.target, DENOC_TOKEN="token-of-bob")  # the installed package
    result = subprocess.run([sys.executable, "-c", code], cwd=certs.ca.parent, env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert "stanford_arm" in result.stdout
    env["DENOC_TOKEN"] = "token-of-mallory"
    result = subprocess.run([sys.executable, "-c", code], cwd=certs.ca.parent, env=env, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode != 0 and "UnauthenticatedError" in result.stderr, result.stderr
