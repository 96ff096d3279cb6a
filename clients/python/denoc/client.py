"""The denoc client: numpy arrays in and out over the ``denoc.v1.Dynamics`` gRPC service."""

from __future__ import annotations

import json
import math
import os
import queue
import threading
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

import grpc
import numpy as np

from . import errors
from .v1 import dynamics_pb2 as pb
from .v1 import dynamics_pb2_grpc as pb_grpc

ArrayLike = Any
ModelRef = Union[str, "ModelInfo"]
PathOrBytes = Union[str, bytes, os.PathLike, None]

_ROUTES = {"saha": pb.FORWARD_ROUTE_SAHA, "fixman": pb.FORWARD_ROUTE_FIXMAN,
           "cholesky": pb.FORWARD_ROUTE_CHOLESKY}
_INTEGRATORS = {"dopri5": pb.INTEGRATOR_DOPRI5, "rk4": pb.INTEGRATOR_RK4}
_SCHEMES = {"rk4": pb.STEP_SCHEME_RK4, "semi_implicit_euler": pb.STEP_SCHEME_SEMI_IMPLICIT_EULER}
_REFERENCES = {"base": pb.REFERENCE_FRAME_BASE, "local": pb.REFERENCE_FRAME_LOCAL}
_TASK_ROWS = {"full": (pb.TASK_ROWS_FULL, 6), "linear": (pb.TASK_ROWS_LINEAR, 3),
              "angular": (pb.TASK_ROWS_ANGULAR, 3)}
_JOINT_TYPES = {pb.JOINT_TYPE_REVOLUTE: "revolute", pb.JOINT_TYPE_PRISMATIC: "prismatic"}
_DEG = math.pi / 180.0  # the same constant as the C++ parser of denoc-dh/1 files
DEFAULT_TIMEOUT = 30.0  # s: the default deadline of a call, the same in every denoc client


# ---------------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class ModelInfo:
    """Description of a registered model (``denoc.v1.ModelInfo``)."""

    model_id: str
    name: str
    dof: int
    joint_names: list
    link_names: list
    joint_types: list  # "revolute" or "prismatic", base to tip
    gravity: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    armature: np.ndarray
    pinned: bool
    source: str  # "urdf", "dh" or "builtin"
    created: Optional[bool] = None  # registrations only: False when the model was already there

    @classmethod
    def _from_pb(cls, m: "pb.ModelInfo", created: Optional[bool] = None) -> "ModelInfo":
        return cls(model_id=m.model_id, name=m.name, dof=m.dof, joint_names=list(m.joint_names),
                   link_names=list(m.link_names),
                   joint_types=[_JOINT_TYPES.get(t, "unspecified") for t in m.joint_types],
                   gravity=np.array([m.gravity.x, m.gravity.y, m.gravity.z]), lower=np.array(m.lower),
                   upper=np.array(m.upper), velocity_limit=np.array(m.velocity_limit),
                   effort_limit=np.array(m.effort_limit), armature=np.array(m.armature), pinned=m.pinned,
                   source=m.source, created=created)

    def __str__(self) -> str:  # the id is what callers pass around
        return self.model_id


@dataclass(frozen=True)
class FullFactor:
    """Result of :meth:`Client.full_factor`. For one state (1-D ``q``) the leading count axis is dropped:
    ``inertia`` is (dof, dof), ``d`` is (dof,) and ``log_det`` a float; for a batch they are
    (count, dof, dof), (count, dof) and (count,). Terms not requested are ``None``."""

    inertia: np.ndarray  # I(q), armature on the diagonal
    u: np.ndarray  # unit upper triangular, I = U diag(d) U^T
    d: np.ndarray
    log_det: Any
    convective: Optional[np.ndarray] = None  # C(q, qd)
    bias: Optional[np.ndarray] = None  # C(q, qd) qd + g(q)
    gravity_torque: Optional[np.ndarray] = None  # g(q)
    inverse: Optional[np.ndarray] = None  # I(q)^-1
    compute_time_ns: int = 0

    @property
    def gravity_vector(self) -> Optional[np.ndarray]:
        """Deprecated name of :attr:`gravity_torque`."""
        warnings.warn("FullFactor.gravity_vector is deprecated: use gravity_torque", DeprecationWarning,
                      stacklevel=2)
        return self.gravity_torque


@dataclass(frozen=True)
class Payload:
    """A rigid body held by the tip for one call (a tool, a grasped part): ``mass`` (kg, > 0), ``com`` (its
    mass centre in the tip frame, m) and ``inertia`` (3x3 about its mass centre, tip-frame axes, kg m^2;
    zeros: a point mass). Merged into the last link for that call only."""

    mass: float
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Any = None  # 3x3; None: a point mass

    def _pb(self) -> "pb.Payload":
        i = np.zeros((3, 3)) if self.inertia is None else np.asarray(self.inertia, dtype=np.float64)
        if i.shape != (3, 3):
            raise errors.InvalidArgumentError(f"payload.inertia: expected a 3x3 array, got shape {i.shape}")
        return pb.Payload(mass=float(self.mass), com=_vec3(self.com),
                          inertia=pb.Inertia(ixx=i[0, 0], ixy=i[0, 1], ixz=i[0, 2], iyy=i[1, 1], iyz=i[1, 2],
                                             izz=i[2, 2]))


@dataclass(frozen=True)
class Kinematics:
    """Result of :meth:`Client.kinematics`: the frame's ``rotation`` (count, 3, 3) (base <- frame) and
    ``origin`` (count, 3), and when requested ``jacobian`` (count, 6, dof) with rows [angular; linear],
    ``jdot_qd`` (count, 6), ``lambda_`` (count, r, r) and the poses of every frame ``frame_rotations``
    (count, dof + 1, 3, 3), ``frame_origins`` (count, dof + 1, 3). One state: no count axis."""

    rotation: np.ndarray
    origin: np.ndarray
    jacobian: Optional[np.ndarray] = None
    jdot_qd: Optional[np.ndarray] = None
    lambda_: Optional[np.ndarray] = None
    frame_rotations: Optional[np.ndarray] = None
    frame_origins: Optional[np.ndarray] = None
    compute_time_ns: int = 0


