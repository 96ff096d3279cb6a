"""The denoc client: numpy arrays in and out over the ``denoc.v1.Dynamics`` gRPC service. This module holds
the channel, the retry and re-registration policy, the models, the server's limits and the dynamics calls;
the planning calls are in :mod:`denoc.planning`, simulation in :mod:`denoc.simulate`, control-loop
sessions in :mod:`denoc.stream`."""

from __future__ import annotations

import json
import os
import random
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import grpc
import numpy as np

from . import convert, errors
from .planning import Planning
from .simulate import Simulation
from .stream import StreamSession
from .v1 import dynamics_pb2 as pb
from .v1 import dynamics_pb2_grpc as pb_grpc
from .values import ArrayLike, FullFactor, ModelInfo, ModelRef, ServerInfo

PathOrBytes = Union[str, bytes, os.PathLike, None]
DEFAULT_TIMEOUT = 30.0  # s: the default deadline of a call, the same in every denoc client


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


def _split(count: int, limit: int) -> list:
    """The (start, stop) ranges a batch of count states is sent in: one when it fits in limit (0: no limit)."""
    if limit <= 0 or count <= limit:
        return [(0, count)]
    return [(s, min(s + limit, count)) for s in range(0, count, limit)]


def _cut(a: int, b: int, count: int) -> Callable:
    """cut(values, width): the values of items [a, b) of a flat array of width values per item, or the whole
    array (as it is, whatever its size) when [a, b) is the whole batch of count items."""
    if (a, b) == (0, count):
        return lambda values, width: values
    return lambda values, width: values[a * width:b * width]


