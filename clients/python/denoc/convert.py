"""Conversions between the client's values (numpy arrays, :mod:`denoc.values`) and the ``denoc.v1``
messages: the enum names, vectors, batches of states, answers reshaped and checked, payloads, model
descriptions and ``denoc-dh/1`` documents. Used by the client's calls; not part of the public API."""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Optional, Sequence

import numpy as np

from . import errors
from .v1 import dynamics_pb2 as pb
from .values import ArrayLike, Frame, Joint, LinkWrench, ModelInfo, ModelRef, Payload

ROUTES = {"saha": pb.FORWARD_ROUTE_SAHA, "fixman": pb.FORWARD_ROUTE_FIXMAN,
          "cholesky": pb.FORWARD_ROUTE_CHOLESKY}
INTEGRATORS = {"dopri5": pb.INTEGRATOR_DOPRI5, "rk4": pb.INTEGRATOR_RK4}
SCHEMES = {"rk4": pb.STEP_SCHEME_RK4, "semi_implicit_euler": pb.STEP_SCHEME_SEMI_IMPLICIT_EULER}
REFERENCES = {"base": pb.REFERENCE_FRAME_BASE, "world": pb.REFERENCE_FRAME_BASE, "local": pb.REFERENCE_FRAME_LOCAL}
TASK_ROWS = {"full": (pb.TASK_ROWS_FULL, 6), "linear": (pb.TASK_ROWS_LINEAR, 3),
             "angular": (pb.TASK_ROWS_ANGULAR, 3)}
JOINT_TYPES = {pb.JOINT_TYPE_REVOLUTE: "revolute", pb.JOINT_TYPE_PRISMATIC: "prismatic",
               pb.JOINT_TYPE_FLOATING: "floating", pb.JOINT_TYPE_PLANAR: "planar"}
ROOTS = {"fixed": pb.ROOT_JOINT_FIXED, "floating": pb.ROOT_JOINT_FLOATING, "planar": pb.ROOT_JOINT_PLANAR}
ROOT_NAMES = {value: name for name, value in ROOTS.items()}
DEG = math.pi / 180.0  # the same constant as the C++ parser of denoc-dh/1 files


def choice(name: str, value: str, table: Mapping[str, Any]) -> Any:
    """The wire value of an option given by name (a route, an integrator, ...); InvalidArgumentError listing
    the names otherwise."""
    if value not in table:
        raise errors.InvalidArgumentError(f"{name}: expected one of {sorted(table)}, got {value!r}")
    return table[value]


def model_id(model: ModelRef) -> str:
    return model.model_id if isinstance(model, ModelInfo) else str(model)


def model_info(m: "pb.ModelInfo", created: Optional[bool] = None) -> ModelInfo:
    return ModelInfo(model_id=m.model_id, name=m.name, dof=m.dof, joint_names=list(m.joint_names),
                     link_names=list(m.link_names),
                     joint_types=[JOINT_TYPES.get(t, "unspecified") for t in m.joint_types],
                     gravity=np.array([m.gravity.x, m.gravity.y, m.gravity.z]), lower=np.array(m.lower),
                     upper=np.array(m.upper), velocity_limit=np.array(m.velocity_limit),
                     effort_limit=np.array(m.effort_limit), armature=np.array(m.armature), pinned=m.pinned,
                     source=m.source, created=created, nq=m.nq, nv=m.nv, nu=m.nu,
                     root=ROOT_NAMES.get(m.root, "fixed"),
                     joints=[Joint(name=j.name, type=JOINT_TYPES.get(j.type, "unspecified"), parent=j.parent,
                                   q_index=j.q_index, v_index=j.v_index, nq=j.nq, nv=j.nv, link=j.link,
                                   depth=j.depth) for j in m.joints],
                     frames=[Frame(name=f.name, joint=f.joint, fixed_to=f.fixed_to) for f in m.frames], depth=m.depth)


def vec3(v: Optional[Sequence[float]]) -> Optional["pb.Vec3"]:
    if v is None:
        return None
    a = np.asarray(v, dtype=np.float64).reshape(-1)
    if a.size != 3:
        raise errors.InvalidArgumentError(f"gravity: expected 3 values, got {a.size}")
    return pb.Vec3(x=float(a[0]), y=float(a[1]), z=float(a[2]))


