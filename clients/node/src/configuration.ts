// The configuration manifold on the client (docs/trees.md, "The configuration manifold"), the same maps as
// the core's denoc/configuration.hpp: q has nq values per state, a velocity v has nv. A floating root's
// q[0..7) is [x y z | qx qy qz qw] (the root link's origin in the world and its orientation world <- root as a
// unit quaternion, scalar last) and v[0..6) = [w; v] (angular, then the origin's linear velocity, both in the
// root link's axes); a planar root's q[0..3) = v[0..3) = [x y yaw]; every joint coordinate is additive.
//
// integrate moves along v for dt: the root link turns by exp(w dt) about its own axes and its origin moves by
// R v dt (R its orientation at the start), every other coordinate by v dt. difference is its inverse:
// difference(q0, integrate(q0, v, 1)) = v while |w| < pi. Every function takes a batch (count states one after
// the other, count = q.length / nq, or one array per state) and returns a new flat Float64Array.
import { flatBatch, invalid, rootSizes } from './convert';
import type { Batch, ConfigurationSpace, Numbers } from './types';

/** How far from 1 a root quaternion's norm may be (the core's kQuaternionTolerance). */
export const QUATERNION_TOLERANCE = 1e-6;

type Quat = [number, number, number, number]; // x, y, z, w

function checkSpace(space: ConfigurationSpace): { nq: number; nv: number; nqr: number; nr: number } {
  const [nqr, nr] = rootSizes(space.root);
  const { nq, nv } = space;
  if (!Number.isInteger(nq) || !Number.isInteger(nv) || nq < nqr || nv < nr || nq - nqr !== nv - nr) {
    throw invalid(`a ${String(space.root)} root with nq = ${nq} and nv = ${nv} is not a model's configuration space`);
  }
  return { nq, nv, nqr, nr };
}

/** The number of states of a batch of `width` values each; `name` in the error. */
function statesOf(values: Numbers, width: number, name: string, count?: number): number {
  if (values === undefined || values === null || typeof values.length !== 'number') {
    throw invalid(`${name}: expected an array of numbers`);
  }
  const n = values.length;
  if (count !== undefined) {
    if (n !== count * width) throw invalid(`${name} has ${n} values, expected count*${width} = ${count * width}`);
    return count;
  }
  if (width === 0 || n === 0 || n % width !== 0) {
    throw invalid(`${name} has ${n} values, expected a positive multiple of ${width}`);
  }
  return n / width;
}

function checkFinite(values: Numbers, name: string): void {
  for (let i = 0; i < values.length; i++) {
    const x = values[i] as number;
    if (typeof x !== 'number' || !Number.isFinite(x)) throw invalid(`${name}[${i}] is ${String(x)}, expected a finite number`);
  }
}

/** The unit quaternion of state k's root (q[at..at+4)), refused beyond the tolerance (the message names the norm). */
function rootQuaternion(q: Numbers, at: number, name: string): Quat {
  const x = q[at] as number;
  const y = q[at + 1] as number;
  const z = q[at + 2] as number;
  const w = q[at + 3] as number;
  // scaled so that a norm of 1e300 or 1e-300 is measured, not overflowed to Infinity or rounded to 0
  const m = Math.max(Math.abs(x), Math.abs(y), Math.abs(z), Math.abs(w));
  const norm = m === 0 ? 0 : m * Math.hypot(x / m, y / m, z / m, w / m);
  if (!(Math.abs(norm - 1) <= QUATERNION_TOLERANCE)) {
    throw invalid(
      `${name}[${at}..${at + 4}), the root's quaternion, has norm ${norm}, expected 1 within 1e-06`,
    );
  }
  return [x / norm, y / norm, z / norm, w / norm];
}

/** a * b (Hamilton product, scalar last). */
function multiply(a: Quat, b: Quat): Quat {
  const [ax, ay, az, aw] = a;
  const [bx, by, bz, bw] = b;
  return [
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
    aw * bw - ax * bx - ay * by - az * bz,
  ];
}

