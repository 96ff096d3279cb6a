// Conversions between the public types (camelCase, Float64Array, short enum names) and the proto messages
// as @grpc/proto-loader represents them (snake_case, number arrays, enum names).
import { status as Status } from '@grpc/grpc-js';

import { DenocError, errorFor } from './errors';
import type {
  Batch,
  DHLink,
  ForwardRoute,
  Frame,
  Integrator,
  Joint,
  JointType,
  LinkWrench,
  ModelInfo,
  Numbers,
  Payload,
  Reference,
  RootJoint,
  StreamAnswer,
  TreeJointType,
  Vec3,
} from './types';
import type { DHLink as DHLinkMsg } from '../generated/denoc/v1/DHLink';
import type { LinkWrench as LinkWrenchMsg } from '../generated/denoc/v1/LinkWrench';
import type { ModelInfo__Output } from '../generated/denoc/v1/ModelInfo';
import type { Payload as PayloadMsg } from '../generated/denoc/v1/Payload';
import type { StreamResponse__Output } from '../generated/denoc/v1/StreamResponse';
import type { Vec3__Output } from '../generated/denoc/v1/Vec3';

/** An array-like of numbers as the plain array protobufjs encodes. */
export function toArray(x: Numbers | undefined): number[] {
  if (x === undefined || x === null) return [];
  return Array.from(x);
}

/** A wrench of LinkWrench with its values flat (what the wrappers work with). */
export type FlatWrench = Omit<LinkWrench, 'wrench'> & { wrench: Numbers };

/** An input with every Batch field flat and its wrenches' values flat. */
export type Flat<T> = {
  [K in keyof T]: K extends 'wrenches' ? readonly FlatWrench[] | undefined : Exclude<T[K], readonly Numbers[]>;
};

/** A batch as one flat array: given flat, as it is; given one array per state, joined (all of one length). */
export function flatBatch(x: Batch, name: string): Numbers {
  if (x === undefined || x === null || typeof x.length !== 'number' || x.length === 0) return x as Numbers;
  const first = x[0];
  if (first === null || typeof first !== 'object') return x as Numbers;
  const rows = x as readonly Numbers[];
  const width = first.length;
  const out = new Float64Array(rows.length * width);
  rows.forEach((r, k) => {
    if (r === null || typeof r !== 'object' || r.length !== width) {
      throw invalid(`${name}[${k}] has ${r === null || typeof r !== 'object' ? 'no' : r.length} values, expected ${width} as ${name}[0]`);
    }
    for (let i = 0; i < width; i++) out[k * width + i] = r[i] as number;
  });
  return out;
}

