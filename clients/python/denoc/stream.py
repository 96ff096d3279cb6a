"""Control-loop sessions over the bidirectional ``Stream`` RPC (:meth:`denoc.Client.stream`)."""

from __future__ import annotations

import queue
from typing import TYPE_CHECKING, Any, Optional

import grpc
import numpy as np

from . import convert, errors
from .v1 import dynamics_pb2 as pb
from .values import ArrayLike, ModelRef

if TYPE_CHECKING:
    from .client import Client


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

    def _zeros(self, model_id: ModelRef, q: np.ndarray) -> np.ndarray:
        """nv zeros for a state whose q has q.size = nq values."""
        offset, _ = self._client._root_sizes(model_id, None)
        return np.zeros(max(0, q.size - offset))

    @staticmethod
    def _extras(request, wrenches: Any, payload: Any) -> None:
        """The external wrenches (6 values each) and the payload of one message."""
        for link, reference, values, per_state in convert.link_wrenches(wrenches):
            if per_state and values.size != 6:
                raise errors.InvalidArgumentError(
                    f"wrenches: a stream message is one state, each wrench 6 values (got {values.size})")
            request.wrenches.add(link=link, reference=reference, wrench=values)
        if payload is not None:
            request.payload.CopyFrom(convert.payload(payload))

    def inverse_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, qdd: ArrayLike = None,
                         *, tip_wrench: ArrayLike = None, wrenches: Any = None, payload: Any = None) -> np.ndarray:
        """tau for one state (1-D arrays, q of nq values, the others nv; ``None``: zeros); ``wrenches``:
        external wrenches on named frames as in :meth:`Client.inverse_dynamics` (6 values each);
        ``payload``: a :class:`Payload` held by a link."""
        q = convert.batch("q", q).reshape(-1)
        zeros = self._zeros(model_id, q) if qd is None or qdd is None else None
        request = pb.StreamRequest(model_id=convert.model_id(model_id), computation=pb.COMPUTATION_INVERSE_DYNAMICS,
                                   q=q, qd=zeros if qd is None else convert.batch("qd", qd).reshape(-1),
                                   qdd=zeros if qdd is None else convert.batch("qdd", qdd).reshape(-1))
        if tip_wrench is not None:
            request.tip_wrench.extend(convert.batch("tip_wrench", tip_wrench).reshape(-1))
        self._extras(request, wrenches, payload)
        return self._exchange(request)

    def forward_dynamics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, tau: ArrayLike = None,
                         *, route: str = "saha", wrenches: Any = None, payload: Any = None) -> np.ndarray:
        """qdd for one state (1-D arrays; ``None``: zeros) by ``route``; ``wrenches`` and ``payload`` as
        above."""
        wire_route = convert.choice("route", route, convert.ROUTES)
        q = convert.batch("q", q).reshape(-1)
        zeros = self._zeros(model_id, q) if qd is None or tau is None else None
        request = pb.StreamRequest(model_id=convert.model_id(model_id), computation=pb.COMPUTATION_FORWARD_DYNAMICS,
                                   q=q, qd=zeros if qd is None else convert.batch("qd", qd).reshape(-1),
                                   tau=zeros if tau is None else convert.batch("tau", tau).reshape(-1),
                                   route=wire_route)
        self._extras(request, wrenches, payload)
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
