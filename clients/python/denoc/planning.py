"""The calls for planners: kinematics, the analytic derivatives of inverse and forward dynamics, and
rollouts, split above the server's ``max_states`` like the dynamics calls (methods of
:class:`denoc.Client`)."""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

import numpy as np

from . import convert, errors
from .v1 import dynamics_pb2 as pb
from .values import ArrayLike, Derivatives, Kinematics, ModelRef, Rollouts


def _scalars(values: np.ndarray, single: bool) -> Any:
    """One value per state: a float for one state, else the (count,) array."""
    return float(values.reshape(-1)[0]) if single else values.reshape(-1)


class Planning:
    """The planning calls of :class:`denoc.Client` (they use its ``_batches``)."""

    def kinematics(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None, *, link: str = "",
                   links: Optional[Sequence[str]] = None, point: Optional[Sequence[float]] = None,
                   reference: str = "base", jacobian: bool = False, jdot_qd: bool = False, lambda_: bool = False,
                   lambda_rows: str = "full", all_frames: bool = False, center_of_mass: bool = False,
                   com_jacobian: bool = False, centroidal: bool = False, centroidal_momentum: bool = False,
                   payload: Any = None, timeout: Optional[float] = None) -> Kinematics:
        """The pose of a frame (``link``, a name of ``ModelInfo.frames``: a link, ``"tip"`` or the root link;
        ``""``: the tip frame), or of several at once (``links``, a list of names: four feet, two hands), per
        state and, on request, the Jacobian of ``point`` (in each frame's coordinates) in ``reference`` axes
        (``"base"``/``"world"`` or ``"local"``), (dJ/dt) qd (needs ``qd``), the operational-space inertia
        (``lambda_``; ``lambda_rows`` ``"full"`` 6x6, ``"linear"`` or ``"angular"`` 3x3), the poses of every
        frame, the centre of mass and total mass (``center_of_mass``), its Jacobian (``com_jacobian``), the
        centroidal momentum matrix A_G (``centroidal``) and momentum A_G qd (``centroidal_momentum``, needs
        ``qd``). ``q`` has nq values per state, ``qd`` nv. ``payload``: a :class:`Payload` for this call.
        Returns :class:`Kinematics` (with ``links``, a frame axis after the count axis)."""
        mid = convert.model_id(model_id)
        wire_reference = convert.choice("reference", reference, convert.REFERENCES)
        task_rows, r = convert.choice("lambda_rows", lambda_rows, convert.TASK_ROWS)
        names = None if links is None else ([links] if isinstance(links, str) else [str(x) for x in links])
        offset, _ = self._root_sizes(model_id, timeout)
        single, count, dof, qf, f = convert.states(q, zeros=False, offset=offset, qd=qd)
        nq = dof + offset

        def build(n: int, cut: Callable):
            request = pb.KinematicsRequest(model_id=mid, count=n, dof=dof, q=cut(qf, nq), link=link,
                                           reference=wire_reference, jacobian=jacobian, jdot_qd=jdot_qd,
                                           all_frames=all_frames, lambda_rows=task_rows,
                                           center_of_mass=center_of_mass, com_jacobian=com_jacobian,
                                           centroidal=centroidal, centroidal_momentum=centroidal_momentum)
            setattr(request, "lambda", lambda_)
            if names is not None:
                request.links.extend(names)
            if point is not None:
                request.point.CopyFrom(convert.vec3(point))
            if f["qd"] is not None:
                request.qd.extend(cut(f["qd"], dof))
            return request

        fits = convert.fits(f, count, dof)
        answers = self._batches(self._stub.Kinematics, mid, count, fits, build, payload, timeout)
        join = convert.joiner(answers, single)
        frames = () if names is None else (len(names),)  # the frame axis of several frames
        # all_frames: F frames (nu + 1, or nu + 2 with a moving root), read from the answer's size
        F = len(answers[0][1].frame_origins) // (3 * answers[0][0]) if all_frames and answers[0][0] else 0
        return Kinematics(
            rotation=join("rotation", *frames, 3, 3), origin=join("origin", *frames, 3),
            jacobian=join("jacobian", *frames, 6, dof) if jacobian else None,
            jdot_qd=join("jdot_qd", *frames, 6) if jdot_qd else None,
            lambda_=join("lambda", *frames, r, r) if lambda_ else None,
            frame_rotations=join("frame_rotations", F, 3, 3) if all_frames else None,
            frame_origins=join("frame_origins", F, 3) if all_frames else None,
            com=join("com", 3) if center_of_mass else None,
            mass=_scalars(join("mass"), single) if center_of_mass else None,
            com_jacobian=join("com_jacobian", 3, dof) if com_jacobian else None,
            centroidal=join("centroidal", 6, dof) if centroidal else None,
            centroidal_momentum=join("centroidal_momentum", 6) if centroidal_momentum else None,
            compute_time_ns=convert.compute_time(answers))

    def _derivatives(self, of, model_id: ModelRef, q, qd, third, third_name: str, tip_wrench, wrenches, payload,
                     timeout, matrices: tuple, vector: str) -> Derivatives:
        """The Derivatives calls of a batch, split above max_states, joined: the fields named by matrices
        (count, dof, dof) and vector (count, dof) of the answer."""
        mid = convert.model_id(model_id)
        offset, _ = self._root_sizes(model_id, timeout)
        single, count, dof, qf, f = convert.states(q, offset=offset, qd=qd, **{third_name: third})
        nq = dof + offset
        wrench = None if tip_wrench is None else convert.batch("tip_wrench", tip_wrench).reshape(-1)
        links = convert.link_wrenches(wrenches)

        def build(n: int, cut: Callable):
            request = pb.DerivativesRequest(model_id=mid, count=n, dof=dof, of=of, q=cut(qf, nq), qd=cut(f["qd"], dof),
                                            **{third_name: cut(f[third_name], dof)})
            if wrench is not None:
                request.tip_wrench.extend(cut(wrench, 6))
            convert.add_wrenches(request, links, cut)
            return request

        fits = (convert.fits(f, count, dof) and convert.fits({"tip_wrench": wrench}, count, 6)
                and convert.wrenches_fit(links, count))
        answers = self._batches(self._stub.Derivatives, mid, count, fits, build, payload, timeout)
        join = convert.joiner(answers, single)
        joined = {name: join(name, dof, dof) for name in matrices}
        joined[vector] = join(vector, dof)
        return Derivatives(**joined, compute_time_ns=convert.compute_time(answers))

    def inverse_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     qdd: ArrayLike = None, *, tip_wrench: ArrayLike = None, wrenches: Any = None,
                                     payload: Any = None, timeout: Optional[float] = None) -> Derivatives:
        """dtau/dq and dtau/dqd (and tau) per state, analytic (arrays and ``wrenches`` as in
        :meth:`inverse_dynamics`). The derivatives include the wrenches' own dependence on q: a ``"local"`` one
        turns with its link, a ``"world"`` one keeps its axes while its point moves with the link."""
        return self._derivatives(pb.DERIVATIVE_OF_INVERSE_DYNAMICS, model_id, q, qd, qdd, "qdd", tip_wrench, wrenches,
                                 payload, timeout, ("dtau_dq", "dtau_dqd"), "tau")

    def forward_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     tau: ArrayLike = None, *, tip_wrench: ArrayLike = None, wrenches: Any = None,
                                     payload: Any = None, timeout: Optional[float] = None) -> Derivatives:
        """dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (and qdd) per state, analytic; ``wrenches`` as in
        :meth:`inverse_dynamics_derivatives`."""
        return self._derivatives(pb.DERIVATIVE_OF_FORWARD_DYNAMICS, model_id, q, qd, tau, "tau", tip_wrench, wrenches,
                                 payload, timeout, ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), "qdd")

    def rollout(self, model_id: ModelRef, x0: ArrayLike, u: ArrayLike, *, dt: float, scheme: str = "rk4",
                linearize: bool = False, wrenches: Any = None, payload: Any = None,
                timeout: Optional[float] = None) -> Rollouts:
        """Fixed-step rollouts: from ``x0`` ((K, nq + nv) or one (nq + nv,) state, x = [q, qd]) under torques
        ``u`` of the nu actuated joints ((K, T, nu), or (T, nu) shared by every rollout), steps of ``dt`` by
        ``scheme`` (``"rk4"`` or ``"semi_implicit_euler"``); a floating root's q moves on the manifold (its
        quaternion stays unit). With ``linearize``, A_t (2 nv x 2 nv) and B_t (2 nv x nu) of every step, in
        the tangent space for a moving root. For a fixed root nq = nv = nu = dof. ``wrenches``: external wrenches
        on named frames as in :meth:`inverse_dynamics`, each held constant over the whole rollout: a (6,) wrench
        for every rollout or (K, 6), one per rollout. Returns :class:`Rollouts`."""
        mid = convert.model_id(model_id)
        wire_scheme = convert.choice("scheme", scheme, convert.SCHEMES)
        offset, root_nv = self._root_sizes(model_id, timeout)
        xa = convert.batch("x0", x0)
        single = xa.ndim == 1
        count, width = (1, xa.shape[0]) if single else xa.shape
        ua = np.ascontiguousarray(u, dtype=np.float64)
        if ua.ndim not in (2, 3) or (width - offset) % 2 or width < offset:
            raise errors.InvalidArgumentError(
                f"x0 (K, nq + nv) and u (K, T, nu) or (T, nu): got shapes {xa.shape} and {ua.shape}")
        dof = (width - offset) // 2
        nu = max(0, dof - root_nv)
        shared = ua.ndim == 2
        steps = ua.shape[0] if shared else ua.shape[1]
        x0f, uf = xa.reshape(-1), ua.reshape(-1)
        links = convert.link_wrenches(wrenches)

        def build(n: int, cut: Callable):
            request = pb.RolloutRequest(model_id=mid, count=n, dof=dof, steps=steps, dt=dt, scheme=wire_scheme,
                                        x0=cut(x0f, width), u=uf if shared else cut(uf, math.prod(ua.shape[1:])),
                                        shared_controls=shared and n > 1, linearize=linearize)
            convert.add_wrenches(request, links, cut)  # one per rollout: cut with its rollouts
            return request

        # K * steps states per call: floor(max_states / steps) rollouts per part; controls per rollout travel
        # with their rollout, a shared sequence goes whole to every part
        fits = (shared or ua.shape[0] == count) and convert.wrenches_fit(links, count)
        answers = self._batches(self._stub.Rollout, mid, count, fits, build, payload, timeout, steps)
        x = 2 * dof
        join = convert.joiner(answers, single)
        return Rollouts(states=join("states", steps + 1, width), A=join("a", steps, x, x) if linearize else None,
                        B=join("b", steps, x, nu) if linearize else None,
                        compute_time_ns=convert.compute_time(answers))
