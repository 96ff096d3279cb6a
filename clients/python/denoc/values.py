"""The values the denoc client takes and answers: model descriptions, results and payloads (frozen
dataclasses of numpy arrays)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

ArrayLike = Any
ModelRef = Union[str, "ModelInfo"]


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