function normalized(r: Quat): Quat {
  const n = Math.hypot(r[0], r[1], r[2], r[3]);
  return [r[0] / n, r[1] / n, r[2] / n, r[3] / n];
}

/** exp of a rotation vector as a unit quaternion. */
function expRotation(wx: number, wy: number, wz: number): Quat {
  const angle = Math.hypot(wx, wy, wz);
  if (angle < 1e-300) return [0, 0, 0, 1];
  const s = Math.sin(angle / 2) / angle;
  return [wx * s, wy * s, wz * s, Math.cos(angle / 2)];
}

/** The rotation vector of a unit quaternion, the shorter way round (|w| <= pi). */
function logRotation(r: Quat): [number, number, number] {
  let [x, y, z, w] = r;
  if (w < 0) [x, y, z, w] = [-x, -y, -z, -w];
  const s = Math.hypot(x, y, z);
  if (s < 1e-300) return [2 * x, 2 * y, 2 * z];
  const k = (2 * Math.atan2(s, w)) / s;
  return [k * x, k * y, k * z];
}

/** The 3 x 3 rotation (row-major) of a unit quaternion [qx, qy, qz, qw]. */
function matrix(r: Quat): number[] {
  const [x, y, z, w] = r;
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w),
    2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w),
    2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y),
  ];
}

/**
 * The rotation matrix (9 values, row-major) of a quaternion [qx, qy, qz, qw] (scalar last, as a floating
 * root's q[3..7)); the quaternion is divided by its norm, which must be within 1e-6 of 1.
 */
export function quaternionToRotation(quaternion: Numbers): Float64Array {
  if (quaternion === undefined || quaternion === null || quaternion.length !== 4) {
    throw invalid('quaternion: expected 4 numbers [qx, qy, qz, qw]');
  }
  checkFinite(quaternion, 'quaternion');
  return Float64Array.from(matrix(rootQuaternion(quaternion, 0, 'quaternion')));
}

/**
 * q (+) v dt on the manifold for a batch: q has count * nq values, v count * nv. The root link turns by
 * exp(w dt) about its own axes, its origin moves by R v dt, every joint by v dt; the result's quaternions
 * have unit norm. Throws an InvalidArgumentError for a wrong size, a non-finite value or a quaternion whose
 * norm is not within 1e-6 of 1 (the message names the entries and the norm).
 */
export function integrateConfiguration(space: ConfigurationSpace, qIn: Batch, vIn: Batch, dt = 1): Float64Array {
  const { nq, nv, nqr, nr } = checkSpace(space);
  const q = flatBatch(qIn, 'q');
  const v = flatBatch(vIn, 'v');
  const count = statesOf(q, nq, 'q');
  statesOf(v, nv, 'v', count);
  checkFinite(q, 'q');
  checkFinite(v, 'v');
  if (typeof dt !== 'number' || !Number.isFinite(dt)) throw invalid(`dt is ${String(dt)}, expected a finite number`);
  const out = Float64Array.from(q);
  for (let k = 0; k < count; k++) {
    const a = k * nq;
    const b = k * nv;
    if (space.root === 'floating') {
      const r = rootQuaternion(q, a + 3, 'q');
      const R = matrix(r);
      const lx = (v[b + 3] as number) * dt;
      const ly = (v[b + 4] as number) * dt;
      const lz = (v[b + 5] as number) * dt;
      for (let i = 0; i < 3; i++) {
        out[a + i] = (q[a + i] as number) + R[3 * i]! * lx + R[3 * i + 1]! * ly + R[3 * i + 2]! * lz;
      }
      const turned = normalized(
        multiply(r, expRotation((v[b] as number) * dt, (v[b + 1] as number) * dt, (v[b + 2] as number) * dt)),
      );
      out.set(turned, a + 3);
    } else if (space.root === 'planar') {
      for (let i = 0; i < 3; i++) out[a + i] = (q[a + i] as number) + (v[b + i] as number) * dt;
    }
    for (let i = 0; i < nq - nqr; i++) out[a + nqr + i] = (q[a + nqr + i] as number) + (v[b + nr + i] as number) * dt;
  }
  return out;
}