def batch(name: str, value: ArrayLike) -> np.ndarray:
    """value as a C-contiguous float64 array of 1 or 2 dimensions."""
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.ndim not in (1, 2):
        raise errors.InvalidArgumentError(
            f"{name}: expected a 1-D array (one state) or a 2-D array (count, dof), got shape {a.shape}")
    return a


def states(q: ArrayLike, zeros: bool = True, offset: int = 0, **others: ArrayLike):
    """Normalises the per-state arrays of a call: (single, count, dof, q, {name: flat values}), dof the
    width of q less ``offset`` (nq - nv of the model: 1 for a floating root, else 0). An array not given is
    zeros, or None when not zeros."""
    qa = batch("q", q)
    single = qa.ndim == 1
    count, width = (1, qa.shape[0]) if single else qa.shape
    dof = max(0, width - offset)
    flat = {}
    for name, value in others.items():
        if value is None:
            flat[name] = np.zeros(count * dof) if zeros else None
        else:
            flat[name] = batch(name, value).reshape(-1)
    return single, count, dof, qa.reshape(-1), flat


def fits(flat: dict, count: int, width: int) -> bool:
    """Whether every flat array given holds count items of width values (a batch that can be split)."""
    return all(v is None or v.size == count * width for v in flat.values())


def join(answers: list, single: bool, field: str, *tail: int) -> np.ndarray:
    """The field of every part's answer ((states, answer) pairs, in order) as one array of shape
    (count, *tail), or tail for one state."""
    out = np.concatenate([shape(getattr(r, field), False, n, *tail) for n, r in answers])
    return out.reshape(tail) if single else out


def joiner(answers: list, single: bool) -> Callable:
    """join(field, *tail) of :func:`join` for these answers."""
    return lambda field, *tail: join(answers, single, field, *tail)


def compute_time(answers: list) -> int:
    """The server's compute time of every part's answer ((states, answer) pairs), summed, ns."""
    return sum(r.compute_time_ns for _, r in answers)


def shape(values, single: bool, count: int, *tail: int) -> np.ndarray:
    a = np.array(values, dtype=np.float64)  # a copy: the answer's memory belongs to protobuf
    if a.size != count * math.prod(tail):  # never expected: the server checks its answers
        raise errors.InternalError(f"answer has {a.size} values, expected {count * math.prod(tail)}")
    return a.reshape(tail if single else (count, *tail))


