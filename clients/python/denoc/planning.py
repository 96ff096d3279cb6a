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


class Planning:
    """The planning calls of :class:`denoc.Client` (they use its ``_batches``)."""

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
        mid = convert.model_id(model_id)
        wire_reference = convert.choice("reference", reference, convert.REFERENCES)
        task_rows, r = convert.choice("lambda_rows", lambda_rows, convert.TASK_ROWS)
        single, count, dof, qf, f = convert.states(q, zeros=False, qd=qd)

        def build(n: int, cut: Callable):
            request = pb.KinematicsRequest(model_id=mid, count=n, dof=dof, q=cut(qf, dof), link=link,
                                           reference=wire_reference, jacobian=jacobian, jdot_qd=jdot_qd,
                                           all_frames=all_frames, lambda_rows=task_rows)
            setattr(request, "lambda", lambda_)
            if point is not None:
                request.point.CopyFrom(convert.vec3(point))
            if f["qd"] is not None:
                request.qd.extend(cut(f["qd"], dof))
            return request

        fits = convert.fits(f, count, dof)
        answers = self._batches(self._stub.Kinematics, mid, count, fits, build, payload, timeout)
        join = convert.joiner(answers, single)
        return Kinematics(
            rotation=join("rotation", 3, 3), origin=join("origin", 3),
            jacobian=join("jacobian", 6, dof) if jacobian else None,
            jdot_qd=join("jdot_qd", 6) if jdot_qd else None,
            lambda_=join("lambda", r, r) if lambda_ else None,
            frame_rotations=join("frame_rotations", dof + 1, 3, 3) if all_frames else None,
            frame_origins=join("frame_origins", dof + 1, 3) if all_frames else None,
            compute_time_ns=convert.compute_time(answers))

    def _derivatives(self, of, model_id: ModelRef, q, qd, third, third_name: str, tip_wrench, payload, timeout,
                     matrices: tuple, vector: str) -> Derivatives:
        """The Derivatives calls of a batch, split above max_states, joined: the fields named by matrices
        (count, dof, dof) and vector (count, dof) of the answer."""
        mid = convert.model_id(model_id)
        single, count, dof, qf, f = convert.states(q, qd=qd, **{third_name: third})
        wrench = None if tip_wrench is None else convert.batch("tip_wrench", tip_wrench).reshape(-1)

        def build(n: int, cut: Callable):
            request = pb.DerivativesRequest(model_id=mid, count=n, dof=dof, of=of, q=cut(qf, dof), qd=cut(f["qd"], dof),
                                            **{third_name: cut(f[third_name], dof)})
            if wrench is not None:
                request.tip_wrench.extend(cut(wrench, 6))
            return request

        fits = convert.fits(f, count, dof) and convert.fits({"tip_wrench": wrench}, count, 6)
        answers = self._batches(self._stub.Derivatives, mid, count, fits, build, payload, timeout)
        join = convert.joiner(answers, single)
        joined = {name: join(name, dof, dof) for name in matrices}
        joined[vector] = join(vector, dof)
        return Derivatives(**joined, compute_time_ns=convert.compute_time(answers))

    def inverse_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     qdd: ArrayLike = None, *, tip_wrench: ArrayLike = None, payload: Any = None,
                                     timeout: Optional[float] = None) -> Derivatives:
        """dtau/dq and dtau/dqd (and tau) per state, analytic (arrays as in :meth:`inverse_dynamics`)."""
        return self._derivatives(pb.DERIVATIVE_OF_INVERSE_DYNAMICS, model_id, q, qd, qdd, "qdd", tip_wrench, payload,
                                 timeout, ("dtau_dq", "dtau_dqd"), "tau")

    def forward_dynamics_derivatives(self, model_id: ModelRef, q: ArrayLike, qd: ArrayLike = None,
                                     tau: ArrayLike = None, *, tip_wrench: ArrayLike = None, payload: Any = None,
                                     timeout: Optional[float] = None) -> Derivatives:
        """dqdd/dq, dqdd/dqd and dqdd/dtau = I^-1 (and qdd) per state, analytic."""
        return self._derivatives(pb.DERIVATIVE_OF_FORWARD_DYNAMICS, model_id, q, qd, tau, "tau", tip_wrench, payload,
                                 timeout, ("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), "qdd")

    def rollout(self, model_id: ModelRef, x0: ArrayLike, u: ArrayLike, *, dt: float, scheme: str = "rk4",
                linearize: bool = False, payload: Any = None, timeout: Optional[float] = None) -> Rollouts:
        """Fixed-step rollouts: from ``x0`` ((K, 2 dof) or one (2 dof,) state, x = [q, qd]) under torques
        ``u`` ((K, T, dof), or (T, dof) shared by every rollout), steps of ``dt`` by ``scheme`` (``"rk4"`` or
        ``"semi_implicit_euler"``). With ``linearize``, A_t and B_t of every step. Returns :class:`Rollouts`."""
        mid = convert.model_id(model_id)
        wire_scheme = convert.choice("scheme", scheme, convert.SCHEMES)
        xa = convert.batch("x0", x0)
        single = xa.ndim == 1
        count, width = (1, xa.shape[0]) if single else xa.shape
        ua = np.ascontiguousarray(u, dtype=np.float64)
        if ua.ndim not in (2, 3) or width % 2:
            raise errors.InvalidArgumentError(
                f"x0 (K, 2 dof) and u (K, T, dof) or (T, dof): got shapes {xa.shape} and {ua.shape}")
        dof = width // 2
        shared = ua.ndim == 2
        steps = ua.shape[0] if shared else ua.shape[1]
        x0f, uf = xa.reshape(-1), ua.reshape(-1)

        def build(n: int, cut: Callable):
            return pb.RolloutRequest(model_id=mid, count=n, dof=dof, steps=steps, dt=dt, scheme=wire_scheme,
                                     x0=cut(x0f, width), u=uf if shared else cut(uf, math.prod(ua.shape[1:])),
                                     shared_controls=shared and n > 1, linearize=linearize)

        # K * steps states per call: floor(max_states / steps) rollouts per part; controls per rollout travel
        # with their rollout, a shared sequence goes whole to every part
        fits = shared or ua.shape[0] == count
        answers = self._batches(self._stub.Rollout, mid, count, fits, build, payload, timeout, steps)
        x = 2 * dof
        join = convert.joiner(answers, single)
        return Rollouts(states=join("states", steps + 1, x), A=join("a", steps, x, x) if linearize else None,
                        B=join("b", steps, x, dof) if linearize else None,
                        compute_time_ns=convert.compute_time(answers))
