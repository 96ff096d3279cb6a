"""Exceptions raised by the denoc client, one class per gRPC status code the service uses.

Every exception derives from :class:`DenocError`, which carries the status ``code`` (a
``grpc.StatusCode``) and the server's ``message`` unchanged (for example
``q has 13 values, expected count*dof = 14``).
"""

from __future__ import annotations

import re
from typing import Optional

import grpc


class DenocError(Exception):
    """A failed call. ``code`` is the ``grpc.StatusCode``, ``message`` the server's message."""

    code: grpc.StatusCode = grpc.StatusCode.UNKNOWN

    def __init__(self, message: str, code: grpc.StatusCode | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return f"{self.code.name}: {self.message}"


class InvalidArgumentError(DenocError, ValueError):
    """INVALID_ARGUMENT: bad shapes, non-finite values, unknown enum values, models the core rejects."""
    code = grpc.StatusCode.INVALID_ARGUMENT


def was_deleted(message: Optional[str]) -> bool:
    """Whether a NOT_FOUND message says the model was deleted (``DeleteModel``) rather than never known: the
    client does not register such a model again behind its caller's back."""
    return message is not None and " was deleted (DeleteModel)" in message


class NotFoundError(DenocError, LookupError):
    """NOT_FOUND: a model id the server neither holds nor finds in its store."""
    code = grpc.StatusCode.NOT_FOUND


class ResourceExhaustedError(DenocError):
    """RESOURCE_EXHAUSTED: a configured limit (states, dof, message size, models) was exceeded."""
    code = grpc.StatusCode.RESOURCE_EXHAUSTED


# the GetServerInfo fields a client keeps (Client.max_states), as whole words of a refusal's message
_CACHED_LIMITS = re.compile(r"\b(?:max_states)\b")


def names_cached_limit(error: BaseException) -> bool:
    """Whether a failed call is RESOURCE_EXHAUSTED naming a limit the client keeps from ``GetServerInfo``
    (``max_states``, which it splits batches by): the server that refused it takes less than the kept limit
    said, e.g. a replica started with a smaller ``--max-states`` during a rolling upgrade. Such a refusal makes
    a batch call read the limits again, once (docs/clients.md); any other RESOURCE_EXHAUSTED is raised as it
    is."""
    return (isinstance(error, DenocError) and error.code == grpc.StatusCode.RESOURCE_EXHAUSTED
            and _CACHED_LIMITS.search(error.message) is not None)


class FailedPreconditionError(DenocError):
    """FAILED_PRECONDITION: e.g. deleting a pinned (built-in or preloaded) model."""
    code = grpc.StatusCode.FAILED_PRECONDITION


class AbortedError(DenocError):
    """ABORTED: a simulation that stopped part way (step limit, step underflow, non-finite state), or a
    rollout whose state diverged (the step and joint are named)."""
    code = grpc.StatusCode.ABORTED


class UnavailableError(DenocError, ConnectionError):
    """UNAVAILABLE: the server cannot be reached (after the client's retries), or its store failed."""
    code = grpc.StatusCode.UNAVAILABLE


class DeadlineExceededError(DenocError, TimeoutError):
    """DEADLINE_EXCEEDED: the call's timeout expired."""
    code = grpc.StatusCode.DEADLINE_EXCEEDED


class PermissionDeniedError(DenocError, PermissionError):
    """PERMISSION_DENIED: the bearer token may not do this (e.g. delete another token's model)."""
    code = grpc.StatusCode.PERMISSION_DENIED


class UnauthenticatedError(DenocError):
    """UNAUTHENTICATED: a bearer token is required or was not accepted."""
    code = grpc.StatusCode.UNAUTHENTICATED


class CancelledError(DenocError):
    """CANCELLED: the call was cancelled."""
    code = grpc.StatusCode.CANCELLED


class UnimplementedError(DenocError):
    """UNIMPLEMENTED: e.g. a URDF registration on a server built without the URDF importer."""
    code = grpc.StatusCode.UNIMPLEMENTED


class InternalError(DenocError):
    """INTERNAL (or UNKNOWN, DATA_LOSS): a bug on the server side."""
    code = grpc.StatusCode.INTERNAL


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, NotFoundError, ResourceExhaustedError, FailedPreconditionError, AbortedError,
    UnavailableError, DeadlineExceededError, PermissionDeniedError, UnauthenticatedError, CancelledError,
    UnimplementedError, InternalError)}


def from_rpc_error(error: grpc.RpcError) -> DenocError:
    """The typed exception for a ``grpc.RpcError`` (its code and details)."""
    code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
    message = error.details() if hasattr(error, "details") else str(error)
    cls = _BY_CODE.get(code, DenocError)
    return cls(message or "", code)