@dataclass(frozen=True)
class Derivatives:
    """Result of :meth:`Client.inverse_dynamics_derivatives` (``dtau_dq``, ``dtau_dqd``, ``tau``) or
    :meth:`Client.forward_dynamics_derivatives` (``dqdd_dq``, ``dqdd_dqd``, ``dqdd_dtau`` = I^-1, ``qdd``);
    matrices (count, dof, dof) with entry (i, j) = d out_i / d in_j, vectors (count, dof); the others None."""

    dtau_dq: Optional[np.ndarray] = None
    dtau_dqd: Optional[np.ndarray] = None
    tau: Optional[np.ndarray] = None
    dqdd_dq: Optional[np.ndarray] = None
    dqdd_dqd: Optional[np.ndarray] = None
    dqdd_dtau: Optional[np.ndarray] = None
    qdd: Optional[np.ndarray] = None
    compute_time_ns: int = 0


@dataclass(frozen=True)
class Rollouts:
    """Result of :meth:`Client.rollout`: ``states`` (K, T + 1, 2 dof) with x = [q, qd], and when linearized
    ``A`` (K, T, 2 dof, 2 dof) = dx_{t+1}/dx_t and ``B`` (K, T, 2 dof, dof) = dx_{t+1}/du_t. One rollout
    (a 1-D ``x0``): no K axis."""

    states: np.ndarray
    A: Optional[np.ndarray] = None
    B: Optional[np.ndarray] = None
    compute_time_ns: int = 0


def _payload(payload: Any) -> Optional["pb.Payload"]:
    if payload is None:
        return None
    if isinstance(payload, Mapping):
        payload = Payload(**payload)
    if not isinstance(payload, Payload):
        raise errors.InvalidArgumentError("payload: expected a denoc.Payload or a dict with mass, com, inertia")
    return payload._pb()


@dataclass(frozen=True)
class ServerInfo:
    """The server's version and the limits it enforces (:meth:`Client.get_server_info`)."""

    version: str  # denocd's version, e.g. "0.2.0"
    proto_package: str  # "denoc.v1"
    max_dof: int
    max_states: int  # most states per batch call (larger batches are split by the client)
    max_receive_message_bytes: int
    max_send_message_bytes: int
    max_streams: int
    tokens_required: bool


