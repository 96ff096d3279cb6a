"""denoc: a Python client of the denoc dynamics service (``denocd``).

numpy arrays in and out: one state as 1-D arrays (q of nq values, qd, qdd and tau of nv; nq = nv = dof for a
fixed root), a batch as (count, nq) and (count, nv) arrays sent in one call. Trees with a floating or planar
root (docs/trees.md): ``register_urdf(path, root="floating")``; their configuration manifold on the client:
:func:`integrate`, :func:`difference`, :func:`normalize`. Example::

    import numpy as np, denoc
    with denoc.Client("127.0.0.1:50051", timeout=10) as c:
        arm = c.find_model("stanford_arm")
        tau = c.inverse_dynamics(arm, np.zeros((5, 6)), np.zeros((5, 6)), np.zeros((5, 6)))

Errors are typed (:class:`DenocError` and subclasses, with ``.code`` and the server's ``.message``).
The gRPC stubs (``denoc.v1``) are generated when the package is built and shipped in it.
"""

from ._version import __version__

try:
    from .v1 import dynamics_pb2 as _pb  # noqa: F401 (the stubs the client imports)
except ImportError as e:  # the source directory, not an installed package
    raise ImportError("denoc: the generated gRPC stubs (denoc/v1/dynamics_pb2.py) are missing: install the "
                      "package (pip install clients/python, see its README) and import it from there") from e

from .errors import (AbortedError, CancelledError, DeadlineExceededError, DenocError,  # noqa: E402
                     FailedPreconditionError, InternalError, InvalidArgumentError, NotFoundError,
                     PermissionDeniedError, ResourceExhaustedError, UnauthenticatedError, UnavailableError,
                     UnimplementedError, names_cached_limit, was_deleted)
from .values import (Derivatives, Frame, FullFactor, Joint, Kinematics, LinkWrench, ModelInfo,  # noqa: E402
                     Payload, Rollouts, ServerInfo, SimulationBatch, Trajectory)
from .configuration import (difference, integrate, neutral, normalize, random_configuration,  # noqa: E402
                            rotation_matrix)
from .stream import StreamSession  # noqa: E402
from .client import DEFAULT_TIMEOUT, Client  # noqa: E402

__all__ = [
    "__version__", "DEFAULT_TIMEOUT", "Client", "StreamSession", "ModelInfo", "ServerInfo", "FullFactor",
    "SimulationBatch", "Trajectory", "Payload", "Kinematics", "Derivatives", "Rollouts", "Joint", "Frame",
    "LinkWrench", "integrate", "difference", "normalize", "neutral", "random_configuration", "rotation_matrix",
    "DenocError",
    "InvalidArgumentError", "NotFoundError", "ResourceExhaustedError", "FailedPreconditionError",
    "AbortedError", "UnavailableError", "DeadlineExceededError", "PermissionDeniedError",
    "UnauthenticatedError", "CancelledError", "UnimplementedError", "InternalError", "was_deleted",
    "names_cached_limit",
]
