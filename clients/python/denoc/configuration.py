"""The configuration manifold of a model with a floating or planar root, in numpy on the client: the same
conventions and formulas as the core's ``denoc/configuration.hpp`` (docs/trees.md), so a planner's inner loop
(a line search, a finite difference, a state error) moves q without a round trip to the server.

A floating root's q starts with [x y z | qx qy qz qw] (the root link's origin in the world, then its
orientation world <- root link as a unit quaternion, vector part first, scalar last) and its velocity with
[wx wy wz | vx vy vz], both in the root link's axes; a planar root's q and velocity start with [x y yaw]; the
joints follow. Every function takes a batch too: arrays with any leading axes, the last one nq (or nv).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from . import errors
from .values import ModelInfo

QUATERNION_TOLERANCE = 1e-6  # the core's kQuaternionTolerance: |norm - 1| above it is refused
MAX_POSITION = 1e6  # the core's kMaxPosition: every entry of q within it (m or rad)
ModelOrRoot = Union[ModelInfo, str]
_ROOT_Q = {"fixed": 0, "floating": 7, "planar": 3}
_ROOT_V = {"fixed": 0, "floating": 6, "planar": 3}


def _root(model: ModelOrRoot) -> str:
    root = model.root if isinstance(model, ModelInfo) else model
    if root not in _ROOT_Q:
        raise errors.InvalidArgumentError(f"root: expected one of {sorted(_ROOT_Q)} or a ModelInfo, got {root!r}")
    return root


def _sizes(model: ModelOrRoot, q: np.ndarray) -> tuple:
    """(root, nq, nv): a ModelInfo's, or for a root name the width of q."""
    root = _root(model)
    if isinstance(model, ModelInfo):
        return root, model.nq, model.nv
    nq = q.shape[-1]
    return root, nq, nq - _ROOT_Q[root] + _ROOT_V[root]