@dataclass(frozen=True)
class SimulationBatch:
    """One streamed batch of simulation samples, in time order: ``t`` (count,), ``q``/``qd``
    (count, dof), energies (count,). The last batch has ``last = True`` and the run's statistics."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    last: bool
    steps: int = 0
    rejected_steps: int = 0
    evaluations: int = 0
    compute_time_ns: int = 0


@dataclass(frozen=True)
class Trajectory:
    """A whole simulation (:meth:`Client.simulate_all`): the batches concatenated."""

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    energy: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    steps: int
    rejected_steps: int
    evaluations: int
    batches: int


# ---------------------------------------------------------------------------------------------------------
# helpers


def _model_id(model: ModelRef) -> str:
    return model.model_id if isinstance(model, ModelInfo) else str(model)


def _read_bytes(value: PathOrBytes) -> Optional[bytes]:
    """PEM material: bytes as they are, a str holding PEM text, or the path of a file."""
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str) and value.lstrip().startswith("-----BEGIN"):
        return value.encode()
    return Path(value).read_bytes()


def _check_token(token: str) -> str:
    """A bearer token travels as an HTTP/2 header value: visible ASCII only (RFC 6750 tokens are a subset)."""
    if not isinstance(token, str) or not all(0x21 <= ord(c) <= 0x7E for c in token):
        raise errors.InvalidArgumentError("token: only visible ASCII characters are allowed "
                                          "(no spaces, newlines or control characters)")
    return token


def _vec3(v: Optional[Sequence[float]]) -> Optional["pb.Vec3"]:
    if v is None:
        return None
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size != 3:
        raise errors.InvalidArgumentError(f"gravity: expected 3 values, got {a.size}")
    return pb.Vec3(x=float(a[0]), y=float(a[1]), z=float(a[2]))


def _batch(name: str, value: ArrayLike) -> np.ndarray:
    """value as a C-contiguous float64 array of 1 or 2 dimensions."""
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.ndim not in (1, 2):
        raise errors.InvalidArgumentError(
            f"{name}: expected a 1-D array (one state) or a 2-D array (count, dof), got shape {a.shape}")
    return a


def _states(q: ArrayLike, **others: ArrayLike):
    """Normalises the per-state arrays of a dynamics call: (single, count, dof, q, {name: flat values})."""
    qa = _batch("q", q)
    single = qa.ndim == 1
    count, dof = (1, qa.shape[0]) if single else qa.shape
    flat = {}
    for name, value in others.items():
        flat[name] = np.zeros(count * dof) if value is None else _batch(name, value).reshape(-1)
    return single, count, dof, qa.reshape(-1), flat


def _split(count: int, limit: int) -> list:
    """The (start, stop) ranges a batch of count states is sent in: one when it fits in limit (0: no limit)."""
    if limit <= 0 or count <= limit:
        return [(0, count)]
    return [(s, min(s + limit, count)) for s in range(0, count, limit)]


def _join(answers: list, single: bool, field: str, *tail: int) -> np.ndarray:
    """The field of every part's answer ((states, answer) pairs, in order) as one array of shape
    (count, *tail), or tail for one state."""
    out = np.concatenate([_shape(getattr(r, field), False, n, *tail) for n, r in answers])
    return out.reshape(tail) if single else out


def _shape(values, single: bool, count: int, *tail: int) -> np.ndarray:
    a = np.array(values, dtype=np.float64)  # a copy: the answer's memory belongs to protobuf
    if a.size != count * math.prod(tail):  # never expected: the server checks its answers
        raise errors.InternalError(f"answer has {a.size} values, expected {count * math.prod(tail)}")
    return a.reshape(tail if single else (count, *tail))


def _dh_from_json(doc: Mapping[str, Any]) -> "tuple[pb.DHModel, Optional[str], Optional[pb.Vec3]]":
    """A ``denoc-dh/1`` document (docs/model-format.md) as a DHModel, its name and gravity."""
    if doc.get("format") != "denoc-dh/1":
        raise errors.InvalidArgumentError(f"format: expected \"denoc-dh/1\", got {doc.get('format')!r}")
    unit = doc.get("angle_unit", "rad")
    if unit not in ("rad", "deg"):
        raise errors.InvalidArgumentError(f"angle_unit: expected \"deg\" or \"rad\", got {unit!r}")
    angle = _DEG if unit == "deg" else 1.0
    links = doc.get("links")
    if not isinstance(links, list) or not links:
        raise errors.InvalidArgumentError("links: expected an array of at least one link")
    model = pb.DHModel()
    for k, link in enumerate(links):
        where = f"links[{k}]"
        try:
            kind = link["type"]
            if kind not in ("revolute", "prismatic"):
                raise errors.InvalidArgumentError(
                    f"{where}.type: expected \"revolute\" or \"prismatic\", got {kind!r}")
            out = model.links.add(
                joint=link.get("joint", ""), link=link.get("link", ""),
                type=pb.JOINT_TYPE_REVOLUTE if kind == "revolute" else pb.JOINT_TYPE_PRISMATIC,
                a=float(link["a"]), b=float(link["b"]), alpha=float(link["alpha"]) * angle,
                theta=float(link["theta"]) * angle, mass=float(link["mass"]),
                armature=float(link.get("armature", 0.0)))
            out.com.CopyFrom(_vec3(link["com"]))
            inertia = link["inertia"]
            if "principal" in inertia:
                ixx, iyy, izz = (float(x) for x in inertia["principal"])
                out.inertia.CopyFrom(pb.Inertia(ixx=ixx, iyy=iyy, izz=izz))
            else:
                out.inertia.CopyFrom(pb.Inertia(**{key: float(inertia[key]) for key in
                                                   ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}))
            limits = link.get("limits")
            if limits:
                unit_q = angle if kind == "revolute" else 1.0
                for key in ("lower", "upper", "velocity"):
                    if key in limits:
                        setattr(out.limits, key, float(limits[key]) * unit_q)
                if "effort" in limits:
                    out.limits.effort = float(limits["effort"])
        except KeyError as e:
            raise errors.InvalidArgumentError(f"{where}.{e.args[0]}: missing (a required field)") from None
        except (TypeError, ValueError) as e:
            if isinstance(e, errors.DenocError):
                raise
            raise errors.InvalidArgumentError(f"{where}: {e}") from None
    gravity = _vec3(doc["gravity"]) if "gravity" in doc else None
    return model, doc.get("name") or None, gravity


# ---------------------------------------------------------------------------------------------------------
# the client


class Client:
    """A connection to a ``denocd`` server.

    ``target`` is ``host:port`` (any gRPC target, e.g. ``dns:///denoc:50051``). ``timeout`` is the
    default deadline of each call in seconds (default 30; ``None``: no deadline; every method also takes
    ``timeout=``). Batches above the server's ``max_states`` (asked once with :meth:`get_server_info`) are
    split into several calls and the answers joined in order.
    TLS is used when ``tls`` is true or any of ``root_certificates``, ``certificate_chain``,
    ``private_key``, ``server_name`` is given. The first three are PEM material (bytes, PEM text or a file
    path): ``root_certificates`` the CA(s) to trust (default: the system's roots), ``certificate_chain`` and
    ``private_key`` together the client certificate for mutual TLS. ``server_name`` is the name the
    server's certificate must carry when it differs from the target's host (e.g. ``"localhost"`` when
    dialling ``127.0.0.1``; gRPC's ``grpc.ssl_target_name_override``). ``token`` is sent as
    ``authorization: Bearer <token>`` on every call (visible ASCII only). ``timeout`` defaults to 30 s
    (``DEFAULT_TIMEOUT``), as in the C++ and Node clients; it bounds each unary call and a whole :meth:`simulate`
    run, while a :meth:`stream` session has no deadline unless given one. A failed TLS handshake (untrusted server,
    client certificate missing or refused) surfaces as :class:`denoc.UnavailableError`; a missing or unknown token
    as :class:`denoc.UnauthenticatedError`; deleting another token's model as :class:`denoc.PermissionDeniedError`.
    ``model_sources``: see :attr:`model_sources`. ``retries`` is how many times an idempotent call (everything but
    :meth:`delete_model` and the control-loop stream) is retried on UNAVAILABLE, with an exponential backoff
    starting at ``retry_backoff`` seconds.

    The client remembers the source of every model it registered; when a call on such a model gets
    NOT_FOUND (a server with another store, a model deleted meanwhile) it registers the model again and
    retries the call once.

    Use it as a context manager (``with denoc.Client(...) as c:``) or call :meth:`close`.
    """

    def __init__(self, target: str, *, timeout: Optional[float] = DEFAULT_TIMEOUT, tls: bool = False,
                 root_certificates: PathOrBytes = None, private_key: PathOrBytes = None,
                 certificate_chain: PathOrBytes = None, server_name: Optional[str] = None,
                 token: Optional[str] = None, retries: int = 3,
                 retry_backoff: float = 0.05, model_sources: Optional[Mapping[str, Any]] = None,
                 options: Sequence[tuple] = ()):
        self.target = target
        self.timeout = timeout
        self.retries = max(0, int(retries))
        self.retry_backoff = retry_backoff
        self._metadata = (("authorization", f"Bearer {_check_token(token)}"),) if token else None
        if (certificate_chain is None) != (private_key is None):
            raise errors.InvalidArgumentError("mutual TLS needs both certificate_chain and private_key")
        # no message size limit on the client side (the server has its own); reconnect quickly after a
        # failure so that the retries on UNAVAILABLE can reach a server that comes back. Not
        # grpc.min_reconnect_backoff_ms: gRPC core takes it as the minimum connect timeout (TCP, TLS
        # handshake and the server's first SETTINGS), and 100 ms made TLS connections fail under load.
        channel_options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1),
                           ("grpc.initial_reconnect_backoff_ms", 100), ("grpc.max_reconnect_backoff_ms", 2000),
                           *options]
        if server_name:
            channel_options.append(("grpc.ssl_target_name_override", server_name))
        if (tls or root_certificates is not None or private_key is not None or certificate_chain is not None
                or server_name):
            creds = grpc.ssl_channel_credentials(root_certificates=_read_bytes(root_certificates),
                                                 private_key=_read_bytes(private_key),
                                                 certificate_chain=_read_bytes(certificate_chain))
            self._channel = grpc.secure_channel(target, creds, options=channel_options)
        else:
            self._channel = grpc.insecure_channel(target, options=channel_options)
        self._stub = pb_grpc.DynamicsStub(self._channel)
        # model id -> RegisterModelRequest this client registered (or was given)
        self._sources: dict = dict(model_sources or {})
        self._lock = threading.Lock()
        self._max_states: Optional[int] = None  # the server's, once asked (0: it does not say)

    @property
    def model_sources(self) -> dict:
        """The sources of the models this client registered, by id (a copy). Pass it as
        ``model_sources=`` to another client (e.g. for another server) to give it the same re-registration
        knowledge."""
        with self._lock:
            return dict(self._sources)

    # -- lifetime ------------------------------------------------------------------------------------------

    def close(self) -> None:
        """Closes the channel (calls in progress are cancelled)."""
        self._channel.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def wait_ready(self, timeout: float = 10.0) -> None:
        """Blocks until the channel is connected; raises :class:`denoc.UnavailableError` after ``timeout``."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise errors.UnavailableError(f"{self.target}: not ready after {timeout} s") from None

    # -- calling -------------------------------------------------------------------------------------------

    def _call(self, method: Callable, request, timeout: Optional[float], *, idempotent: bool = True,
              model_id: Optional[str] = None):
        """One unary call with the retry and re-registration policy; grpc errors become DenocError."""
        timeout = self.timeout if timeout is None else timeout
        reregistered = False
        attempt = 0
        while True:
            try:
                return method(request, timeout=timeout, metadata=self._metadata)
            except grpc.RpcError as e:
                code = e.code()
                if code == grpc.StatusCode.UNAVAILABLE and idempotent and attempt < self.retries:
                    time.sleep(self.retry_backoff * (2 ** attempt))
                    attempt += 1
                    continue
                if (code == grpc.StatusCode.NOT_FOUND and model_id is not None and not reregistered
                        and self._reregister(model_id, timeout)):
                    reregistered = True
                    continue
                raise errors.from_rpc_error(e) from None

    def _reregister(self, model_id: str, timeout: Optional[float]) -> bool:
        """Registers a model this client registered before again; False when it has no source for it."""
        with self._lock:
            request = self._sources.get(model_id)
        if request is None:
            return False
        response = self._call(self._stub.RegisterModel, request, timeout)
        if response.model_id != model_id:  # cannot happen with content addresses unless versions differ
            raise errors.InternalError(
                f"re-registering model {model_id} gave a different id {response.model_id} "
                "(the server's canonical form changed?)", grpc.StatusCode.INTERNAL)
        return True

    # -- models --------------------------------------------------------------------------------------------

    def _register(self, request: "pb.RegisterModelRequest", timeout: Optional[float]) -> ModelInfo:
        response = self._call(self._stub.RegisterModel, request, timeout)
        with self._lock:
            self._sources[response.model_id] = request
        return ModelInfo._from_pb(response.model, created=response.created)

    def register_urdf(self, urdf: Union[str, os.PathLike], *, base_link: Optional[str] = None,
                      tip_link: Optional[str] = None, gravity: Optional[Sequence[float]] = None,
                      name: Optional[str] = None, armature: Optional[Sequence[float]] = None,
                      timeout: Optional[float] = None) -> ModelInfo:
        """Registers a URDF model and returns its :class:`ModelInfo` (``.model_id`` is the id).

        ``urdf`` is the XML text, or a path (``str`` without ``<``, or ``os.PathLike``). The chain runs
        from ``base_link`` (default: the root) to ``tip_link`` (default: the single leaf; see
        docs/urdf.md). ``gravity`` (3 values, m/s^2, base frame) defaults to (0, 0, -9.81) on the server;
        ``armature`` gives one rotor inertia per moving joint. Idempotent: the id is a content address.
        """
        text = urdf if isinstance(urdf, str) and "<" in urdf else Path(urdf).read_text()
        request = pb.RegisterModelRequest(urdf=pb.UrdfModel(text=text, base_link=base_link or "",
                                                            tip_link=tip_link or ""))
        if name is not None:
            request.name = name
        if gravity is not None:
            request.gravity.CopyFrom(_vec3(gravity))
        if armature is not None:
            request.armature.extend(float(a) for a in armature)
        return self._register(request, timeout)

    def register_dh(self, model: Union[Mapping[str, Any], str, os.PathLike], *,
                    gravity: Optional[Sequence[float]] = None, name: Optional[str] = None,
                    timeout: Optional[float] = None) -> ModelInfo:
        """Registers a Denavit-Hartenberg model given as a ``denoc-dh/1`` document (docs/model-format.md):
        a dict, or the path of a JSON file such as ``examples/models/stanford_arm.json``. ``gravity`` and
        ``name`` override the document's. Returns its :class:`ModelInfo`."""
        doc = model if isinstance(model, Mapping) else json.loads(Path(model).read_text())
        dh, doc_name, doc_gravity = _dh_from_json(doc)
        request = pb.RegisterModelRequest(dh=dh)
        if name is not None or doc_name is not None:
            request.name = name if name is not None else doc_name
        g = _vec3(gravity) if gravity is not None else doc_gravity
        if g is not None:
            request.gravity.CopyFrom(g)
        return self._register(request, timeout)

    def get_model(self, model_id: ModelRef, *, timeout: Optional[float] = None) -> ModelInfo:
        """Describes one model (:class:`denoc.NotFoundError` if the server does not know it)."""
        mid = _model_id(model_id)
        response = self._call(self._stub.GetModel, pb.GetModelRequest(model_id=mid), timeout, model_id=mid)
        return ModelInfo._from_pb(response.model)

    def list_models(self, *, timeout: Optional[float] = None) -> list:
        """Every model the server holds (memory and store), sorted by id (every page of ListModels)."""
        models, token = [], ""
        while True:
            response = self._call(self._stub.ListModels, pb.ListModelsRequest(page_token=token), timeout)
            models.extend(ModelInfo._from_pb(m) for m in response.models)
            if not response.next_page_token:
                return models
            if response.next_page_token <= token:
                raise errors.InternalError("the server's next_page_token does not advance",
                                           grpc.StatusCode.INTERNAL)
            token = response.next_page_token

    def find_model(self, name: str, *, timeout: Optional[float] = None) -> ModelInfo:
        """The one model with this display name (e.g. the built-in ``stanford_arm`` and ``planar_3r``).
        Raises :class:`denoc.NotFoundError` when there is none and :class:`denoc.FailedPreconditionError`
        listing the ids when several models carry the name."""
        hits = [m for m in self.list_models(timeout=timeout) if m.name == name]
        if not hits:
            raise errors.NotFoundError(f"no model named '{name}' on {self.target}", grpc.StatusCode.NOT_FOUND)
        if len(hits) > 1:
            raise errors.FailedPreconditionError(
                f"{len(hits)} models are named '{name}'; give the id: " + ", ".join(m.model_id for m in hits),
                grpc.StatusCode.FAILED_PRECONDITION)
        return hits[0]

    # -- the server ----------------------------------------------------------------------------------------

    def get_server_info(self, *, timeout: Optional[float] = None) -> ServerInfo:
        """The server's version and limits (``GetServerInfo``; needs a token when tokens are on)."""
        r = self._call(self._stub.GetServerInfo, pb.GetServerInfoRequest(), timeout)
        return ServerInfo(version=r.version, proto_package=r.proto_package, max_dof=r.max_dof,
                          max_states=r.max_states, max_receive_message_bytes=r.max_receive_message_bytes,
                          max_send_message_bytes=r.max_send_message_bytes, max_streams=r.max_streams,
                          tokens_required=r.tokens_required)

    def max_states(self, *, timeout: Optional[float] = None) -> int:
        """The server's ``max_states``, asked once and kept (0 for a server without ``GetServerInfo``)."""
        if self._max_states is None:
            try:
                limit = self.get_server_info(timeout=timeout).max_states
            except errors.UnimplementedError:
                limit = 0
            self._max_states = limit
        return self._max_states

    def _parts(self, count: int, timeout: Optional[float], states_per_item: int = 1) -> list:
        """The (start, stop) ranges of a batch of count items, each counting states_per_item states against
        the server's max_states (1 for a state, T for a rollout of T steps); one range when the batch fits,
        or when one item alone exceeds the limit (the server refuses it with its message)."""
        if count <= 1 or states_per_item <= 0:
            return [(0, count)]
        limit = self.max_states(timeout=timeout) // states_per_item
        return _split(count, limit) if limit > 0 else [(0, count)]

    def delete_model(self, model_id: ModelRef, *, timeout: Optional[float] = None) -> None:
        """Deletes a model from the server (not retried). The client forgets its source, unless the server
        refused the deletion (e.g. :class:`denoc.PermissionDeniedError` for another token's model)."""
        mid = _model_id(model_id)
        with self._lock:
            source = self._sources.pop(mid, None)
        try:
            self._call(self._stub.DeleteModel, pb.DeleteModelRequest(model_id=mid), timeout, idempotent=False)
        except errors.DenocError as e:
            # refused (another token's model, a pinned one, no token): the model is still there, keep its
            # source; after UNAVAILABLE or a deadline the deletion may have happened, so it stays forgotten
            refused = (errors.PermissionDeniedError, errors.FailedPreconditionError, errors.UnauthenticatedError,
                       errors.InvalidArgumentError)
            if source is not None and isinstance(e, refused):
                with self._lock:
                    self._sources.setdefault(mid, source)
            raise

    # -- dynamics ------------------------------------------------------------------------------------------

    def inverse_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, qdd: ArrayLike = None,
                         *, tip_wrench: ArrayLike = None, payload: Any = None,
                         timeout: Optional[float] = None) -> np.ndarray:
        """tau = I(q) qdd + C(q, qd) qd + g(q) (- J^T f_tip).

        ``q``, ``qd``, ``qdd``: one state as 1-D arrays of dof values, or a batch as (count, dof) arrays
        (``None``: zeros). ``tip_wrench``: [mx, my, mz, fx, fy, fz] per state in the tip frame. Returns
        ``tau`` with the shape of ``q`` (float64). Shapes are checked by the server
        (:class:`denoc.InvalidArgumentError` with its message).
        """
        mid = _model_id(model_id)
        single, count, dof, qf, f = _states(q, qd=qd, qdd=qdd)
        wrench = None if tip_wrench is None else _batch("tip_wrench", tip_wrench).reshape(-1)
        parts = self._parts(count, timeout) if all(v.size == count * dof for v in f.values()) else [(0, count)]
        if wrench is not None and wrench.size != 6 * count:
            parts = [(0, count)]  # a shape the server refuses, sent as it is
        tau = []
        for a, b in parts:
            rows = slice(a * dof, b * dof) if len(parts) > 1 else slice(None)
            request = pb.InverseDynamicsRequest(model_id=mid, count=b - a, dof=dof, q=qf[rows], qd=f["qd"][rows],
                                                qdd=f["qdd"][rows])
            if wrench is not None:
                request.tip_wrench.extend(wrench[6 * a:6 * b] if len(parts) > 1 else wrench)
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            response = self._call(self._stub.InverseDynamics, request, timeout, model_id=mid)
            tau.append(_shape(response.tau, False, b - a, dof))
        out = np.concatenate(tau)
        return out.reshape(dof) if single else out

    def forward_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, tau: ArrayLike = None,
                         *, route: str = "saha", payload: Any = None, timeout: Optional[float] = None) -> np.ndarray:
        """qdd = I(q)^-1 (tau - C(q, qd) qd - g(q)), by ``route`` ``'saha'`` (O(n) DeNOC, default),
        ``'fixman'`` (O(n) Fixman / Wang-Chirikjian) or ``'cholesky'`` (dense reference). Arrays as in
        :meth:`inverse_dynamics`; returns ``qdd`` with the shape of ``q``."""
        mid = _model_id(model_id)
        if route not in _ROUTES:
            raise errors.InvalidArgumentError(f"route: expected one of {sorted(_ROUTES)}, got {route!r}")
        single, count, dof, qf, f = _states(q, qd=qd, tau=tau)
        parts = self._parts(count, timeout) if all(v.size == count * dof for v in f.values()) else [(0, count)]
        qdd = []
        for a, b in parts:
            rows = slice(a * dof, b * dof) if len(parts) > 1 else slice(None)
            request = pb.ForwardDynamicsRequest(model_id=mid, count=b - a, dof=dof, q=qf[rows], qd=f["qd"][rows],
                                                tau=f["tau"][rows], route=_ROUTES[route])
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            response = self._call(self._stub.ForwardDynamics, request, timeout, model_id=mid)
            qdd.append(_shape(response.qdd, False, b - a, dof))
        out = np.concatenate(qdd)
        return out.reshape(dof) if single else out

    def full_factor(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, *, convective: bool = False,
                    bias: bool = False, gravity_torque: bool = False, inverse: bool = False,
                    timeout: Optional[float] = None, gravity_vector: Optional[bool] = None,
                    payload: Any = None) -> FullFactor:
        """I(q) and its U D U^T factors and log det, per state; on request C(q, qd) (``convective``), the
        bias C(q, qd) qd + g(q) (``bias``), g(q) (``gravity_torque``) and I(q)^-1 (``inverse``). ``qd``
        is needed for ``convective`` and ``bias``. ``gravity_vector`` is the deprecated name of
        ``gravity_torque``. Returns a :class:`FullFactor`."""
        if gravity_vector is not None:
            warnings.warn("full_factor(gravity_vector=...) is deprecated: use gravity_torque=",
                          DeprecationWarning, stacklevel=2)
            gravity_torque = gravity_torque or gravity_vector
        mid = _model_id(model_id)
        qa = _batch("q", q)
        single = qa.ndim == 1
        count, dof = (1, qa.shape[0]) if single else qa.shape
        qf = qa.reshape(-1)
        qdf = None if qd is None else _batch("qd", qd).reshape(-1)
        parts = self._parts(count, timeout) if qdf is None or qdf.size == count * dof else [(0, count)]
        answers = []
        for a, b in parts:
            rows = slice(a * dof, b * dof) if len(parts) > 1 else slice(None)
            request = pb.FullFactorRequest(model_id=mid, count=b - a, dof=dof, q=qf[rows], convective=convective,
                                           bias=bias, gravity_torque=gravity_torque, inverse=inverse)
            if qdf is not None:
                request.qd.extend(qdf[rows])
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            answers.append((b - a, self._call(self._stub.FullFactor, request, timeout, model_id=mid)))

        def join(field: str, *tail: int) -> np.ndarray:
            return _join(answers, single, field, *tail)

        log_det = join("log_det")
        return FullFactor(
            inertia=join("inertia", dof, dof), u=join("u", dof, dof), d=join("d", dof),
            log_det=float(log_det) if single else log_det,
            convective=join("convective", dof, dof) if convective else None,
            bias=join("bias", dof) if bias else None,
            gravity_torque=join("gravity_torque", dof) if gravity_torque else None,
            inverse=join("inverse", dof, dof) if inverse else None,
            compute_time_ns=sum(r.compute_time_ns for _, r in answers))

    # -- planning ------------------------------------------------------------------------------------------

    def kinematics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, *, link: str = "",
                   point: Optional[Sequence[float]] = None, reference: str = "base", jacobian: bool = False,
                   jdot_qd: bool = False, lambda_: bool = False, lambda_rows: str = "full",
                   all_frames: bool = False, payload: Any = None,
                   timeout: Optional[float] = None) -> Kinematics:
        """The pose of a link frame (``link``, a name of ``ModelInfo.link_names``; ``""``: the tip frame) per
        state and, on request, the Jacobian of ``point`` (in that frame's coordinates) in ``reference``
        axes (``"base"`` or ``"local"``), (dJ/dt) qd (needs ``qd``), the operational-space inertia
        (``lambda_``; ``lambda_rows`` ``"full"`` 6x6, ``"linear"`` or ``"angular"`` 3x3) and the poses of
        every frame. ``payload``: a :class:`Payload` for this call."""
        mid = _model_id(model_id)
        if reference not in _REFERENCES:
            raise errors.InvalidArgumentError(f"reference: expected one of {sorted(_REFERENCES)}, got {reference!r}")
        if lambda_rows not in _TASK_ROWS:
            raise errors.InvalidArgumentError(f"lambda_rows: expected one of {sorted(_TASK_ROWS)}, got {lambda_rows!r}")
        qa = _batch("q", q)
        single = qa.ndim == 1
        count, dof = (1, qa.shape[0]) if single else qa.shape
        task_rows, r = _TASK_ROWS[lambda_rows]
        qf = qa.reshape(-1)
        qdf = None if qd is None else _batch("qd", qd).reshape(-1)
        parts = self._parts(count, timeout) if qdf is None or qdf.size == count * dof else [(0, count)]
        answers = []
        for a, b in parts:
            rows = slice(a * dof, b * dof) if len(parts) > 1 else slice(None)
            request = pb.KinematicsRequest(model_id=mid, count=b - a, dof=dof, q=qf[rows], link=link,
                                           reference=_REFERENCES[reference], jacobian=jacobian, jdot_qd=jdot_qd,
                                           all_frames=all_frames, lambda_rows=task_rows)
            setattr(request, "lambda", lambda_)
            if point is not None:
                request.point.CopyFrom(_vec3(point))
            if qdf is not None:
                request.qd.extend(qdf[rows])
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            answers.append((b - a, self._call(self._stub.Kinematics, request, timeout, model_id=mid)))

        def join(field: str, *tail: int) -> np.ndarray:
            return _join(answers, single, field, *tail)

        return Kinematics(
            rotation=join("rotation", 3, 3), origin=join("origin", 3),
            jacobian=join("jacobian", 6, dof) if jacobian else None,
            jdot_qd=join("jdot_qd", 6) if jdot_qd else None,
            lambda_=join("lambda", r, r) if lambda_ else None,
            frame_rotations=join("frame_rotations", dof + 1, 3, 3) if all_frames else None,
            frame_origins=join("frame_origins", dof + 1, 3) if all_frames else None,
            compute_time_ns=sum(a.compute_time_ns for _, a in answers))

    def _derivatives(self, of, model_id: ModelRef, q, qd, third, third_name: str, tip_wrench, payload,
                     timeout) -> tuple:
        """The Derivatives calls of a batch, split above max_states: (single, dof, [(states, answer)])."""
        mid = _model_id(model_id)
        single, count, dof, qf, f = _states(q, qd=qd, **{third_name: third})
        wrench = None if tip_wrench is None else _batch("tip_wrench", tip_wrench).reshape(-1)
        parts = self._parts(count, timeout) if all(v.size == count * dof for v in f.values()) else [(0, count)]
        if wrench is not None and wrench.size != 6 * count:
            parts = [(0, count)]  # a shape the server refuses, sent as it is
        answers = []
        for a, b in parts:
            rows = slice(a * dof, b * dof) if len(parts) > 1 else slice(None)
            request = pb.DerivativesRequest(model_id=mid, count=b - a, dof=dof, of=of, q=qf[rows], qd=f["qd"][rows],
                                            **{third_name: f[third_name][rows]})
            if wrench is not None:
                request.tip_wrench.extend(wrench[6 * a:6 * b] if len(parts) > 1 else wrench)
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            answers.append((b - a, self._call(self._stub.Derivatives, request, timeout, model_id=mid)))
        return single, dof, answers

    def inverse_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     qdd: ArrayLike = None, *, tip_wrench: ArrayLike = None, payload: Any = None,
                                     timeout: Optional[float] = None) -> Derivatives:
        """dtau/dq and dtau/dqd (and tau) per state, analytic (arrays as in :meth:`inverse_dynamics`)."""
        single, n, answers = self._derivatives(pb.DERIVATIVE_OF_INVERSE_DYNAMICS, model_id, q, qd, qdd, "qdd",
                                               tip_wrench, payload, timeout)
        return Derivatives(dtau_dq=_join(answers, single, "dtau_dq", n, n),
                           dtau_dqd=_join(answers, single, "dtau_dqd", n, n), tau=_join(answers, single, "tau", n),
                           compute_time_ns=sum(a.compute_time_ns for _, a in answers))

    def forward_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     tau: ArrayLike = None, *, tip_wrench: ArrayLike = None, payload: Any = None,
                                     timeout: Optional[float] = None) -> Derivatives:
        """dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (and qdd) per state, analytic."""
        single, n, answers = self._derivatives(pb.DERIVATIVE_OF_FORWARD_DYNAMICS, model_id, q, qd, tau, "tau",
                                               tip_wrench, payload, timeout)
        return Derivatives(dqdd_dq=_join(answers, single, "dqdd_dq", n, n),
                           dqdd_dqd=_join(answers, single, "dqdd_dqd", n, n),
                           dqdd_dtau=_join(answers, single, "dqdd_dtau", n, n), qdd=_join(answers, single, "qdd", n),
                           compute_time_ns=sum(a.compute_time_ns for _, a in answers))

    def rollout(self, model_id: ModelRef, x0: ArrayLike, u: ArrayLike, *, dt: float, scheme: str = "rk4",
                linearize: bool = False, payload: Any = None, timeout: Optional[float] = None) -> Rollouts:
        """Fixed-step rollouts: from ``x0`` ((K, 2 dof) or one (2 dof,) state, x = [q, qd]) under torques
        ``u`` ((K, T, dof), or (T, dof) shared by every rollout), steps of ``dt`` by ``scheme`` (``"rk4"`` or
        ``"semi_implicit_euler"``). With ``linearize``, A_t and B_t of every step. Returns :class:`Rollouts`."""
        mid = _model_id(model_id)
        if scheme not in _SCHEMES:
            raise errors.InvalidArgumentError(f"scheme: expected one of {sorted(_SCHEMES)}, got {scheme!r}")
        xa = _batch("x0", x0)
        single = xa.ndim == 1
        count, width = (1, xa.shape[0]) if single else xa.shape
        ua = np.ascontiguousarray(u, dtype=np.float64)
        if ua.ndim not in (2, 3) or width % 2:
            raise errors.InvalidArgumentError(
                f"x0 (K, 2 dof) and u (K, T, dof) or (T, dof): got shapes {xa.shape} and {ua.shape}")
        dof = width // 2
        shared = ua.ndim == 2
        steps = ua.shape[0] if shared else ua.shape[1]
        # K * steps states per call: floor(max_states / steps) rollouts per part; controls per rollout travel
        # with their rollout, a shared sequence goes whole to every part
        parts = self._parts(count, timeout, steps) if shared or ua.shape[0] == count else [(0, count)]
        x0s = xa.reshape(count, width)
        answers = []
        for a, b in parts:
            whole = len(parts) == 1
            request = pb.RolloutRequest(model_id=mid, count=b - a, dof=dof, steps=steps, dt=dt,
                                        scheme=_SCHEMES[scheme], x0=xa.reshape(-1) if whole else x0s[a:b].reshape(-1),
                                        u=ua.reshape(-1) if whole or shared else ua[a:b].reshape(-1),
                                        shared_controls=shared and b - a > 1, linearize=linearize)
            if payload is not None:
                request.payload.CopyFrom(_payload(payload))
            answers.append((b - a, self._call(self._stub.Rollout, request, timeout, model_id=mid)))
        x = 2 * dof
        return Rollouts(states=_join(answers, single, "states", steps + 1, x),
                        A=_join(answers, single, "a", steps, x, x) if linearize else None,
                        B=_join(answers, single, "b", steps, x, dof) if linearize else None,
                        compute_time_ns=sum(a.compute_time_ns for _, a in answers))

    # -- simulation ----------------------------------------------------------------------------------------

    def simulate(self, model_id: ModelRef, q0: ArrayLike, qd0: ArrayLike = None, *, t_end: float,
                 integrator: str = "dopri5", route: str = "saha", dt_out: float = 0.0,
                 sample_times: ArrayLike = None, step: float = 0.0, rtol: float = 0.0, atol: float = 0.0,
                 initial_step: float = 0.0, max_step: float = 0.0, max_steps: int = 0,
                 torque: ArrayLike = None, torque_times: ArrayLike = None, damping: ArrayLike = None,
                 batch_size: int = 0, timeout: Optional[float] = None) -> Iterator[SimulationBatch]:
        """Integrates the equations of motion from (q0, qd0) at t = 0 to ``t_end`` on the server and yields
        :class:`SimulationBatch` objects as they are streamed, in time order (the last has ``last=True``).

        ``integrator``: ``'dopri5'`` (adaptive, ``rtol``/``atol``) or ``'rk4'`` (fixed ``step``).
        Samples at 0, ``dt_out``, ..., ``t_end`` or at ``sample_times``. Torque: none (zero), a constant
        ``torque`` (dof values), or with ``torque_times`` (k values) a (k, dof) ``torque`` schedule,
        piecewise linear. ``damping``: dof viscous coefficients. Zero tuning values mean the server's
        defaults (docs/simulation.md). A run that stops part way raises :class:`denoc.AbortedError`
        after the batches before it were yielded.
        """
        mid = _model_id(model_id)
        if integrator not in _INTEGRATORS:
            raise errors.InvalidArgumentError(
                f"integrator: expected one of {sorted(_INTEGRATORS)}, got {integrator!r}")
        if route not in _ROUTES:
            raise errors.InvalidArgumentError(f"route: expected one of {sorted(_ROUTES)}, got {route!r}")
        q0a = _batch("q0", q0).reshape(-1)
        dof = q0a.size
        request = pb.SimulateRequest(model_id=mid, dof=dof, q0=q0a,
                                     qd0=np.zeros(dof) if qd0 is None else _batch("qd0", qd0).reshape(-1),
                                     t_end=t_end, integrator=_INTEGRATORS[integrator], route=_ROUTES[route],
                                     dt_out=dt_out, step=step, rtol=rtol, atol=atol, initial_step=initial_step,
                                     max_step=max_step, max_steps=max_steps, batch_size=batch_size)
        if sample_times is not None:
            request.sample_times.extend(_batch("sample_times", sample_times).reshape(-1))
        if torque is not None:
            request.torque_values.extend(_batch("torque", torque).reshape(-1))
        if torque_times is not None:
            request.torque_times.extend(_batch("torque_times", torque_times).reshape(-1))
        if damping is not None:
            request.damping.extend(_batch("damping", damping).reshape(-1))
        return self._simulate(request, mid, timeout)

    def _simulate(self, request, mid: str, timeout: Optional[float]) -> Iterator[SimulationBatch]:
        timeout = self.timeout if timeout is None else timeout
        attempt = 0
        reregistered = False
        while True:
            received = False
            call = self._stub.Simulate(request, timeout=timeout, metadata=self._metadata)
            try:
                for r in call:
                    received = True
                    n, d = r.count, r.dof
                    yield SimulationBatch(
                        t=np.array(r.t), q=np.array(r.q).reshape(n, d), qd=np.array(r.qd).reshape(n, d),
                        energy=np.array(r.energy), kinetic=np.array(r.kinetic),
                        potential=np.array(r.potential), last=r.last, steps=r.steps,
                        rejected_steps=r.rejected_steps, evaluations=r.evaluations,
                        compute_time_ns=r.compute_time_ns)
                return
            except grpc.RpcError as e:
                code = e.code()
                if not received:  # nothing yielded yet: the run can start again transparently
                    if code == grpc.StatusCode.UNAVAILABLE and attempt < self.retries:
                        time.sleep(self.retry_backoff * (2 ** attempt))
                        attempt += 1
                        continue
                    if (code == grpc.StatusCode.NOT_FOUND and not reregistered
                            and self._reregister(mid, timeout)):
                        reregistered = True
                        continue
                raise errors.from_rpc_error(e) from None
            finally:
                call.cancel()  # a no-op after the end; stops the server's run if the caller stopped early

    def simulate_all(self, model_id: ModelRef, q0: ArrayLike, qd0: ArrayLike = None, **kwargs) -> Trajectory:
        """:meth:`simulate` collected into one :class:`Trajectory` (same arguments)."""
        batches = list(self.simulate(model_id, q0, qd0, **kwargs))
        last = batches[-1]
        return Trajectory(
            t=np.concatenate([b.t for b in batches]), q=np.concatenate([b.q for b in batches]),
            qd=np.concatenate([b.qd for b in batches]), energy=np.concatenate([b.energy for b in batches]),
            kinetic=np.concatenate([b.kinetic for b in batches]),
            potential=np.concatenate([b.potential for b in batches]), steps=last.steps,
            rejected_steps=last.rejected_steps, evaluations=last.evaluations, batches=len(batches))

    # -- control loops -------------------------------------------------------------------------------------

    def stream(self, *, timeout: Optional[float] = None) -> "StreamSession":
        """Opens a bidirectional stream for control loops: one state in, one answer out, in order.
        Use as a context manager; see :class:`StreamSession`. ``timeout`` bounds the whole session (default:
        none, whatever the client's ``timeout``)."""
        return StreamSession(self, timeout)