class Client(Planning, Simulation):
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
    starting at ``retry_backoff`` seconds, doubling to at most 2 s, each wait drawn within +-20 % (the C++ and
    Node clients' defaults: 5 attempts in all).

    The client remembers the source of every model it registered; when a call on such a model gets
    NOT_FOUND (a server with another or an empty store) it registers the model again and retries the call
    once; not when the server says the model "was deleted" (``DeleteModel``, by any client on any replica
    sharing the store): then the client forgets the source and raises :class:`denoc.NotFoundError`.

    Use it as a context manager (``with denoc.Client(...) as c:``) or call :meth:`close`.
    """

    def __init__(self, target: str, *, timeout: Optional[float] = DEFAULT_TIMEOUT, tls: bool = False,
                 root_certificates: PathOrBytes = None, private_key: PathOrBytes = None,
                 certificate_chain: PathOrBytes = None, server_name: Optional[str] = None,
                 token: Optional[str] = None, retries: int = 4,
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
        # calls spread over a fleet by default when the target names several servers (a headless service's
        # dns:///, an ipv4:/ipv6: list), unless the caller chose a policy (docs/clients.md)
        chosen = {name for name, _ in options}
        if (target.startswith(("dns:", "ipv4:", "ipv6:"))
                and not chosen & {"grpc.lb_policy_name", "grpc.service_config"}):
            channel_options.append(("grpc.lb_policy_name", "round_robin"))
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
        # model id -> (nq - nv, nv - nu): what a moving root adds to q and to qd over the joints (content
        # addresses: a model id's sizes never change)
        self._roots: dict = {}

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
                    time.sleep(min(self.retry_backoff * (2 ** attempt), 2.0) * random.uniform(0.8, 1.2))
                    attempt += 1
                    continue
                if (code == grpc.StatusCode.NOT_FOUND and model_id is not None and not reregistered
                        and self._reregister(model_id, timeout, e.details())):
                    reregistered = True
                    continue
                raise errors.from_rpc_error(e) from None

    def _reregister(self, model_id: str, timeout: Optional[float], message: Optional[str] = None) -> bool:
        """Registers a model this client registered before again after NOT_FOUND with ``message``; False when
        it has no source for it, or when the message says the model was deleted (its source is forgotten)."""
        with self._lock:
            if errors.was_deleted(message):
                self._sources.pop(model_id, None)  # deleted on purpose (by any client): not brought back
                return False
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

    def _known(self, info: ModelInfo) -> ModelInfo:
        """Remembers the sizes of a model description the server gave (see :meth:`_root_sizes`)."""
        with self._lock:
            self._roots[info.model_id] = (info.nq - info.nv, info.nv - info.nu)
        return info

    def _root_sizes(self, model: ModelRef, timeout: Optional[float]) -> tuple:
        """(nq - nv, nv - nu) of a model: what its root adds to q (1 for a floating root, else 0) and to qd
        over the actuated joints (6 floating, 3 planar, 0 fixed). The arrays of a call give nv (the width of
        q less the first) and nu; a :class:`ModelInfo` carries the sizes, a model id is looked up once
        (``GetModel``) unless this client has seen its description."""
        if isinstance(model, ModelInfo):
            return model.nq - model.nv, model.nv - model.nu
        mid = str(model)
        with self._lock:
            known = self._roots.get(mid)
        if known is not None:
            return known
        info = self.get_model(mid, timeout=timeout)
        return info.nq - info.nv, info.nv - info.nu

    def _register(self, request: "pb.RegisterModelRequest", timeout: Optional[float]) -> ModelInfo:
        response = self._call(self._stub.RegisterModel, request, timeout)
        with self._lock:
            self._sources[response.model_id] = request
        return self._known(convert.model_info(response.model, created=response.created))

    def register(self, model: Union[str, os.PathLike, Mapping[str, Any]], *, root: Optional[str] = None,
                 **kwargs) -> ModelInfo:
        """Registers a model from its source: a URDF (XML text or a ``.urdf`` path; :meth:`register_urdf`,
        ``root`` ``"fixed"``, ``"floating"`` or ``"planar"``) or a ``denoc-dh/1`` document (a dict or a
        ``.json`` path; :meth:`register_dh`, fixed root only). Other keywords go to that method."""
        is_dh = isinstance(model, Mapping) or (not (isinstance(model, str) and "<" in model)
                                               and str(model).lower().endswith(".json"))
        if is_dh:
            if root not in (None, "fixed"):
                raise errors.InvalidArgumentError(f"root: a denoc-dh/1 model has a fixed root, got {root!r}")
            return self.register_dh(model, **kwargs)
        return self.register_urdf(model, root=root, **kwargs)

    def register_urdf(self, urdf: Union[str, os.PathLike], *, base_link: Optional[str] = None,
                      tip_link: Optional[str] = None, gravity: Optional[Sequence[float]] = None,
                      name: Optional[str] = None, armature: Optional[Sequence[float]] = None,
                      root: Optional[str] = None, timeout: Optional[float] = None) -> ModelInfo:
        """Registers a URDF model and returns its :class:`ModelInfo` (``.model_id`` is the id).

        ``urdf`` is the XML text, or a path (``str`` without ``<``, or ``os.PathLike``). The model is the
        tree below ``base_link`` (default: the root link), or the chain from it to ``tip_link`` (see
        docs/urdf.md). ``root``: how ``base_link`` moves, ``"fixed"`` (default), ``"floating"`` (6 DOF: q
        starts with [x y z qx qy qz qw], qd with [w; v] in the root link's axes) or ``"planar"`` (x, y,
        yaw); docs/trees.md. ``gravity`` (3 values, m/s^2, world frame) defaults to (0, 0, -9.81) on the
        server; ``armature`` gives one rotor inertia per moving joint. Idempotent: the id is a content
        address.
        """
        text = urdf if isinstance(urdf, str) and "<" in urdf else Path(urdf).read_text()
        request = pb.RegisterModelRequest(urdf=pb.UrdfModel(text=text, base_link=base_link or "",
                                                            tip_link=tip_link or ""))
        if root is not None:
            request.urdf.root = convert.choice("root", root, convert.ROOTS)
        if name is not None:
            request.name = name
        if gravity is not None:
            request.gravity.CopyFrom(convert.vec3(gravity))
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
        dh, doc_name, doc_gravity = convert.dh_from_json(doc)
        request = pb.RegisterModelRequest(dh=dh)
        if name is not None or doc_name is not None:
            request.name = name if name is not None else doc_name
        g = convert.vec3(gravity) if gravity is not None else doc_gravity
        if g is not None:
            request.gravity.CopyFrom(g)
        return self._register(request, timeout)

    def get_model(self, model_id: ModelRef, *, timeout: Optional[float] = None) -> ModelInfo:
        """Describes one model (:class:`denoc.NotFoundError` if the server does not know it)."""
        mid = convert.model_id(model_id)
        response = self._call(self._stub.GetModel, pb.GetModelRequest(model_id=mid), timeout, model_id=mid)
        return self._known(convert.model_info(response.model))

    def list_models(self, *, timeout: Optional[float] = None) -> list:
        """Every model the server holds (memory and store), sorted by id (every page of ListModels)."""
        models, token = [], ""
        while True:
            response = self._call(self._stub.ListModels, pb.ListModelsRequest(page_token=token), timeout)
            models.extend(self._known(convert.model_info(m)) for m in response.models)
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
                          tokens_required=r.tokens_required, max_depth=r.max_depth, max_wrenches=r.max_wrenches,
                          max_frames=r.max_frames)

    def max_states(self, *, timeout: Optional[float] = None) -> int:
        """The server's ``max_states``, asked once and kept (0 for a server without ``GetServerInfo``). A batch
        refused with RESOURCE_EXHAUSTED naming it (a replica with a smaller limit) makes the client ask again,
        once per call (see :meth:`_batches`)."""
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

    def _batches(self, method: Callable, mid: str, count: int, fits: bool, build: Callable, payload: Any,
                 timeout: Optional[float], states_per_item: int = 1) -> list:
        """The calls of a batch of count items: one, or, when its shapes fit (a batch the server refuses is
        sent whole, for its message), one per part within max_states (see :meth:`_parts`). ``build(n, cut)``
        makes the request of a part of n items (``cut`` as :func:`_cut` gives); ``payload`` (a
        :class:`Payload`, a dict or None) goes with every part. Returns [(n, answer)] in order.

        When the server refuses a part with RESOURCE_EXHAUSTED naming a limit the client keeps
        (:func:`denoc.names_cached_limit`), the kept limits are dropped and read again, once; when
        ``max_states`` shrank, the batch is sent once more, split by the new limit, else the refusal is
        raised. A refusal of that second sending is raised as it is: one re-read per call."""

        def send() -> list:
            parts = self._parts(count, timeout, states_per_item) if fits else [(0, count)]
            answers = []
            for a, b in parts:
                request = build(b - a, _cut(a, b, count))
                if payload is not None:
                    request.payload.CopyFrom(convert.payload(payload))
                answers.append((b - a, self._call(method, request, timeout, model_id=mid)))
            return answers

        before = self._max_states
        try:
            return send()
        except errors.ResourceExhaustedError as e:
            if not (fits and self._limits_shrank(e, before, timeout)):
                raise
        return send()

    def _limits_shrank(self, refusal: errors.DenocError, before: Optional[int], timeout: Optional[float]) -> bool:
        """Whether ``refusal`` names a kept limit and ``max_states``, dropped and asked again, is now smaller than
        the one the batch was split by (``before``, the kept value when the call began, else the one kept now).
        False, with the refusal to be raised, when the server does not answer the new question."""
        if not errors.names_cached_limit(refusal):
            return False
        with self._lock:
            if before is None:
                before = self._max_states
            self._max_states = None
        if before is None:  # the batch was not split by a kept limit (one item): nothing to split anew
            return False
        try:
            now = self.max_states(timeout=timeout)
        except errors.DenocError:
            return False  # the server's refusal says more than this failure
        return now > 0 and (before == 0 or now < before)

    def delete_model(self, model_id: ModelRef, *, timeout: Optional[float] = None) -> None:
        """Deletes a model from the server (not retried). The client forgets its source, unless the server
        refused the deletion (e.g. :class:`denoc.PermissionDeniedError` for another token's model)."""
        mid = convert.model_id(model_id)
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
                         *, tip_wrench: ArrayLike = None, wrenches: Any = None, payload: Any = None,
                         timeout: Optional[float] = None) -> np.ndarray:
        """tau = I(q) qdd + C(q, qd) qd + g(q) (- J^T f_tip - sum J_i^T w_i).

        ``q``: one state as a 1-D array of nq values, or a batch as a (count, nq) array; ``qd``, ``qdd``:
        nv values per state (``None``: zeros); nq = nv = dof for a fixed root (docs/trees.md for a floating
        or planar one). ``tip_wrench``: [mx, my, mz, fx, fy, fz] per state in the tip frame. ``wrenches``:
        external wrenches on named frames, a list of :class:`LinkWrench` or ``(link, wrench[, reference])``
        with a (6,) or (count, 6) wrench, ``reference`` ``"world"`` or ``"local"`` (a foot's contact force:
        ``("FL_FOOT", [0, 0, 0, fx, fy, fz])``). Returns ``tau`` (nv values per state; a moving root's
        entries are the wrench the world must add on the root link). Shapes are checked by the server
        (:class:`denoc.InvalidArgumentError` with its message).
        """
        mid = convert.model_id(model_id)
        offset, _ = self._root_sizes(model_id, timeout)
        single, count, dof, qf, f = convert.states(q, offset=offset, qd=qd, qdd=qdd)
        nq = dof + offset
        wrench = None if tip_wrench is None else convert.batch("tip_wrench", tip_wrench).reshape(-1)
        links = convert.link_wrenches(wrenches)

        def build(n: int, cut: Callable):
            request = pb.InverseDynamicsRequest(model_id=mid, count=n, dof=dof, q=cut(qf, nq), qd=cut(f["qd"], dof),
                                                qdd=cut(f["qdd"], dof))
            if wrench is not None:
                request.tip_wrench.extend(cut(wrench, 6))
            convert.add_wrenches(request, links, cut)
            return request

        fits = (convert.fits(f, count, dof) and convert.fits({"tip_wrench": wrench}, count, 6)
                and convert.wrenches_fit(links, count))
        answers = self._batches(self._stub.InverseDynamics, mid, count, fits, build, payload, timeout)
        return convert.join(answers, single, "tau", dof)

    def forward_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, tau: ArrayLike = None,
                         *, route: str = "saha", wrenches: Any = None, payload: Any = None,
                         timeout: Optional[float] = None) -> np.ndarray:
        """qdd = I(q)^-1 (tau + sum J_i^T w_i - C(q, qd) qd - g(q)), by ``route`` ``'saha'`` (O(n) DeNOC,
        default), ``'fixman'`` (O(n) Fixman / Wang-Chirikjian; serial chains only) or ``'cholesky'`` (the
        inertia-matrix reference). Arrays and ``wrenches`` as in :meth:`inverse_dynamics`; returns ``qdd``
        (nv values per state)."""
        mid = convert.model_id(model_id)
        wire_route = convert.choice("route", route, convert.ROUTES)
        offset, _ = self._root_sizes(model_id, timeout)
        single, count, dof, qf, f = convert.states(q, offset=offset, qd=qd, tau=tau)
        nq = dof + offset
        links = convert.link_wrenches(wrenches)

        def build(n: int, cut: Callable):
            request = pb.ForwardDynamicsRequest(model_id=mid, count=n, dof=dof, q=cut(qf, nq), qd=cut(f["qd"], dof),
                                                tau=cut(f["tau"], dof), route=wire_route)
            convert.add_wrenches(request, links, cut)
            return request

        fits = convert.fits(f, count, dof) and convert.wrenches_fit(links, count)
        answers = self._batches(self._stub.ForwardDynamics, mid, count, fits, build, payload, timeout)
        return convert.join(answers, single, "qdd", dof)

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
        mid = convert.model_id(model_id)
        offset, _ = self._root_sizes(model_id, timeout)
        single, count, dof, qf, f = convert.states(q, zeros=False, offset=offset, qd=qd)
        nq = dof + offset

        def build(n: int, cut: Callable):
            request = pb.FullFactorRequest(model_id=mid, count=n, dof=dof, q=cut(qf, nq), convective=convective,
                                           bias=bias, gravity_torque=gravity_torque, inverse=inverse)
            if f["qd"] is not None:
                request.qd.extend(cut(f["qd"], dof))
            return request

        fits = convert.fits(f, count, dof)
        answers = self._batches(self._stub.FullFactor, mid, count, fits, build, payload, timeout)
        join = convert.joiner(answers, single)
        log_det = join("log_det")
        return FullFactor(
            inertia=join("inertia", dof, dof), u=join("u", dof, dof), d=join("d", dof),
            log_det=float(log_det) if single else log_det,
            convective=join("convective", dof, dof) if convective else None,
            bias=join("bias", dof) if bias else None,
            gravity_torque=join("gravity_torque", dof) if gravity_torque else None,
            inverse=join("inverse", dof, dof) if inverse else None,
            compute_time_ns=convert.compute_time(answers))

    # -- control loops -------------------------------------------------------------------------------------

    def stream(self, *, timeout: Optional[float] = None) -> "StreamSession":
        """Opens a bidirectional stream for control loops: one state in, one answer out, in order.
        Use as a context manager; see :class:`StreamSession`. ``timeout`` bounds the whole session (default:
        none, whatever the client's ``timeout``)."""
        return StreamSession(self, timeout)
