"""Simulation on the server: :meth:`denoc.Client.simulate` streams the samples of a run batch by batch,
:meth:`denoc.Client.simulate_all` gathers them."""

from __future__ import annotations

import time
from typing import Iterator, Optional

import grpc
import numpy as np

from . import convert, errors
from .v1 import dynamics_pb2 as pb
from .values import ArrayLike, ModelRef, SimulationBatch, Trajectory


class Simulation:
    """The simulation calls of :class:`denoc.Client` (they use its stub, retry policy and ``_reregister``)."""

    def simulate(self, model_id: ModelRef, q0: ArrayLike, qd0: ArrayLike = None, *, t_end: float,
                 integrator: str = "dopri5", route: str = "saha", dt_out: float = 0.0,
                 sample_times: ArrayLike = None, step: float = 0.0, rtol: float = 0.0, atol: float = 0.0,
                 initial_step: float = 0.0, max_step: float = 0.0, max_steps: int = 0,
                 torque: ArrayLike = None, torque_times: ArrayLike = None, damping: ArrayLike = None,
                 batch_size: int = 0, timeout: Optional[float] = None) -> Iterator[SimulationBatch]:
        """Integrates the equations of motion from (q0, qd0) at t = 0 to ``t_end`` on the server and yields
        :class:`SimulationBatch` objects as they are streamed, in time order (the last has ``last=True``).

        ``integrator``: ``'dopri5'`` (adaptive, ``rtol``/``atol``) or ``'rk4'`` (fixed ``step``); a tree
        model takes both on its configuration manifold. ``q0`` has nq values, ``qd0`` nv. Samples at 0,
        ``dt_out``, ..., ``t_end`` or at ``sample_times``. Torque of the nu actuated joints: none (zero), a
        constant ``torque`` (nu values), or with ``torque_times`` (k values) a (k, nu) ``torque`` schedule,
        piecewise linear.
        ``damping``: nu viscous coefficients. Zero tuning values mean the server's
        defaults (docs/simulation.md). A run that stops part way raises :class:`denoc.AbortedError`
        after the batches before it were yielded.
        """
        mid = convert.model_id(model_id)
        wire_integrator = convert.choice("integrator", integrator, convert.INTEGRATORS)
        wire_route = convert.choice("route", route, convert.ROUTES)
        q0a = convert.batch("q0", q0).reshape(-1)
        offset, _ = self._root_sizes(model_id, timeout)
        dof = max(0, q0a.size - offset)
        request = pb.SimulateRequest(model_id=mid, dof=dof, q0=q0a,
                                     qd0=np.zeros(dof) if qd0 is None else convert.batch("qd0", qd0).reshape(-1),
                                     t_end=t_end, integrator=wire_integrator, route=wire_route,
                                     dt_out=dt_out, step=step, rtol=rtol, atol=atol, initial_step=initial_step,
                                     max_step=max_step, max_steps=max_steps, batch_size=batch_size)
        if sample_times is not None:
            request.sample_times.extend(convert.batch("sample_times", sample_times).reshape(-1))
        if torque is not None:
            request.torque_values.extend(convert.batch("torque", torque).reshape(-1))
        if torque_times is not None:
            request.torque_times.extend(convert.batch("torque_times", torque_times).reshape(-1))
        if damping is not None:
            request.damping.extend(convert.batch("damping", damping).reshape(-1))
        return self._simulate(request, mid, timeout)

    def _simulate(self, request, mid: str, timeout: Optional[float]) -> Iterator[SimulationBatch]:
        timeout = self.timeout if timeout is None else timeout
        attempt = 0
        reregistered = False
        while True:
            received = False
            call = self._stub.Simulate(request, timeout=timeout, metadata=self._metadata)
            try:
                for r in call:
                    received = True
                    n, d = r.count, r.dof
                    yield SimulationBatch(
                        t=np.array(r.t), q=np.array(r.q).reshape(n, len(r.q) // n if n else d),
                        qd=np.array(r.qd).reshape(n, d),
                        energy=np.array(r.energy), kinetic=np.array(r.kinetic),
                        potential=np.array(r.potential), last=r.last, steps=r.steps,
                        rejected_steps=r.rejected_steps, evaluations=r.evaluations,
                        compute_time_ns=r.compute_time_ns)
                return
            except grpc.RpcError as e:
                code = e.code()
                if not received:  # nothing yielded yet: the run can start again transparently
                    if code == grpc.StatusCode.UNAVAILABLE and attempt < self.retries:
                        time.sleep(self.retry_backoff * (2 ** attempt))
                        attempt += 1
                        continue
                    if (code == grpc.StatusCode.NOT_FOUND and not reregistered
                            and self._reregister(mid, timeout, e.details())):
                        reregistered = True
                        continue
                raise errors.from_rpc_error(e) from None
            finally:
                call.cancel()  # a no-op after the end; stops the server's run if the caller stopped early

    def simulate_all(self, model_id: ModelRef, q0: ArrayLike, qd0: ArrayLike = None, **kwargs) -> Trajectory:
        """:meth:`simulate` collected into one :class:`Trajectory` (same arguments)."""
        batches = list(self.simulate(model_id, q0, qd0, **kwargs))
        last = batches[-1]
        return Trajectory(
            t=np.concatenate([b.t for b in batches]), q=np.concatenate([b.q for b in batches]),
            qd=np.concatenate([b.qd for b in batches]), energy=np.concatenate([b.energy for b in batches]),
            kinetic=np.concatenate([b.kinetic for b in batches]),
            potential=np.concatenate([b.potential for b in batches]), steps=last.steps,
            rejected_steps=last.rejected_steps, evaluations=last.evaluations, batches=len(batches))