/**
 * The velocities v (count * nv) with integrateConfiguration(q0, v, 1) = q1 state by state, the rotation part
 * the shortest (|w| <= pi). q0 and q1 have count * nq values each; the same checks as integrateConfiguration.
 */
export function differenceConfiguration(space: ConfigurationSpace, q0In: Batch, q1In: Batch): Float64Array {
  const { nq, nv, nqr, nr } = checkSpace(space);
  const q0 = flatBatch(q0In, 'q0');
  const q1 = flatBatch(q1In, 'q1');
  const count = statesOf(q0, nq, 'q0');
  statesOf(q1, nq, 'q1', count);
  checkFinite(q0, 'q0');
  checkFinite(q1, 'q1');
  const out = new Float64Array(count * nv);
  for (let k = 0; k < count; k++) {
    const a = k * nq;
    const b = k * nv;
    if (space.root === 'floating') {
      const r0 = rootQuaternion(q0, a + 3, 'q0');
      const r1 = rootQuaternion(q1, a + 3, 'q1');
      const conj: Quat = [-r0[0], -r0[1], -r0[2], r0[3]];
      out.set(logRotation(multiply(conj, r1)), b);
      const R = matrix(r0);
      const d = [0, 1, 2].map((i) => (q1[a + i] as number) - (q0[a + i] as number));
      for (let i = 0; i < 3; i++) out[b + 3 + i] = R[i]! * d[0]! + R[3 + i]! * d[1]! + R[6 + i]! * d[2]!; // R^T d
    } else if (space.root === 'planar') {
      for (let i = 0; i < 3; i++) out[b + i] = (q1[a + i] as number) - (q0[a + i] as number);
    }
    for (let i = 0; i < nq - nqr; i++) out[b + nr + i] = (q1[a + nqr + i] as number) - (q0[a + nqr + i] as number);
  }
  return out;
}

/**
 * q with every root quaternion divided by its norm; refuses (InvalidArgumentError naming the norm) a norm not
 * within 1e-6 of 1, as the server does: a quaternion far from unit is a bug to report, not to hide.
 */
export function normalizeConfiguration(space: ConfigurationSpace, qIn: Batch): Float64Array {
  const { nq } = checkSpace(space);
  const q = flatBatch(qIn, 'q');
  const count = statesOf(q, nq, 'q');
  checkFinite(q, 'q');
  const out = Float64Array.from(q);
  if (space.root === 'floating') {
    for (let k = 0; k < count; k++) out.set(rootQuaternion(q, k * nq + 3, 'q'), k * nq + 3);
  }
  return out;
}

/**
 * `count` neutral configurations: every joint at 0 (clamped into space.lower/upper when given), the root at
 * the world's origin with the identity orientation (quaternion (0, 0, 0, 1)).
 */
export function neutralConfiguration(space: ConfigurationSpace, count = 1): Float64Array {
  const { nq, nqr } = checkSpace(space);
  if (!Number.isInteger(count) || count < 0) throw invalid(`count ${count} is not a non-negative integer`);
  const out = new Float64Array(count * nq);
  for (let k = 0; k < count; k++) {
    if (space.root === 'floating') out[k * nq + 6] = 1;
    for (let i = 0; i < nq - nqr; i++) {
      const lo = space.lower?.[i] ?? -Infinity;
      const hi = space.upper?.[i] ?? Infinity;
      out[k * nq + nqr + i] = Math.min(Math.max(0, lo), hi);
    }
  }
  return out;
}
