"""The values the denoc client takes and answers: model descriptions, results and payloads (frozen
dataclasses of numpy arrays)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence, Union

import numpy as np

ArrayLike = Any
ModelRef = Union[str, "ModelInfo"]


@dataclass(frozen=True)
class Joint:
    """One joint of a model's tree (``denoc.v1.Joint``, :attr:`ModelInfo.joints`). A floating or planar root
    is ``joints[0]`` (named ``"root_joint"``); the others follow in the order of their coordinates in q."""

    name: str
    type: str  # "revolute", "prismatic", "floating" or "planar"
    parent: int  # index in ModelInfo.joints of the joint that moves this one's parent link; -1: none
    q_index: int  # its first coordinate in q
    v_index: int  # its first coordinate in qd, qdd and tau
    nq: int  # its coordinates in q: 1, 7 (floating) or 3 (planar)
    nv: int  # its coordinates in qd: 1, 6 (floating) or 3 (planar)
    link: str  # the link it moves
    depth: int  # joints on its path from the world, itself included


@dataclass(frozen=True)
class Frame:
    """A frame a request may name (``denoc.v1.Frame``, :attr:`ModelInfo.frames`): a link, the tip frame
    (``"tip"``), the root link, or a URDF link merged into one of these by fixed joints (a foot, a flange, a
    sensor mount: a fixed frame, with ``fixed_to`` the frame it is fixed to)."""

    name: str
    joint: int  # index in ModelInfo.joints of the joint that moves it; -1: fixed to the world
    fixed_to: str = ""  # a fixed frame: the name of the frame it is fixed to; else empty


@dataclass(frozen=True)
class ModelInfo:
    """Description of a registered model (``denoc.v1.ModelInfo``).

    ``dof`` is the number of velocity coordinates nv. The tree (docs/trees.md): ``nq`` configuration
    coordinates (q has nq values per state), ``nv`` velocity coordinates (qd, qdd, tau), ``nu`` actuated
    joints (``joint_names``, the controls of a rollout or simulation), ``root`` ``"fixed"``, ``"floating"``
    (q = [x y z | qx qy qz qw | joints], qd = [w; v | joints], both root parts in the root link's axes) or
    ``"planar"`` (q = qd = [x y yaw | joints]), ``joints`` (:class:`Joint`, the moving root first),
    ``frames`` (:class:`Frame`, the names a kinematics request, a wrench or a payload may give: the links,
    ``"tip"``, the root link, then the fixed frames such as a foot merged into its lower leg) and
    ``depth`` (most joints on a path from the root link). A fixed-root serial arm has nq = nv = nu = dof;
    so has the description of a server that predates trees."""

    model_id: str
    name: str
    dof: int
    joint_names: list
    link_names: list
    joint_types: list  # "revolute" or "prismatic", base to tip (the nu actuated joints)
    gravity: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    velocity_limit: np.ndarray
    effort_limit: np.ndarray
    armature: np.ndarray
    pinned: bool
    source: str  # "urdf", "dh" or "builtin"
    created: Optional[bool] = None  # registrations only: False when the model was already there
    nq: int = 0  # 0 only when built by hand: then dof
    nv: int = 0
    nu: int = 0
    root: str = "fixed"
    joints: list = field(default_factory=list)
    frames: list = field(default_factory=list)
    depth: int = 0

    def __post_init__(self) -> None:
        for name in ("nq", "nv", "nu"):  # a description without the tree fields: a fixed-root chain
            if not getattr(self, name):
                object.__setattr__(self, name, self.dof)

    def __str__(self) -> str:  # the id is what callers pass around
        return self.model_id

    @property
    def frame_names(self) -> list:
        """The names of :attr:`frames` in order (links, ``"tip"``, the root link, the fixed frames)."""
        return [f.name for f in self.frames]

    def joint(self, name: str) -> Joint:
        """The :class:`Joint` of this name (``KeyError`` listing the names otherwise)."""
        for j in self.joints:
            if j.name == name:
                return j
        raise KeyError(f"no joint '{name}' in model {self.name}: {[j.name for j in self.joints]}")


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
    """A rigid body held by a link for one call (a tool, a grasped part, a backpack): ``mass`` (kg, > 0),
    ``com`` (its mass centre in the holding frame, m) and ``inertia`` (3x3 about its mass centre, the
    holding frame's axes, kg m^2; zeros: a point mass). ``link`` names the holding frame (a name of
    :attr:`ModelInfo.frames`; ``""``: the tip frame). Merged into that link for that call only."""

    mass: float
    com: Sequence[float] = (0.0, 0.0, 0.0)
    inertia: Any = None  # 3x3; None: a point mass
    link: str = ""


@dataclass(frozen=True)
class LinkWrench:
    """A wrench the environment applies on a frame of the model (a foot's contact force, a tool's load):
    ``wrench`` = [mx, my, mz, fx, fy, fz], the moment about the frame's origin, as a (6,) array (the same
    for every state) or (count, 6) (one per state). ``link``: a name of :attr:`ModelInfo.frames` (``""``:
    the tip frame). ``reference``: ``"world"`` (world axes; ``"base"`` is the same) or ``"local"`` (the
    frame's own axes). A tuple ``(link, wrench)`` or ``(link, wrench, reference)`` works wherever a
    LinkWrench does."""

    link: str
    wrench: Any
    reference: str = "world"


@dataclass(frozen=True)
class Kinematics:
    """Result of :meth:`Client.kinematics`: the frame's ``rotation`` (count, 3, 3) (world <- frame) and
    ``origin`` (count, 3), and when requested ``jacobian`` (count, 6, dof) with rows [angular; linear],
    ``jdot_qd`` (count, 6), ``lambda_`` (count, r, r) and the poses of every frame ``frame_rotations``
    (count, F, 3, 3), ``frame_origins`` (count, F, 3) (F = nu + 1: the links and the tip, and the root link
    too for a moving root). With ``links`` (L frames at once) the per-frame results get a frame axis after
    the count axis: ``rotation`` (count, L, 3, 3), ``origin`` (count, L, 3), ``jacobian`` (count, L, 6, dof),
    ``jdot_qd`` (count, L, 6), ``lambda_`` (count, L, r, r). The centre of mass ``com`` (count, 3) and the
    total ``mass`` (count,), its Jacobian ``com_jacobian`` (count, 3, dof), the centroidal momentum matrix
    ``centroidal`` (count, 6, dof) and momentum ``centroidal_momentum`` (count, 6), rows [angular; linear]
    about the centre of mass, world axes. One state: no count axis. Terms not requested are None."""

    rotation: np.ndarray
    origin: np.ndarray
    jacobian: Optional[np.ndarray] = None
    jdot_qd: Optional[np.ndarray] = None
    lambda_: Optional[np.ndarray] = None
    frame_rotations: Optional[np.ndarray] = None
    frame_origins: Optional[np.ndarray] = None
    compute_time_ns: int = 0
    com: Optional[np.ndarray] = None
    mass: Any = None
    com_jacobian: Optional[np.ndarray] = None
    centroidal: Optional[np.ndarray] = None
    centroidal_momentum: Optional[np.ndarray] = None


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
    """Result of :meth:`Client.rollout`: ``states`` (K, T + 1, nq + nv) with x = [q, qd], and when linearized
    ``A`` (K, T, 2 nv, 2 nv) = dx_{t+1}/dx_t and ``B`` (K, T, 2 nv, nu) = dx_{t+1}/du_t, in the tangent
    space for a moving root (the q part along :func:`denoc.integrate`). For a fixed root nq = nv = nu = dof.
    One rollout (a 1-D ``x0``): no K axis."""

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
    max_depth: int = 0  # most joints on a path from a model's root (0: the server does not say)
    max_wrenches: int = 0  # most external wrenches (LinkWrench) in one request
    max_frames: int = 0  # most frames named in one kinematics request (links)


@dataclass(frozen=True)
class SimulationBatch:
    """One streamed batch of simulation samples, in time order: ``t`` (count,), ``q`` (count, nq), ``qd``
    (count, nv), energies (count,). The last batch has ``last = True`` and the run's statistics."""

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