def dh_from_json(doc: Mapping[str, Any]) -> "tuple[pb.DHModel, Optional[str], Optional[pb.Vec3]]":
    """A ``denoc-dh/1`` document (docs/model-format.md) as a DHModel, its name and gravity."""
    if doc.get("format") != "denoc-dh/1":
        raise errors.InvalidArgumentError(f"format: expected \"denoc-dh/1\", got {doc.get('format')!r}")
    unit = doc.get("angle_unit", "rad")
    if unit not in ("rad", "deg"):
        raise errors.InvalidArgumentError(f"angle_unit: expected \"deg\" or \"rad\", got {unit!r}")
    angle = DEG if unit == "deg" else 1.0
    links = doc.get("links")
    if not isinstance(links, list) or not links:
        raise errors.InvalidArgumentError("links: expected an array of at least one link")
    model = pb.DHModel()
    for k, link in enumerate(links):
        where = f"links[{k}]"
        try:
            kind = link["type"]
            if kind not in ("revolute", "prismatic"):
                raise errors.InvalidArgumentError(
                    f"{where}.type: expected \"revolute\" or \"prismatic\", got {kind!r}")
            out = model.links.add(
                joint=link.get("joint", ""), link=link.get("link", ""),
                type=pb.JOINT_TYPE_REVOLUTE if kind == "revolute" else pb.JOINT_TYPE_PRISMATIC,
                a=float(link["a"]), b=float(link["b"]), alpha=float(link["alpha"]) * angle,
                theta=float(link["theta"]) * angle, mass=float(link["mass"]),
                armature=float(link.get("armature", 0.0)))
            out.com.CopyFrom(vec3(link["com"]))
            inertia = link["inertia"]
            if "principal" in inertia:
                ixx, iyy, izz = (float(x) for x in inertia["principal"])
                out.inertia.CopyFrom(pb.Inertia(ixx=ixx, iyy=iyy, izz=izz))
            else:
                out.inertia.CopyFrom(pb.Inertia(**{key: float(inertia[key]) for key in
                                                   ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")}))
            limits = link.get("limits")
            if limits:
                unit_q = angle if kind == "revolute" else 1.0
                for key in ("lower", "upper", "velocity"):
                    if key in limits:
                        setattr(out.limits, key, float(limits[key]) * unit_q)
                if "effort" in limits:
                    out.limits.effort = float(limits["effort"])
        except KeyError as e:
            raise errors.InvalidArgumentError(f"{where}.{e.args[0]}: missing (a required field)") from None
        except (TypeError, ValueError) as e:
            if isinstance(e, errors.DenocError):
                raise
            raise errors.InvalidArgumentError(f"{where}: {e}") from None
    gravity = vec3(doc["gravity"]) if "gravity" in doc else None
    return model, doc.get("name") or None, gravity


def payload(value: Any) -> Optional["pb.Payload"]:
    """A :class:`Payload` (or a dict of its fields) as its message; None for none."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        value = Payload(**value)
    if not isinstance(value, Payload):
        raise errors.InvalidArgumentError("payload: expected a denoc.Payload or a dict with mass, com, inertia")
    i = np.zeros((3, 3)) if value.inertia is None else np.asarray(value.inertia, dtype=np.float64)
    if i.shape != (3, 3):
        raise errors.InvalidArgumentError(f"payload.inertia: expected a 3x3 array, got shape {i.shape}")
    return pb.Payload(mass=float(value.mass), com=vec3(value.com),
                      inertia=pb.Inertia(ixx=i[0, 0], ixy=i[0, 1], ixz=i[0, 2], iyy=i[1, 1], iyz=i[1, 2],
                                         izz=i[2, 2]), link=value.link or "")


def link_wrenches(value: Any) -> list:
    """External wrenches (a list of :class:`LinkWrench`, ``(link, wrench)`` or ``(link, wrench, reference)``;
    None: none) as [(link, wire reference, flat values, per_state)]: per_state when the wrench is (count, 6)
    (cut with its states when a batch is split), else the 6 values go whole with every part."""
    if value is None:
        return []
    if isinstance(value, (LinkWrench, Mapping)) or (isinstance(value, tuple) and value and isinstance(value[0], str)):
        value = [value]  # one wrench given alone
    out = []
    for k, item in enumerate(value):
        where = f"wrenches[{k}]"
        if isinstance(item, Mapping):
            item = LinkWrench(**item)
        elif isinstance(item, (tuple, list)):
            if len(item) not in (2, 3):
                raise errors.InvalidArgumentError(
                    f"{where}: expected (link, wrench) or (link, wrench, reference), got {len(item)} items")
            item = LinkWrench(*item)
        elif not isinstance(item, LinkWrench):
            raise errors.InvalidArgumentError(f"{where}: expected a denoc.LinkWrench or a (link, wrench) tuple")
        if not isinstance(item.link, str):
            raise errors.InvalidArgumentError(f"{where}.link: expected a frame name, got {item.link!r}")
        reference = choice(f"{where}.reference", item.reference, REFERENCES)
        w = np.ascontiguousarray(item.wrench, dtype=np.float64)
        if w.ndim not in (1, 2) or w.shape[-1] != 6:
            raise errors.InvalidArgumentError(
                f"{where}.wrench: expected [mx, my, mz, fx, fy, fz] as (6,) or (count, 6), got shape {w.shape}")
        out.append((item.link, reference, w.reshape(-1), w.ndim == 2))
    return out


def add_wrenches(request, wrenches: list, cut: Callable) -> None:
    """Appends the LinkWrench messages of :func:`link_wrenches` to a request, each per-state one cut."""
    for link, reference, values, per_state in wrenches:
        request.wrenches.add(link=link, reference=reference, wrench=cut(values, 6) if per_state else values)


def wrenches_fit(wrenches: list, count: int) -> bool:
    """Whether every per-state wrench has count rows (a batch that can be split)."""
    return all(not per_state or values.size == count * 6 for _, _, values, per_state in wrenches)
