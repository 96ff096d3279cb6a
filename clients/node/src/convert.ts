// Conversions between the public types (camelCase, Float64Array, short enum names) and the proto messages
// as @grpc/proto-loader represents them (snake_case, number arrays, enum names).
import { status as Status } from '@grpc/grpc-js';

import { DenocError, errorFor } from './errors';
import type {
  DHLink,
  ForwardRoute,
  Integrator,
  JointType,
  ModelInfo,
  Numbers,
  Payload,
  StreamAnswer,
  Vec3,
} from './types';
import type { DHLink as DHLinkMsg } from '../generated/denoc/v1/DHLink';
import type { ModelInfo__Output } from '../generated/denoc/v1/ModelInfo';
import type { Payload as PayloadMsg } from '../generated/denoc/v1/Payload';
import type { StreamResponse__Output } from '../generated/denoc/v1/StreamResponse';
import type { Vec3__Output } from '../generated/denoc/v1/Vec3';

/** An array-like of numbers as the plain array protobufjs encodes. */
export function toArray(x: Numbers | undefined): number[] {
  if (x === undefined || x === null) return [];
  return Array.from(x);
}

export function toF64(x: readonly number[] | undefined): Float64Array {
  return x === undefined ? new Float64Array(0) : Float64Array.from(x);
}

export function invalid(message: string): DenocError {
  return errorFor(Status.INVALID_ARGUMENT, message);
}

export function toVec3(v: Vec3 | Numbers, what: string): Vec3 {
  if (typeof (v as Vec3).x === 'number' || typeof (v as Vec3).y === 'number' || typeof (v as Vec3).z === 'number') {
    const o = v as Vec3;
    return { x: o.x ?? 0, y: o.y ?? 0, z: o.z ?? 0 };
  }
  const a = v as Numbers;
  if (typeof a.length !== 'number' || a.length !== 3) throw invalid(`${what}: expected {x, y, z} or 3 numbers`);
  return { x: a[0], y: a[1], z: a[2] };
}

export function fromVec3(v: Vec3__Output | null | undefined): Vec3 {
  return { x: v?.x ?? 0, y: v?.y ?? 0, z: v?.z ?? 0 };
}

const ROUTES: Record<ForwardRoute, string> = {
  saha: 'FORWARD_ROUTE_SAHA',
  fixman: 'FORWARD_ROUTE_FIXMAN',
  cholesky: 'FORWARD_ROUTE_CHOLESKY',
};

export function routeToProto(route: ForwardRoute | undefined): 'FORWARD_ROUTE_SAHA' | 'FORWARD_ROUTE_FIXMAN' | 'FORWARD_ROUTE_CHOLESKY' {
  if (route === undefined) return 'FORWARD_ROUTE_SAHA';
  const r = ROUTES[route];
  if (r === undefined) throw invalid(`route '${String(route)}' is not one of saha, fixman, cholesky`);
  return r as 'FORWARD_ROUTE_SAHA' | 'FORWARD_ROUTE_FIXMAN' | 'FORWARD_ROUTE_CHOLESKY';
}

export function routeFromProto(route: string): ForwardRoute {
  for (const [k, v] of Object.entries(ROUTES)) if (v === route) return k as ForwardRoute;
  return 'saha';
}

export function integratorToProto(i: Integrator | undefined): 'INTEGRATOR_DOPRI5' | 'INTEGRATOR_RK4' {
  if (i === undefined || i === 'dopri5') return 'INTEGRATOR_DOPRI5';
  if (i === 'rk4') return 'INTEGRATOR_RK4';
  throw invalid(`integrator '${String(i)}' is not one of dopri5, rk4`);
}

export function jointTypeToProto(t: JointType, where: string): 'JOINT_TYPE_REVOLUTE' | 'JOINT_TYPE_PRISMATIC' {
  if (t === 'revolute') return 'JOINT_TYPE_REVOLUTE';
  if (t === 'prismatic') return 'JOINT_TYPE_PRISMATIC';
  throw invalid(`${where}: type '${String(t)}' is not one of revolute, prismatic`);
}

export function jointTypeFromProto(t: string): JointType {
  return t === 'JOINT_TYPE_PRISMATIC' ? 'prismatic' : 'revolute';
}

export function dhLinkToProto(l: DHLink, i: number): DHLinkMsg {
  const where = `links[${i}]`;
  const msg: DHLinkMsg = {
    joint: l.joint ?? '',
    link: l.link ?? '',
    type: jointTypeToProto(l.type, where),
    a: l.a ?? 0,
    b: l.b ?? 0,
    alpha: l.alpha ?? 0,
    theta: l.theta ?? 0,
    mass: l.mass,
    com: l.com === undefined ? { x: 0, y: 0, z: 0 } : toVec3(l.com, `${where}.com`),
    inertia: {
      ixx: l.inertia.ixx,
      iyy: l.inertia.iyy,
      izz: l.inertia.izz,
      ixy: l.inertia.ixy ?? 0,
      ixz: l.inertia.ixz ?? 0,
      iyz: l.inertia.iyz ?? 0,
    },
    armature: l.armature ?? 0,
  };
  if (l.limits !== undefined) {
    const limits: NonNullable<DHLinkMsg['limits']> = {};
    if (l.limits.lower !== undefined) limits.lower = l.limits.lower;
    if (l.limits.upper !== undefined) limits.upper = l.limits.upper;
    if (l.limits.velocity !== undefined) limits.velocity = l.limits.velocity;
    if (l.limits.effort !== undefined) limits.effort = l.limits.effort;
    msg.limits = limits;
  }
  return msg;
}

export function modelInfoFromProto(m: ModelInfo__Output | null | undefined): ModelInfo {
  if (m === null || m === undefined) throw errorFor(Status.INTERNAL, 'the server sent no model description');
  return {
    modelId: m.model_id,
    name: m.name,
    dof: m.dof,
    jointNames: [...m.joint_names],
    linkNames: [...m.link_names],
    jointTypes: m.joint_types.map((t) => jointTypeFromProto(String(t))),
    gravity: fromVec3(m.gravity),
    lower: toF64(m.lower),
    upper: toF64(m.upper),
    velocityLimit: toF64(m.velocity_limit),
    effortLimit: toF64(m.effort_limit),
    armature: toF64(m.armature),
    pinned: m.pinned,
    source: m.source,
  };
}

export function streamAnswerFromProto(m: StreamResponse__Output): StreamAnswer {
  return {
    modelId: m.model_id,
    gravity: fromVec3(m.gravity),
    computeTimeNs: Number(m.compute_time_ns),
    computation: m.computation === 'COMPUTATION_FORWARD_DYNAMICS' ? 'forward' : 'inverse',
    sequence: Number(m.sequence),
    result: toF64(m.result),
  };
}

/** The wire form of a payload (undefined stays undefined: no payload). */
export function payloadToProto(p: Payload | undefined): PayloadMsg | undefined {
  if (p === undefined) return undefined;
  const i = p.inertia ?? { ixx: 0, iyy: 0, izz: 0 };
  return {
    mass: p.mass,
    com: toVec3(p.com ?? [0, 0, 0], 'payload.com'),
    inertia: { ixx: i.ixx, iyy: i.iyy, izz: i.izz, ixy: i.ixy ?? 0, ixz: i.ixz ?? 0, iyz: i.iyz ?? 0 },
  };
}