/** The input with the named Batch fields and its wrenches' values flat (a shallow copy). */
export function flatten<T extends object>(input: T, keys: readonly (keyof T & string)[]): Flat<T> {
  const out = { ...input } as Record<string, unknown>;
  for (const k of keys) if (out[k] !== undefined) out[k] = flatBatch(out[k] as Batch, k);
  if (Array.isArray(out.wrenches)) {
    out.wrenches = (out.wrenches as unknown[]).map((w, i) => {
      if (w === null || typeof w !== 'object') return w;
      const lw = w as LinkWrench;
      return lw.wrench === undefined || lw.wrench === null ? w : { ...lw, wrench: flatBatch(lw.wrench, `wrenches[${i}].wrench`) };
    });
  }
  return out as Flat<T>;
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

/** A ModelInfo.joints type, the moving roots included. */
export function treeJointTypeFromProto(t: string): TreeJointType {
  if (t === 'JOINT_TYPE_FLOATING') return 'floating';
  if (t === 'JOINT_TYPE_PLANAR') return 'planar';
  return jointTypeFromProto(t);
}

const ROOTS: Record<RootJoint, 'ROOT_JOINT_FIXED' | 'ROOT_JOINT_FLOATING' | 'ROOT_JOINT_PLANAR'> = {
  fixed: 'ROOT_JOINT_FIXED',
  floating: 'ROOT_JOINT_FLOATING',
  planar: 'ROOT_JOINT_PLANAR',
};

export function rootToProto(root: RootJoint | undefined): 'ROOT_JOINT_FIXED' | 'ROOT_JOINT_FLOATING' | 'ROOT_JOINT_PLANAR' {
  if (root === undefined) return 'ROOT_JOINT_FIXED';
  const r = Object.prototype.hasOwnProperty.call(ROOTS, root) ? ROOTS[root] : undefined;
  if (r === undefined) throw invalid(`root '${String(root)}' is not one of fixed, floating, planar`);
  return r;
}

export function rootFromProto(root: string): RootJoint {
  if (root === 'ROOT_JOINT_FLOATING') return 'floating';
  if (root === 'ROOT_JOINT_PLANAR') return 'planar';
  return 'fixed';
}

/** Coordinates a root joint adds to q and to qd: [nq, nv]. */
export function rootSizes(root: RootJoint): [number, number] {
  return root === 'floating' ? [7, 6] : root === 'planar' ? [3, 3] : [0, 0];
}

/** The wire form of a reference ('world' and 'base' are the same); `what` names the field in an error. */
export function referenceToProto(r: Reference | undefined, what: string): 'REFERENCE_FRAME_BASE' | 'REFERENCE_FRAME_LOCAL' {
  if (r === undefined || r === 'world' || r === 'base') return 'REFERENCE_FRAME_BASE';
  if (r === 'local') return 'REFERENCE_FRAME_LOCAL';
  throw invalid(`${what} '${String(r)}' is not one of world, base, local`);
}

/** The wire form of external wrenches (undefined: none); a wrench must be an array-like of numbers. */
export function wrenchesToProto(ws: readonly FlatWrench[] | undefined): LinkWrenchMsg[] {
  if (ws === undefined || ws === null) return [];
  if (!Array.isArray(ws)) throw invalid('wrenches: expected an array of {link, wrench, reference}');
  return ws.map((w: FlatWrench, i: number) => {
    if (w === null || typeof w !== 'object') throw invalid(`wrenches[${i}]: expected {link, wrench, reference}`);
    if (w.link !== undefined && typeof w.link !== 'string') throw invalid(`wrenches[${i}].link is not a string`);
    const values = w.wrench as Numbers | undefined;
    if (values === undefined || values === null || typeof values.length !== 'number') {
      throw invalid(`wrenches[${i}].wrench: expected 6 or count * 6 numbers`);
    }
    return {
      link: w.link ?? '',
      reference: referenceToProto(w.reference, `wrenches[${i}].reference`),
      wrench: toArray(values),
    };
  });
}

/** The serial chain a server without trees describes (nq = nv = nu = dof, root fixed, frames the links and 'tip'). */
function serialJoints(m: ModelInfo__Output): Joint[] {
  return m.joint_names.map((name, i) => ({
    name,
    type: jointTypeFromProto(String(m.joint_types[i] ?? '')),
    parent: i - 1,
    qIndex: i,
    vIndex: i,
    nq: 1,
    nv: 1,
    link: m.link_names[i] ?? '',
    depth: i + 1,
  }));
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
    ...treeFromProto(m),
  };
}

/** The tree fields of a ModelInfo; from a server before trees (nq 0), those of its serial chain. */
function treeFromProto(m: ModelInfo__Output): Pick<ModelInfo, 'nq' | 'nv' | 'nu' | 'root' | 'joints' | 'frames' | 'depth'> {
  if (m.nq === 0 && m.nv === 0) {
    const joints = serialJoints(m);
    const frames: Frame[] = [
      ...joints.map((j, i) => ({ name: j.link, joint: i, fixedTo: '' })),
      { name: 'tip', joint: joints.length - 1, fixedTo: '' },
    ];
    return { nq: m.dof, nv: m.dof, nu: m.dof, root: 'fixed', joints, frames, depth: m.dof };
  }
  return {
    nq: m.nq,
    nv: m.nv,
    nu: m.nu,
    root: rootFromProto(String(m.root)),
    joints: m.joints.map((j) => ({
      name: j.name,
      type: treeJointTypeFromProto(String(j.type)),
      parent: j.parent,
      qIndex: j.q_index,
      vIndex: j.v_index,
      nq: j.nq,
      nv: j.nv,
      link: j.link,
      depth: j.depth,
    })),
    frames: m.frames.map((f) => ({ name: f.name, joint: f.joint, fixedTo: f.fixed_to })),
    depth: m.depth,
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
  if (p.link !== undefined && typeof p.link !== 'string') throw invalid('payload.link is not a string');
  return {
    mass: p.mass,
    com: toVec3(p.com ?? [0, 0, 0], 'payload.com'),
    inertia: { ixx: i.ixx, iyy: i.iyy, izz: i.izz, ixy: i.ixy ?? 0, ixz: i.ixz ?? 0, iyz: i.iyz ?? 0 },
    link: p.link ?? '',
  };
}