class StreamSession:
    """A control-loop session over the ``Stream`` RPC. Each :meth:`inverse_dynamics` or
    :meth:`forward_dynamics` sends one state (1-D arrays) and waits for its answer (a 1-D array). The
    model may change from one call to the next. A bad message ends the session with its typed exception
    (the server's message is prefixed ``message <i>:``). Not retried, not re-registered."""

    _END = object()

    def __init__(self, client: Client, timeout: Optional[float]):
        self._client = client
        self._requests: "queue.Queue" = queue.Queue()
        self._sequence = 0
        # no default deadline: a control loop runs as long as it runs (timeout= bounds the session)
        self._call = client._stub.Stream(iter(self._requests.get, self._END), timeout=timeout,
                                         metadata=client._metadata)
        self._closed = False

    def _exchange(self, request) -> np.ndarray:
        if self._closed:
            raise errors.CancelledError("the stream session is closed", grpc.StatusCode.CANCELLED)
        self._sequence += 1
        request.sequence = self._sequence
        self._requests.put(request)
        try:
            response = next(self._call)
        except grpc.RpcError as e:
            self._closed = True
            raise errors.from_rpc_error(e) from None
        except StopIteration:
            self._closed = True
            raise errors.InternalError("the server ended the stream", grpc.StatusCode.INTERNAL) from None
        if response.sequence != self._sequence:
            raise errors.InternalError(f"answer {response.sequence} out of order, expected {self._sequence}",
                                       grpc.StatusCode.INTERNAL)
        return np.array(response.result, dtype=np.float64)

    @property
    def sent(self) -> int:
        """Number of messages sent so far (the last sequence number)."""
        return self._sequence

    def inverse_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, qdd: ArrayLike = None,
                         *, tip_wrench: ArrayLike = None, payload: Any = None) -> np.ndarray:
        """tau for one state (1-D arrays; ``None``: zeros); ``payload``: a :class:`Payload` held by the tip."""
        q = _batch("q", q).reshape(-1)
        zeros = np.zeros(q.size)
        request = pb.StreamRequest(model_id=_model_id(model_id), computation=pb.COMPUTATION_INVERSE_DYNAMICS,
                                   q=q, qd=zeros if qd is None else _batch("qd", qd).reshape(-1),
                                   qdd=zeros if qdd is None else _batch("qdd", qdd).reshape(-1))
        if tip_wrench is not None:
            request.tip_wrench.extend(_batch("tip_wrench", tip_wrench).reshape(-1))
        if payload is not None:
            request.payload.CopyFrom(_payload(payload))
        return self._exchange(request)

    def forward_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, tau: ArrayLike = None,
                         *, route: str = "saha", payload: Any = None) -> np.ndarray:
        """qdd for one state (1-D arrays; ``None``: zeros) by ``route``; ``payload`` as above."""
        if route not in _ROUTES:
            raise errors.InvalidArgumentError(f"route: expected one of {sorted(_ROUTES)}, got {route!r}")
        q = _batch("q", q).reshape(-1)
        zeros = np.zeros(q.size)
        request = pb.StreamRequest(model_id=_model_id(model_id), computation=pb.COMPUTATION_FORWARD_DYNAMICS,
                                   q=q, qd=zeros if qd is None else _batch("qd", qd).reshape(-1),
                                   tau=zeros if tau is None else _batch("tau", tau).reshape(-1),
                                   route=_ROUTES[route])
        if payload is not None:
            request.payload.CopyFrom(_payload(payload))
        return self._exchange(request)

    def close(self) -> None:
        """Ends the request stream and waits for the server to close its side."""
        if self._closed:
            return
        self._closed = True
        self._requests.put(self._END)
        try:
            for _ in self._call:
                pass
        except grpc.RpcError:
            pass

    def __enter__(self) -> "StreamSession":
        return self

    def __exit__(self, *exc) -> None:
        if exc[0] is not None:
            self._call.cancel()
            self._closed = True
        self.close()