def _array(name: str, value: Any, width: int, what: str) -> np.ndarray:
    a = np.array(value, dtype=np.float64)  # a copy: the functions return new arrays
    if a.ndim == 0 or a.shape[-1] != width:
        raise errors.InvalidArgumentError(f"{name}: expected {width} values per state ({what}), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise errors.InvalidArgumentError(f"{name}: has a non-finite entry at {tuple(np.argwhere(~np.isfinite(a))[0])}")
    return a


def _configuration(model: ModelOrRoot, name: str, q: Any, function: str, normalizing: bool = False) -> tuple:
    """(root, nv, q as float64) after the core's checks: nq entries, finite, within MAX_POSITION, and for a
    floating root a quaternion whose norm is within QUATERNION_TOLERANCE of 1 (unless normalizing, which
    takes any finite non-zero norm)."""
    qa = np.array(q, dtype=np.float64)
    root, nq, nv = _sizes(model, qa if qa.ndim else qa.reshape(1))
    qa = _array(name, qa, nq, "nq: the root's coordinates, then one per joint")
    bad = np.abs(qa) > MAX_POSITION
    if bad.any():
        raise errors.InvalidArgumentError(f"{function}: {name} has an entry beyond {MAX_POSITION:g} at "
                                          f"{tuple(np.argwhere(bad)[0])}")
    if root == "floating":
        norm = np.linalg.norm(qa[..., 3:7], axis=-1)
        bad = ~(norm > 0) if normalizing else ~(np.abs(norm - 1.0) <= QUATERNION_TOLERANCE)
        if bad.any():
            at = tuple(np.argwhere(np.atleast_1d(bad))[0])
            state = f" (state {at})" if qa.ndim > 1 else ""
            expected = "a non-zero norm" if normalizing else f"1 within {QUATERNION_TOLERANCE:g}"
            raise errors.InvalidArgumentError(
                f"{function}: {name}[3..7), the root's quaternion{state}, has norm "
                f"{float(np.atleast_1d(norm)[at]):.6g}, expected {expected}")
    return root, nv, qa


def _quaternion_multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a * b of quaternions [x, y, z, w] (scalar last), over leading axes."""
    av, aw, bv, bw = a[..., :3], a[..., 3:], b[..., :3], b[..., 3:]
    return np.concatenate([aw * bv + bw * av + np.cross(av, bv), aw * bw - np.sum(av * bv, -1, keepdims=True)], -1)


def rotation_matrix(quaternion: Any) -> np.ndarray:
    """The rotation matrix (..., 3, 3) of unit quaternions [qx, qy, qz, qw] (..., 4) (scalar last)."""
    x, y, z, w = np.moveaxis(np.asarray(quaternion, dtype=np.float64), -1, 0)
    return np.stack([np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
                     np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
                     np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1)], -2)


def _exp(w: np.ndarray) -> np.ndarray:
    """The unit quaternion of a rotation vector (..., 3): a turn by |w| about w / |w|."""
    angle = np.linalg.norm(w, axis=-1, keepdims=True)
    tiny = angle < 1e-300
    safe = np.where(tiny, 1.0, angle)
    return np.concatenate([np.where(tiny, 0.0, np.sin(0.5 * angle) * w / safe),
                           np.where(tiny, 1.0, np.cos(0.5 * angle))], -1)


def _log(r: np.ndarray) -> np.ndarray:
    """The rotation vector (..., 3) of unit quaternions, the shorter way round (angle <= pi)."""
    r = np.where(r[..., 3:] < 0.0, -r, r)
    v, w = r[..., :3], r[..., 3:]
    s = np.linalg.norm(v, axis=-1, keepdims=True)
    tiny = s < 1e-300
    return np.where(tiny, 2.0 * v, 2.0 * np.arctan2(s, w) * v / np.where(tiny, 1.0, s))


def _unit(r: np.ndarray) -> np.ndarray:
    return r / np.linalg.norm(r, axis=-1, keepdims=True)


def neutral(model: ModelInfo) -> np.ndarray:
    """The neutral configuration (nq,): the joints at 0 clamped into their limits, the root at the origin with
    the identity orientation (the core's ``neutralConfiguration``)."""
    root = _root(model)
    q = np.zeros(model.nq)
    if root == "floating":
        q[6] = 1.0
    lower = np.asarray(model.lower, dtype=np.float64)
    upper = np.asarray(model.upper, dtype=np.float64)
    start = model.nq - model.nu
    if lower.size == model.nu and upper.size == model.nu:
        q[start:] = np.minimum(np.maximum(0.0, lower), upper)
    return q


def integrate(model: ModelOrRoot, q: Any, v: Any, dt: float = 1.0) -> np.ndarray:
    """q moved by the velocity v for dt (the core's ``integrateConfiguration``): a floating root link turns
    by exp(w dt) about its own axes and its origin moves by R v dt (R its orientation at the start; the
    quaternion comes out unit), a planar root and every joint move by v dt. ``model``: a :class:`ModelInfo`
    or a root name (``"fixed"``, ``"floating"``, ``"planar"``). q (..., nq), v (..., nv), broadcast over
    their leading axes; returns (..., nq)."""
    root, nv, qa = _configuration(model, "q", q, "integrate")
    va = _array("v", v, nv, "nv: the root's velocity coordinates, then one per joint")
    if not np.isfinite(dt):
        raise errors.InvalidArgumentError("integrate: dt is not finite")
    shape = np.broadcast_shapes(qa.shape[:-1], va.shape[:-1])
    qa = np.broadcast_to(qa, shape + qa.shape[-1:]).copy()
    va = np.broadcast_to(va, shape + va.shape[-1:])
    nqr, nr = _ROOT_Q[root], _ROOT_V[root]
    if root == "floating":
        r = _unit(qa[..., 3:7])
        qa[..., :3] += np.einsum("...ij,...j->...i", rotation_matrix(r), va[..., 3:6] * dt)
        qa[..., 3:7] = _unit(_quaternion_multiply(r, _exp(va[..., :3] * dt)))
    elif root == "planar":
        qa[..., :3] += va[..., :3] * dt
    qa[..., nqr:] += va[..., nr:] * dt
    return qa


def difference(model: ModelOrRoot, q0: Any, q1: Any) -> np.ndarray:
    """The velocity that moves q0 to q1 in unit time (the core's ``differenceConfiguration``), the inverse
    of :func:`integrate`: ``difference(m, q0, integrate(m, q0, v, 1)) == v`` while the turn is below pi. A
    floating root's part is [log(r0^-1 r1); R0^T (p1 - p0)] (root axes). q0, q1 (..., nq); returns
    (..., nv)."""
    root, nv, a = _configuration(model, "q0", q0, "difference")
    _, _, b = _configuration(model, "q1", q1, "difference")
    shape = np.broadcast_shapes(a.shape[:-1], b.shape[:-1])
    a = np.broadcast_to(a, shape + a.shape[-1:])
    b = np.broadcast_to(b, shape + b.shape[-1:])
    nqr, nr = _ROOT_Q[root], _ROOT_V[root]
    v = np.zeros(shape + (nv,))
    if root == "floating":
        r0, r1 = _unit(a[..., 3:7]), _unit(b[..., 3:7])
        conj = np.concatenate([-r0[..., :3], r0[..., 3:]], -1)
        v[..., :3] = _log(_quaternion_multiply(conj, r1))
        v[..., 3:6] = np.einsum("...ji,...j->...i", rotation_matrix(r0), b[..., :3] - a[..., :3])
    elif root == "planar":
        v[..., :3] = b[..., :3] - a[..., :3]
    v[..., nr:] = b[..., nqr:] - a[..., nqr:]
    return v


def normalize(model: ModelOrRoot, q: Any) -> np.ndarray:
    """q with a floating root's quaternion divided by its norm (any finite non-zero norm: a planner's
    step in R^4 may leave the unit sphere; the core's ``normalizeConfiguration`` takes only norms within
    1e-6 of 1). Other roots: q unchanged (a copy). q (..., nq)."""
    root, _, qa = _configuration(model, "q", q, "normalize", normalizing=True)
    if root == "floating":
        qa[..., 3:7] = _unit(qa[..., 3:7])
    return qa


def random_configuration(model: ModelInfo, rng: Any = None, count: Any = None) -> np.ndarray:
    """Random configurations like the core's ``randomConfiguration``: joints uniform within their limits
    ([-pi, pi] rad or [-1, 1] m without finite limits), the root's position in [-1, 1] m, its orientation
    uniform over the rotations (yaw in [-pi, pi]). ``rng``: a ``numpy.random.Generator`` (default: a new
    one); ``count``: None for one (nq,) state, else (count, nq)."""
    rng = np.random.default_rng(rng)
    root = _root(model)
    n = 1 if count is None else int(count)
    q = np.tile(neutral(model), (n, 1))
    if root == "floating":
        q[:, :3] = rng.uniform(-1, 1, (n, 3))
        x = rng.normal(size=(n, 4))
        q[:, 3:7] = x / np.linalg.norm(x, axis=1, keepdims=True)
    elif root == "planar":
        q[:, :2] = rng.uniform(-1, 1, (n, 2))
        q[:, 2] = rng.uniform(-np.pi, np.pi, n)
    start = model.nq - model.nu
    types = list(model.joint_types)
    lower, upper = np.asarray(model.lower, dtype=float), np.asarray(model.upper, dtype=float)
    for i in range(model.nu):
        lo = -np.pi if i >= len(types) or types[i] != "prismatic" else -1.0
        hi = -lo
        if i < lower.size and i < upper.size and np.isfinite(lower[i]) and np.isfinite(upper[i]):
            lo, hi = lower[i], upper[i]
        q[:, start + i] = rng.uniform(lo, hi, n)
    return q[0] if count is None else q
