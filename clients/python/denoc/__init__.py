"""denoc: a Python client of the denoc dynamics service (``denocd``).

numpy arrays in and out: one state as 1-D arrays of dof values, a batch as (count, dof) arrays sent in one
call. Example::

    import numpy as np, denoc
    with denoc.Client("127.0.0.1:50051", timeout=10) as c:
        arm = c.find_model("stanford_arm")
        tau = c.inverse_dynamics(arm, np.zeros((5, 6)), np.zeros((5, 6)), np.zeros((5, 6)))

Errors are typed (:class:`DenocError` and subclasses, with ``.code`` and the server's ``.message``).
The gRPC stubs are generated from ``proto/`` on first import (see ``denoc._stubs``).
"""

from ._stubs import ensure_stubs as _ensure_stubs

# the generated modules are denoc.v1.dynamics_pb2*: make denoc.v1 resolve to the stubs directory
__path__.append(str(_ensure_stubs() / "denoc"))  # noqa: F821 (__path__ is defined for packages)

from .errors import (AbortedError, CancelledError, DeadlineExceededError, DenocError,  # noqa: E402
                     FailedPreconditionError, InternalError, InvalidArgumentError, NotFoundError,
                     PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError, UnavailableError,
                     UnimplementedError)
from .client import (Client, FullFactor, ModelInfo, SimulationBatch, StreamSession,  # noqa: E402
                     Trajectory)

__version__ = "0.1.0"

__all__ = [
    "Client", "StreamSession", "ModelInfo", "FullFactor", "SimulationBatch", "Trajectory", "DenocError",
    "InvalidArgumentError", "NotFoundError", "ResourceExhaustedError", "FailedPreconditionError",
    "AbortedError", "UnavailableError", "DeadlineExceededError", "PermissionDeniedError",
    "UnauthenticatedError", "CancelledError", "UnimplementedError", "InternalError",
]
