// Trees and moving roots through a real denocd: Solo-12 (examples/models/trees/solo12.urdf) registered under
// a floating root, every new field checked element by element against an independent computation:
//   - the model's description against the URDF file itself (joints, parents, links, depth, masses);
//   - inverse dynamics, forward dynamics and the full factor against the denoc tool's in-process core
//     (`denoc id|fd|factor MODEL --root floating`);
//   - external wrenches as -J^T w with the Jacobians of the kinematics call, and the base's six equations
//     (a standing robot's root wrench balances its weight and the foot forces, computed here by hand);
//   - forward dynamics of the inverse-dynamics torques (with foot wrenches) returns qdd;
//   - frame Jacobians and the centre of mass Jacobian against central differences along integrate;
//   - the centre of mass, its Jacobian, the centroidal map and momentum from the root rows of I(q);
//   - a payload on a named link as the external wrench of its weight;
//   - derivatives and rollouts (A, B) against central differences on the manifold, the semi-implicit step
//     against the client's integrateConfiguration;
//   - external wrenches in derivatives and rollouts: the derivatives' tau against InverseDynamics with the
//     same wrenches, dtau/dq against central differences of it along integrate, a rollout's first step
//     against ForwardDynamics with the wrenches;
//   - the client's integrate/difference identities, hostile shapes, the server's new limits, batches split
//     above max_states, the stream with wrenches, and a planar root.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import {
  DenocClient,
  DenocError,
  InvalidArgumentError,
  Status,
  differenceConfiguration,
  integrateConfiguration,
  neutralConfiguration,
  normalizeConfiguration,
  quaternionToRotation,
  stateOf,
  type LinkWrench,
  type RegisteredModel,
} from '../src/index';
import {
  MODELS_DIR,
  PACKAGE_DIR,
  calls,
  expectClose,
  randomBatch,
  rng,
  runCli,
  startServer,
  tempDir,
  type Server,
} from './support';

const SOLO = path.join(MODELS_DIR, 'trees', 'solo12.urdf');
const FEET = ['FL', 'FR', 'HL', 'HR'].map((leg) => `${leg}_LOWER_LEG`);
const G = [0, 0, -9.81];

// ---- the URDF file read here, independently of the server's parser ---------------------------------------

interface UrdfJoint {
  name: string;
  type: string;
  parent: string;
  child: string;
  xyz: number[];
}

function attr(tag: string, name: string): string {
  const m = new RegExp(`${name}="([^"]*)"`).exec(tag);
  if (m === null) throw new Error(`no ${name} in ${tag}`);
  return m[1]!;
}

function urdfJoints(text: string): UrdfJoint[] {
  return [...text.matchAll(/<joint\b([^>]*)>([\s\S]*?)<\/joint>/g)].map((m) => {
    const body = m[2]!;
    const origin = /<origin\b[^>]*>/.exec(body)?.[0];
    return {
      name: attr(m[1]!, 'name'),
      type: attr(m[1]!, 'type'),
      parent: attr(/<parent\b[^>]*>/.exec(body)![0], 'link'),
      child: attr(/<child\b[^>]*>/.exec(body)![0], 'link'),
      xyz: origin === undefined ? [0, 0, 0] : attr(origin, 'xyz').trim().split(/\s+/).map(Number),
    };
  });
}

function urdfMass(text: string): number {
  return [...text.matchAll(/<mass\s+value="([^"]*)"/g)].reduce((s, m) => s + Number(m[1]), 0);
}

// ---- small linear algebra on flat row-major arrays ---------------------------------------------------------

type V3 = [number, number, number];
const cross = (a: ArrayLike<number>, b: ArrayLike<number>): V3 => [
  a[1]! * b[2]! - a[2]! * b[1]!,
  a[2]! * b[0]! - a[0]! * b[2]!,
  a[0]! * b[1]! - a[1]! * b[0]!,
];
/** R v (R row-major 3 x 3). */
const rot = (R: ArrayLike<number>, v: ArrayLike<number>): V3 => [0, 1, 2].map((i) => R[3 * i]! * v[0]! + R[3 * i + 1]! * v[1]! + R[3 * i + 2]! * v[2]!) as V3;
/** R^T v. */
const rotT = (R: ArrayLike<number>, v: ArrayLike<number>): V3 => [0, 1, 2].map((i) => R[i]! * v[0]! + R[3 + i]! * v[1]! + R[6 + i]! * v[2]!) as V3;
const sub = (a: ArrayLike<number>, b: ArrayLike<number>): V3 => [a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!];
const add = (a: ArrayLike<number>, b: ArrayLike<number>): V3 => [a[0]! + b[0]!, a[1]! + b[1]!, a[2]! + b[2]!];
const scale = (a: ArrayLike<number>, s: number): V3 => [a[0]! * s, a[1]! * s, a[2]! * s];

/** The rotation vector of a rotation R below a half turn (atan2 keeps small angles accurate). */
function logMatrix(R: ArrayLike<number>): V3 {
  const v: V3 = [(R[7]! - R[5]!) / 2, (R[2]! - R[6]!) / 2, (R[3]! - R[1]!) / 2]; // sin(angle) axis
  const s = Math.hypot(...v);
  const angle = Math.atan2(s, (R[0]! + R[4]! + R[8]! - 1) / 2);
  return s < 1e-300 ? v : scale(v, angle / s);
}

/** A B for row-major 3 x 3 matrices. */
function mul3(A: ArrayLike<number>, B: ArrayLike<number>, transposeB = false): number[] {
  const out: number[] = [];
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      let s = 0;
      for (let k = 0; k < 3; k++) s += A[3 * i + k]! * (transposeB ? B[3 * j + k]! : B[3 * k + j]!);
      out.push(s);
    }
  }
  return out;
}

/** Column j of a row-major rows x cols matrix. */
function column(M: ArrayLike<number>, rows: number, cols: number, j: number): number[] {
  return Array.from({ length: rows }, (_, i) => M[i * cols + j]!);
}

/** Random floating-base states: root position in [-1, 1], a uniform unit quaternion, joints in [-1.5, 1.5]. */
function randomStates(random: () => number, count: number, nu: number): Float64Array {
  const nq = nu + 7;
  const q = new Float64Array(count * nq);
  for (let k = 0; k < count; k++) {
    for (let i = 0; i < 3; i++) q[k * nq + i] = 2 * random() - 1;
    const x = [0, 1, 2, 3].map(() => 2 * random() - 1);
    const n = Math.hypot(...x);
    for (let i = 0; i < 4; i++) q[k * nq + 3 + i] = x[i]! / n;
    for (let i = 0; i < nu; i++) q[k * nq + 7 + i] = 3 * random() - 1.5;
  }
  return q;
}

async function rejectsWith(p: Promise<unknown>, code: number, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof DenocError, `a DenocError, got ${String(e)}`);
    assert.equal(e.code, code, `${e.codeName}: ${e.details}`);
    assert.match(e.details, message);
    return true;
  });
}

describe('trees: Solo-12 under a floating root', { timeout: 600_000 }, () => {
  let server: Server;
  let client: DenocClient;
  let solo: RegisteredModel;
  let text: string;
  const random = rng(20261127);
  const COUNT = 20;
  const NU = 12;
  const NQ = 19;
  const NV = 18;
  let q: Float64Array;
  let qd: Float64Array;
  let qdd: Float64Array;
  let tau: Float64Array;
  /** The foot points on the lower legs (the ankle joints' origins, merged into the lower legs). */
  let footPoint: Map<string, number[]>;

  before(async () => {
    server = await startServer();
    client = new DenocClient(server.address);
    text = fs.readFileSync(SOLO, 'utf8');
    solo = await client.registerUrdf(text, { root: 'floating' });
    q = randomStates(random, COUNT, NU);
    qd = randomBatch(random, COUNT, NV, -2, 2);
    qdd = randomBatch(random, COUNT, NV, -5, 5);
    tau = randomBatch(random, COUNT, NV, -3, 3);
    footPoint = new Map(urdfJoints(text).filter((j) => j.type === 'fixed').map((j) => [j.parent, j.xyz]));
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('registers solo12.urdf floating: nq 19, nv 18, nu 12, joints, frames and depth as the URDF says', async () => {
    assert.equal(solo.root, 'floating');
    assert.equal(solo.nq, NQ);
    assert.equal(solo.nv, NV);
    assert.equal(solo.dof, NV);
    assert.equal(solo.nu, NU);
    const movable = urdfJoints(text).filter((j) => j.type !== 'fixed');
    assert.equal(movable.length, NU);
    assert.deepEqual(solo.jointNames, movable.map((j) => j.name));
    assert.deepEqual(solo.linkNames, movable.map((j) => j.child));
    assert.deepEqual(solo.jointTypes, Array(NU).fill('revolute'));
    assert.equal(solo.joints.length, NU + 1);
    assert.deepEqual(solo.joints[0], {
      name: 'root_joint', type: 'floating', parent: -1, qIndex: 0, vIndex: 0, nq: 7, nv: 6, link: 'base_link', depth: 1,
    });
    movable.forEach((j, i) => {
      const parent = j.parent === 'base_link' ? 0 : 1 + movable.findIndex((p) => p.child === j.parent);
      assert.ok(parent >= 0);
      const depth = (solo.joints[parent]?.depth ?? 0) + 1;
      assert.deepEqual(solo.joints[i + 1], {
        name: j.name, type: 'revolute', parent, qIndex: 7 + i, vIndex: 6 + i, nq: 1, nv: 1, link: j.child, depth,
      });
    });
    assert.equal(Math.max(...solo.joints.map((j) => j.depth)), 4); // the root joint, then three per leg
    assert.equal(solo.depth, 3); // joints on the longest path below the root link: hip, thigh, knee
    // the links, the tip, the root link, then the links merged by fixed joints (the feet), fixed to theirs
    const fixedJoints = urdfJoints(text).filter((j) => j.type === 'fixed');
    assert.deepEqual(solo.frames, [
      ...movable.map((j, i) => ({ name: j.child, joint: i + 1, fixedTo: '' })),
      { name: 'tip', joint: NU, fixedTo: '' },
      { name: 'base_link', joint: 0, fixedTo: '' },
      ...fixedJoints.map((j) => ({ name: j.child, joint: 1 + movable.findIndex((m) => m.child === j.parent), fixedTo: j.parent })),
    ]);
    const info = await client.getModel(solo.modelId);
    assert.deepEqual(info.joints, solo.joints);
    assert.deepEqual(info.frames, solo.frames);
    // the same file under a fixed root is another model: nq = nv = nu = 12, no root joint
    const fixed = await client.registerUrdf(text);
    assert.notEqual(fixed.modelId, solo.modelId);
    assert.deepEqual([fixed.root, fixed.nq, fixed.nv, fixed.nu, fixed.dof, fixed.joints.length], ['fixed', 12, 12, 12, 12, 12]);
    assert.equal(fixed.joints[0]?.parent, -1);
    assert.deepEqual(fixed.frames[NU + 1], { name: 'base_link', joint: -1, fixedTo: '' });
    assert.deepEqual(fixed.frames.slice(NU + 2).map((f) => [f.name, f.fixedTo]), fixedJoints.map((j) => [j.child, j.parent]));
  });

  it('inverse dynamics, forward dynamics and the full factor of 20 states equal the in-process core', async () => {
    const states = Array.from({ length: COUNT }, (_, k) => ({
      q: Array.from(stateOf(q, k, NQ)),
      qd: Array.from(stateOf(qd, k, NV)),
      qdd: Array.from(stateOf(qdd, k, NV)),
      tau: Array.from(stateOf(tau, k, NV)),
    }));
    const root = ['--root', 'floating'];
    const id = await client.inverseDynamics(solo.modelId, { q, qd, qdd });
    assert.equal(id.count, COUNT);
    assert.equal(id.dof, NV);
    assert.equal(id.tau.length, COUNT * NV);
    const idWant = await runCli('id', SOLO, states.map(({ q, qd, qdd }) => ({ q, qd, qdd })), root);
    for (let k = 0; k < COUNT; k++) expectClose(stateOf(id.tau, k, NV), idWant[k]!.tau!, `tau state ${k}`);

    for (const route of ['saha', 'cholesky'] as const) {
      const fd = await client.forwardDynamics(solo.modelId, { q, qd, tau, route });
      assert.equal(fd.route, route);
      const want = await runCli('fd', SOLO, states.map(({ q, qd, tau }) => ({ q, qd, tau })), [...root, '--route', route]);
      for (let k = 0; k < COUNT; k++) expectClose(stateOf(fd.qdd, k, NV), want[k]!.qdd!, `${route} qdd state ${k}`, 1e-11);
    }

    const f = await client.fullFactor(solo.modelId, { q, qd, inverse: true, bias: true, gravityTorque: true });
    assert.equal(f.inertia.length, COUNT * NV * NV);
    const want = await runCli('factor', SOLO, states.map(({ q }) => ({ q })), [...root, '--inverse']);
    for (let k = 0; k < COUNT; k++) {
      const w = want[k]!;
      expectClose(stateOf(f.inertia, k, NV * NV), w.I!.flat(), `I state ${k}`);
      expectClose(stateOf(f.u, k, NV * NV), w.U!.flat(), `U state ${k}`);
      expectClose(stateOf(f.d, k, NV), w.D!, `D state ${k}`);
      expectClose([f.logDet[k]!], [w.log_det!], `log det state ${k}`);
      expectClose(stateOf(f.inverse!, k, NV * NV), w.I_inv!.flat(), `I^-1 state ${k}`, 1e-10);
    }
    // the bias is the inverse dynamics at qdd = 0, g(q) at qd = 0 too
    const zero = new Float64Array(COUNT * NV);
    expectClose(f.bias!, (await client.inverseDynamics(solo.modelId, { q, qd, qdd: zero })).tau, 'bias = ID(q, qd, 0)');
    expectClose(f.gravityTorque!, (await client.inverseDynamics(solo.modelId, { q, qd: zero, qdd: zero })).tau, 'g(q)');
    // the convective matrix C(q, qd) of the tree (nv x nv): C qd is the bias less g
    const fc = await client.fullFactor(solo.modelId, { q, qd, convective: true });
    assert.equal(fc.convective!.length, COUNT * NV * NV);
    for (let k = 0; k < COUNT; k++) {
      const C = stateOf(fc.convective!, k, NV * NV);
      const v = stateOf(qd, k, NV);
      const Cv = Array.from({ length: NV }, (_, r) => v.reduce((sum, x, j) => sum + C[r * NV + j]! * x, 0));
      const velocityTerms = Array.from({ length: NV }, (_, r) => f.bias![k * NV + r]! - f.gravityTorque![k * NV + r]!);
      expectClose(Cv, velocityTerms, `C qd = bias - g, state ${k}`, 1e-10);
    }
  });

  it('external wrenches on the feet: tau changes by -J^T w (world and local axes, per state and shared)', async () => {
    const kin = await client.kinematics(solo.modelId, { q, links: FEET, jacobian: true });
    assert.equal(kin.rotation.length, COUNT * 4 * 9);
    assert.equal(kin.origin.length, COUNT * 4 * 3);
    assert.equal(kin.jacobian!.length, COUNT * 4 * 6 * NV);
    const perState = randomBatch(random, COUNT, 6, -20, 20); // on FL in world axes, one per state
    const shared = [0.3, -0.2, 0.1, 4, -3, 25]; // on HR, local axes, the same for every state
    const onBase = randomBatch(random, COUNT, 6, -5, 5); // on the root link, world axes
    const wrenches: LinkWrench[] = [
      { link: 'FL_LOWER_LEG', wrench: perState, reference: 'world' },
      { link: 'HR_LOWER_LEG', wrench: shared, reference: 'local' },
      { link: 'base_link', wrench: onBase },
    ];
    const without = await client.inverseDynamics(solo.modelId, { q, qd, qdd });
    const withW = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches });
    // the in-process core with the same wrenches (the CLI's --wrench: one wrench for every state)
    const fl = [1.5, -0.5, 0.25, 3, -4, 22];
    const cliWrenches = [
      '--wrench', `FL_LOWER_LEG:${fl.join(',')}`, '--wrench', `HR_LOWER_LEG:${shared.join(',')}:local`,
      '--wrench', `base_link:${onBase.subarray(0, 6).join(',')}`,
    ];
    const sameForAll: LinkWrench[] = [
      { link: 'FL_LOWER_LEG', wrench: fl },
      { link: 'HR_LOWER_LEG', wrench: shared, reference: 'local' },
      { link: 'base_link', wrench: onBase.subarray(0, 6), reference: 'world' },
    ];
    const states = Array.from({ length: COUNT }, (_, k) => ({
      q: Array.from(stateOf(q, k, NQ)), qd: Array.from(stateOf(qd, k, NV)), qdd: Array.from(stateOf(qdd, k, NV)), tau: Array.from(stateOf(tau, k, NV)),
    }));
    const idCli = await runCli('id', SOLO, states.map(({ q, qd, qdd }) => ({ q, qd, qdd })), ['--root', 'floating', ...cliWrenches]);
    const idW = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: sameForAll });
    for (let k = 0; k < COUNT; k++) expectClose(stateOf(idW.tau, k, NV), idCli[k]!.tau!, `tau with wrenches state ${k} (CLI)`);
    const fdCli = await runCli('fd', SOLO, states.map(({ q, qd, tau }) => ({ q, qd, tau })), ['--root', 'floating', ...cliWrenches]);
    const fdW = await client.forwardDynamics(solo.modelId, { q, qd, tau, wrenches: sameForAll });
    for (let k = 0; k < COUNT; k++) expectClose(stateOf(fdW.qdd, k, NV), fdCli[k]!.qdd!, `qdd with wrenches state ${k} (CLI)`, 1e-11);
    const baseKin = await client.kinematics(solo.modelId, { q, link: 'base_link', jacobian: true });
    for (let k = 0; k < COUNT; k++) {
      const J = (frame: number): Float64Array => stateOf(kin.jacobian!, k * 4 + frame, 6 * NV);
      const R = stateOf(kin.rotation, k * 4 + 3, 9);
      const wHR = [...rot(R, shared.slice(0, 3)), ...rot(R, shared.slice(3))];
      const wFL = stateOf(perState, k, 6);
      const jb = stateOf(baseKin.jacobian!, k, 6 * NV);
      const wB = stateOf(onBase, k, 6);
      const want = Array.from({ length: NV }, (_, j) => {
        let s = stateOf(without.tau, k, NV)[j]!;
        for (let r = 0; r < 6; r++) s -= J(0)[r * NV + j]! * wFL[r]! + J(3)[r * NV + j]! * wHR[r]! + jb[r * NV + j]! * wB[r]!;
        return s;
      });
      expectClose(stateOf(withW.tau, k, NV), want, `tau with wrenches, state ${k}`, 1e-11);
    }
    // an empty link names the tip frame: fixed on the last joint's link (HR_LOWER_LEG) at the leaf merged
    // into it (HR_FOOT); the same wrench on the lower leg, its moment moved to the lower leg's origin
    const tipPose = await client.kinematics(solo.modelId, { q, links: ['tip', 'HR_LOWER_LEG'] });
    const onTip = new Float64Array(COUNT * 6);
    const onLeg = new Float64Array(COUNT * 6);
    for (let k = 0; k < COUNT; k++) {
      const w = stateOf(perState, k, 6);
      onTip.set(w, 6 * k);
      const arm = sub(stateOf(tipPose.origin, 2 * k, 3), stateOf(tipPose.origin, 2 * k + 1, 3));
      expectClose(rotT(stateOf(tipPose.rotation, 2 * k + 1, 9), arm), footPoint.get('HR_LOWER_LEG')!, `tip frame at HR_FOOT, state ${k}`, 1e-14);
      onLeg.set([...add(w.subarray(0, 3), cross(arm, w.subarray(3))), ...w.subarray(3)], 6 * k);
    }
    const tip = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: [{ wrench: onTip }] });
    const named = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: [{ link: 'HR_LOWER_LEG', wrench: onLeg }] });
    expectClose(tip.tau, named.tau, "a wrench on '' (the tip frame)", 1e-12);
    const tipNamed = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: [{ link: 'tip', wrench: onTip }] });
    expectClose(tipNamed.tau, tip.tau, "'tip' names the tip frame", 0);
  });

  it("the base's six equations: a standing robot's root wrench balances its weight and the foot forces", async () => {
    const zero = new Float64Array(COUNT * NV);
    const kin = await client.kinematics(solo.modelId, { q, links: FEET, point: [0, 0, 0], centerOfMass: true });
    assert.equal(kin.com!.length, COUNT * 3);
    assert.equal(kin.mass!.length, COUNT);
    for (let k = 0; k < COUNT; k++) expectClose([kin.mass![k]!], [urdfMass(text)], `total mass state ${k}`);
    const forces = FEET.map(() => randomBatch(random, COUNT, 3, -30, 30));
    // a force at each foot point (on the lower leg, world axes) as a wrench about the lower leg's origin
    const wrenches: LinkWrench[] = FEET.map((foot, f) => {
      const w = new Float64Array(COUNT * 6);
      for (let k = 0; k < COUNT; k++) {
        const R = stateOf(kin.rotation, k * 4 + f, 9);
        const arm = rot(R, footPoint.get(foot)!); // foot point - frame origin, world
        const force = stateOf(forces[f]!, k, 3);
        w.set([...cross(arm, force), ...force], 6 * k);
      }
      return { link: foot, wrench: w, reference: 'world' };
    });
    const r = await client.inverseDynamics(solo.modelId, { q, qd: zero, qdd: zero, wrenches });
    for (let k = 0; k < COUNT; k++) {
      const p = stateOf(q, k, NQ).subarray(0, 3);
      const R = quaternionToRotation(stateOf(q, k, NQ).subarray(3, 7));
      // every wrench on the robot, world axes, about the root link's origin: the feet and gravity
      let moment: V3 = [0, 0, 0];
      let force: V3 = [0, 0, 0];
      FEET.forEach((_, f) => {
        const o = stateOf(kin.origin, k * 4 + f, 3);
        const w = stateOf(wrenches[f]!.wrench as Float64Array, k, 6);
        const fw = w.subarray(3);
        moment = add(moment, add(w.subarray(0, 3), cross(sub(o, p), fw)));
        force = add(force, fw);
      });
      const weight = scale(G, kin.mass![k]!);
      moment = add(moment, cross(sub(stateOf(kin.com!, k, 3), p), weight));
      force = add(force, weight);
      // the root's generalized force is the wrench the world adds on the root link (root axes): the rest's opposite
      const want = [...rotT(R, scale(moment, -1)), ...rotT(R, scale(force, -1))];
      expectClose(stateOf(r.tau, k, NV).subarray(0, 6), want, `root wrench state ${k}`, 1e-11);
    }
  });

  it('a fixed frame (FL_FOOT, merged into FL_LOWER_LEG) is named like a link: its pose, Jacobian, wrench and payload', async () => {
    const offset = footPoint.get('FL_LOWER_LEG')!;
    const k = await client.kinematics(solo.modelId, { q, links: ['FL_FOOT', 'FL_LOWER_LEG'], jacobian: true });
    const atFoot = await client.kinematics(solo.modelId, { q, link: 'FL_LOWER_LEG', point: offset, jacobian: true });
    const wrench = randomBatch(random, COUNT, 6, -10, 10);
    const onLeg = new Float64Array(COUNT * 6);
    for (let s = 0; s < COUNT; s++) {
      const R = stateOf(k.rotation, 2 * s + 1, 9);
      expectClose(stateOf(k.rotation, 2 * s, 9), R, `foot rotation ${s}`, 1e-15);
      expectClose(stateOf(k.origin, 2 * s, 3), add(stateOf(k.origin, 2 * s + 1, 3), rot(R, offset)), `foot origin ${s}`, 1e-14);
      expectClose(stateOf(k.jacobian!, 2 * s, 6 * NV), stateOf(atFoot.jacobian!, s, 6 * NV), `foot Jacobian ${s}`, 1e-14);
      const w = stateOf(wrench, s, 6);
      onLeg.set([...add(w.subarray(0, 3), cross(rot(R, offset), w.subarray(3))), ...w.subarray(3)], 6 * s);
    }
    const a = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: [{ link: 'FL_FOOT', wrench }] });
    const b = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches: [{ link: 'FL_LOWER_LEG', wrench: onLeg }] });
    expectClose(a.tau, b.tau, 'a wrench on the foot = the wrench moved to the lower leg', 1e-12);
    const payload = { mass: 0.05, com: [0.001, 0, -0.002] };
    const onFoot = await client.inverseDynamics(solo.modelId, { q, qd, qdd, payload: { ...payload, link: 'FL_FOOT' } });
    const moved = await client.inverseDynamics(solo.modelId, { q, qd, qdd, payload: { ...payload, com: add(payload.com, offset), link: 'FL_LOWER_LEG' } });
    expectClose(onFoot.tau, moved.tau, 'a payload on the foot = on the lower leg at the foot', 1e-12);
  });

  it('forward dynamics of the inverse-dynamics torques (with foot wrenches) returns qdd', async () => {
    const wrenches: LinkWrench[] = FEET.map((link) => ({ link, wrench: randomBatch(random, COUNT, 6, -20, 20) }));
    const id = await client.inverseDynamics(solo.modelId, { q, qd, qdd, wrenches });
    const fd = await client.forwardDynamics(solo.modelId, { q, qd, tau: id.tau, wrenches });
    expectClose(fd.qdd, qdd, 'FD(ID(qdd)) with wrenches', 1e-9);
    const plain = await client.forwardDynamics(solo.modelId, { q, qd, tau: id.tau });
    expectClose((await client.inverseDynamics(solo.modelId, { q, qd, qdd: plain.qdd })).tau, id.tau, 'ID(FD(tau))', 1e-9);
    // wrenches need the articulated-body route; Fixman's route is for serial chains
    await rejectsWith(client.forwardDynamics(solo.modelId, { q, qd, tau, wrenches, route: 'cholesky' }), Status.INVALID_ARGUMENT, /wrenches/);
    await rejectsWith(client.forwardDynamics(solo.modelId, { q, qd, tau, route: 'fixman' }), Status.INVALID_ARGUMENT, /FIXMAN|[Ff]ixman/);
  });

  it('kinematics of the four feet: poses, Jacobians and the com Jacobian against central differences along integrate', async () => {
    const K = 3;
    const h = 1e-6;
    const base = q.subarray(0, K * NQ);
    const point = [0.01, -0.02, 0.03];
    const nominal = await client.kinematics(solo.modelId, {
      q: base, links: FEET, point, jacobian: true, comJacobian: true, centerOfMass: true, allFrames: true,
    });
    // the root link's pose is q's own: position and quaternion
    const baseFrame = await client.kinematics(solo.modelId, { q: base, link: 'base_link' });
    for (let k = 0; k < K; k++) {
      expectClose(stateOf(baseFrame.origin, k, 3), stateOf(base, k, NQ).subarray(0, 3), `root origin ${k}`, 1e-15);
      expectClose(stateOf(baseFrame.rotation, k, 9), quaternionToRotation(stateOf(base, k, NQ).subarray(3, 7)), `root rotation ${k}`);
    }
    // every frame in ModelInfo.frames' order, the root link last: the named frames are among them (their
    // poses are the frames', the point is for the Jacobian)
    const F = NU + 2; // the links, the tip, the root link (not the fixed frames)
    assert.equal(nominal.frameOrigins!.length, K * F * 3);
    for (let k = 0; k < K; k++) {
      FEET.forEach((foot, f) => {
        const i = solo.frames.findIndex((fr) => fr.name === foot);
        expectClose(stateOf(nominal.rotation, k * 4 + f, 9), stateOf(nominal.frameRotations!, k * F + i, 9), `rotation of ${foot}`, 0);
        expectClose(stateOf(nominal.origin, k * 4 + f, 3), stateOf(nominal.frameOrigins!, k * F + i, 3), `origin of ${foot}`, 0);
      });
      expectClose(stateOf(nominal.frameOrigins!, k * F + F - 1, 3), stateOf(base, k, NQ).subarray(0, 3), 'the root link last', 1e-15);
    }
    // 2 * nv perturbed configurations per state along integrate(q, +-h e_j), in one batch
    const perturbed = new Float64Array(K * 2 * NV * NQ);
    for (let k = 0; k < K; k++) {
      for (let j = 0; j < NV; j++) {
        for (const [s, sign] of [[0, 1], [1, -1]] as const) {
          const v = new Float64Array(NV);
          v[j] = sign * h;
          perturbed.set(integrateConfiguration(solo, stateOf(base, k, NQ), v), ((k * NV + j) * 2 + s) * NQ);
        }
      }
    }
    const moved = await client.kinematics(solo.modelId, { q: perturbed, links: FEET, point, centerOfMass: true });
    for (let k = 0; k < K; k++) {
      for (let j = 0; j < NV; j++) {
        const plus = (k * NV + j) * 2;
        const minus = plus + 1;
        FEET.forEach((foot, f) => {
          const J = stateOf(nominal.jacobian!, k * 4 + f, 6 * NV);
          const Rp = stateOf(moved.rotation, plus * 4 + f, 9);
          const Rm = stateOf(moved.rotation, minus * 4 + f, 9);
          const pointAt = (at: number, R: ArrayLike<number>): V3 => add(stateOf(moved.origin, at * 4 + f, 3), rot(R, point));
          const dp = scale(sub(pointAt(plus, Rp), pointAt(minus, Rm)), 1 / (2 * h));
          const dw = scale(logMatrix(mul3(Rp, Rm, true)), 1 / (2 * h));
          const col = column(J, 6, NV, j);
          expectClose(col.slice(3), dp, `${foot} linear column ${j} state ${k}`, 1e-7);
          expectClose(col.slice(0, 3), dw, `${foot} angular column ${j} state ${k}`, 1e-7);
        });
        const dc = scale(sub(stateOf(moved.com!, plus, 3), stateOf(moved.com!, minus, 3)), 1 / (2 * h));
        expectClose(column(stateOf(nominal.comJacobian!, k, 3 * NV), 3, NV, j), dc, `com Jacobian column ${j} state ${k}`, 1e-7);
      }
    }
    // local axes: the world Jacobian's rows turned into the frame's axes
    const local = await client.kinematics(solo.modelId, { q: base, links: FEET, point, jacobian: true, reference: 'local' });
    for (let k = 0; k < K; k++) {
      for (let f = 0; f < 4; f++) {
        const R = stateOf(nominal.rotation, k * 4 + f, 9);
        const Jw = stateOf(nominal.jacobian!, k * 4 + f, 6 * NV);
        const want: number[] = new Array<number>(6 * NV);
        for (let j = 0; j < NV; j++) {
          const col = column(Jw, 6, NV, j);
          const a = rotT(R, col.slice(0, 3));
          const l = rotT(R, col.slice(3));
          for (let r = 0; r < 3; r++) {
            want[r * NV + j] = a[r]!;
            want[(3 + r) * NV + j] = l[r]!;
          }
        }
        expectClose(stateOf(local.jacobian!, k * 4 + f, 6 * NV), want, `local Jacobian frame ${f} state ${k}`, 1e-13);
      }
    }
  });

  it('centre of mass, its Jacobian, the centroidal map and momentum from the root rows of I(q)', async () => {
    const k0 = await client.kinematics(solo.modelId, {
      q, qd, centerOfMass: true, comJacobian: true, centroidal: true, centroidalMomentum: true,
    });
    assert.equal(k0.centroidal!.length, COUNT * 6 * NV);
    assert.equal(k0.centroidalMomentum!.length, COUNT * 6);
    assert.equal(k0.comJacobian!.length, COUNT * 3 * NV);
    const M = (await client.fullFactor(solo.modelId, { q })).inertia;
    for (let k = 0; k < COUNT; k++) {
      const Mk = stateOf(M, k, NV * NV);
      const at = (i: number, j: number): number => Mk[i * NV + j]!;
      // the root rows of I(q) give the momentum about the root link's origin (root axes) per unit velocity:
      // [I_o, m [c]x; m [c]x^T, m 1] on the root's own columns
      const m = at(3, 3);
      const c: V3 = [at(2, 4) / m, at(0, 5) / m, at(1, 3) / m];
      const p = stateOf(q, k, NQ).subarray(0, 3);
      const R = quaternionToRotation(stateOf(q, k, NQ).subarray(3, 7));
      expectClose([k0.mass![k]!], [m], `mass state ${k}`);
      expectClose(stateOf(k0.com!, k, 3), add(p, rot(R, c)), `com state ${k}`);
      const Ag = new Array<number>(6 * NV);
      for (let j = 0; j < NV; j++) {
        const ang = [at(0, j), at(1, j), at(2, j)];
        const lin = [at(3, j), at(4, j), at(5, j)];
        const aboutCom = sub(ang, cross(c, lin));
        const a = rot(R, aboutCom);
        const l = rot(R, lin);
        for (let r = 0; r < 3; r++) {
          Ag[r * NV + j] = a[r]!;
          Ag[(3 + r) * NV + j] = l[r]!;
        }
      }
      expectClose(stateOf(k0.centroidal!, k, 6 * NV), Ag, `A_G state ${k}`, 1e-12);
      expectClose(stateOf(k0.comJacobian!, k, 3 * NV), Ag.slice(3 * NV).map((x) => x / m), `com Jacobian state ${k}`, 1e-12);
      const v = stateOf(qd, k, NV);
      const h = [0, 1, 2, 3, 4, 5].map((r) => Array.from(v).reduce((s, x, j) => s + Ag[r * NV + j]! * x, 0));
      expectClose(stateOf(k0.centroidalMomentum!, k, 6), h, `h_G state ${k}`, 1e-12);
    }
    await rejectsWith(client.kinematics(solo.modelId, { q, centroidalMomentum: true }), Status.INVALID_ARGUMENT, /qd/);
  });

  it('a payload on a named link weighs as the external wrench of its weight (standing still)', async () => {
    const zero = new Float64Array(COUNT * NV);
    for (const link of ['base_link', 'FR_LOWER_LEG']) {
      const payload = { mass: 0.7, com: [0.05, -0.02, 0.01], inertia: { ixx: 0.002, iyy: 0.003, izz: 0.004 }, link };
      const withPayload = await client.inverseDynamics(solo.modelId, { q, qd: zero, qdd: zero, payload });
      const kin = await client.kinematics(solo.modelId, { q, link, centerOfMass: true });
      const wrench = new Float64Array(COUNT * 6);
      for (let k = 0; k < COUNT; k++) {
        const R = stateOf(kin.rotation, k, 9);
        const weight = scale(G, payload.mass);
        wrench.set([...cross(rot(R, payload.com), weight), ...weight], 6 * k);
      }
      const asWrench = await client.inverseDynamics(solo.modelId, { q, qd: zero, qdd: zero, wrenches: [{ link, wrench }] });
      expectClose(withPayload.tau, asWrench.tau, `payload on ${link}`, 1e-11);
      const heavier = await client.kinematics(solo.modelId, { q, link, centerOfMass: true, payload });
      for (let k = 0; k < COUNT; k++) expectClose([heavier.mass![k]!], [kin.mass![k]! + payload.mass], `mass with payload ${k}`);
    }
  });

  it('derivatives against central differences on the manifold; dqdd/dtau = I^-1', async () => {
    const K = 2;
    const h = 1e-5;
    const qk = q.subarray(0, K * NQ);
    const qdk = qd.subarray(0, K * NV);
    const qddk = qdd.subarray(0, K * NV);
    // torques that give moderate accelerations: the light legs turn random torques into qdd of 1e4, whose
    // rounding would swamp the central differences
    const tauk = (await client.inverseDynamics(solo.modelId, { q: qk, qd: qdk, qdd: qddk })).tau;
    const di = await client.inverseDynamicsDerivatives(solo.modelId, { q: qk, qd: qdk, qdd: qddk });
    const df = await client.forwardDynamicsDerivatives(solo.modelId, { q: qk, qd: qdk, tau: tauk });
    for (const m of [di.dtauDq, di.dtauDqd, df.dqddDq, df.dqddDqd, df.dqddDtau]) assert.equal(m.length, K * NV * NV);
    expectClose(di.tau, (await client.inverseDynamics(solo.modelId, { q: qk, qd: qdk, qdd: qddk })).tau, 'tau of the derivatives');
    expectClose(df.qdd, (await client.forwardDynamics(solo.modelId, { q: qk, qd: qdk, tau: tauk })).qdd, 'qdd of the derivatives', 1e-11);
    expectClose(df.dqddDtau, (await client.fullFactor(solo.modelId, { q: qk, inverse: true })).inverse!, 'dqdd/dtau = I^-1', 1e-10);
    // states q +- h e_j (along integrate) and qd +- h e_j, in one batch per call
    const n2 = 2 * NV;
    const Q = new Float64Array(K * 2 * n2 * NQ);
    const QD = new Float64Array(K * 2 * n2 * NV);
    const A = new Float64Array(K * 2 * n2 * NV); // qdd or tau, repeated
    for (let k = 0; k < K; k++) {
      for (let j = 0; j < n2; j++) {
        for (const [s, sign] of [[0, 1], [1, -1]] as const) {
          const row = (k * n2 + j) * 2 + s;
          const dq = new Float64Array(NV);
          const dv = new Float64Array(NV);
          if (j < NV) dq[j] = sign * h;
          else dv[j - NV] = sign * h;
          Q.set(integrateConfiguration(solo, stateOf(qk, k, NQ), dq), row * NQ);
          QD.set(stateOf(qdk, k, NV).map((x, i) => x + dv[i]!), row * NV);
        }
      }
    }
    for (const [which, x] of [['inverse', qddk], ['forward', tauk]] as const) {
      for (let k = 0; k < K; k++) for (let r = 0; r < 2 * n2; r++) A.set(stateOf(x, k, NV), (k * 2 * n2 + r) * NV);
      const out =
        which === 'inverse'
          ? (await client.inverseDynamics(solo.modelId, { q: Q, qd: QD, qdd: A })).tau
          : (await client.forwardDynamics(solo.modelId, { q: Q, qd: QD, tau: A })).qdd;
      for (let k = 0; k < K; k++) {
        const dq = which === 'inverse' ? stateOf(di.dtauDq, k, NV * NV) : stateOf(df.dqddDq, k, NV * NV);
        const dv = which === 'inverse' ? stateOf(di.dtauDqd, k, NV * NV) : stateOf(df.dqddDqd, k, NV * NV);
        for (let j = 0; j < n2; j++) {
          const row = (k * n2 + j) * 2;
          const fdCol = Array.from({ length: NV }, (_, i) => (out[row * NV + i]! - out[(row + 1) * NV + i]!) / (2 * h));
          const col = j < NV ? column(dq, NV, NV, j) : column(dv, NV, NV, j - NV);
          expectClose(col, fdCol, `${which} derivative column ${j} state ${k}`, 1e-5);
        }
      }
    }
    // a translation of the whole robot changes nothing: the root's linear q columns of dtau/dq are zero
    for (let j = 3; j < 6; j++) expectClose(column(stateOf(di.dtauDq, 0, NV * NV), NV, NV, j), new Array<number>(NV).fill(0), `dtau/dq column ${j}`, 1e-12);
  });

  it('rollouts: x = [q (19); qd (18)], u of nu = 12, the semi-implicit step by the client integrate, A and B by central differences', async () => {
    const K = 2;
    const T = 3;
    const dt = 0.01;
    const W = NQ + NV;
    const x0 = new Float64Array(K * W);
    for (let k = 0; k < K; k++) {
      x0.set(stateOf(q, k, NQ), k * W);
      x0.set(stateOf(qd, k, NV), k * W + NQ);
    }
    const u = randomBatch(random, K * T, NU, -2, 2);
    const r = await client.rollout(solo.modelId, { x0, u, count: K, steps: T, dt, scheme: 'semiImplicitEuler', linearize: true });
    assert.equal(r.states.length, K * (T + 1) * W);
    assert.equal(r.a!.length, K * T * (2 * NV) ** 2);
    assert.equal(r.b!.length, K * T * 2 * NV * NU);
    for (let k = 0; k < K; k++) {
      expectClose(stateOf(r.states, k * (T + 1), W), stateOf(x0, k, W), `x_0 of rollout ${k}`, 0);
      for (let t = 0; t < T; t++) {
        const x = stateOf(r.states, k * (T + 1) + t, W);
        const next = stateOf(r.states, k * (T + 1) + t + 1, W);
        const quat = next.subarray(3, 7);
        assert.ok(Math.abs(Math.hypot(...quat) - 1) < 1e-14, `unit quaternion at step ${t + 1}`);
        const torque = new Float64Array(NV);
        torque.set(stateOf(u, k * T + t, NU), 6);
        const a = (await client.forwardDynamics(solo.modelId, { q: x.subarray(0, NQ), qd: x.subarray(NQ), tau: torque })).qdd;
        const v = x.subarray(NQ).map((vi, i) => vi + dt * a[i]!);
        expectClose(next.subarray(NQ), v, `qd_${t + 1} = qd + dt FD, rollout ${k}`, 1e-10);
        expectClose(next.subarray(0, NQ), integrateConfiguration(solo, x.subarray(0, NQ), v, dt), `q_${t + 1} = integrate(q, qd_${t + 1} dt)`, 1e-10);
      }
    }
    // one RK4 step: A (36 x 36) and B (36 x 12) against central differences, measured by difference at the
    // nominal result; slow joints and small torques (the light legs turn large ones into accelerations whose
    // rounding would swamp the differences)
    const h = 1e-5;
    const x = Float64Array.from(stateOf(x0, 0, W));
    x.subarray(NQ).set(randomBatch(random, 1, NV, -0.5, 0.5));
    const u0 = randomBatch(random, 1, NU, -0.1, 0.1);
    const nominal = await client.rollout(solo.modelId, { x0: x, u: u0, count: 1, steps: 1, dt, linearize: true });
    const cols = 2 * NV + NU;
    const X = new Float64Array(2 * cols * W);
    const U = new Float64Array(2 * cols * NU);
    for (let j = 0; j < cols; j++) {
      for (const [s, sign] of [[0, 1], [1, -1]] as const) {
        const row = 2 * j + s;
        const dq = new Float64Array(NV);
        if (j < NV) dq[j] = sign * h;
        X.set(integrateConfiguration(solo, x.subarray(0, NQ), dq), row * W);
        X.set(x.subarray(NQ).map((vi, i) => vi + (j >= NV && j < 2 * NV && i === j - NV ? sign * h : 0)), row * W + NQ);
        U.set(u0.map((ui, i) => ui + (j >= 2 * NV && i === j - 2 * NV ? sign * h : 0)), row * NU);
      }
    }
    const moved = await client.rollout(solo.modelId, { x0: X, u: U, count: 2 * cols, steps: 1, dt });
    const x1 = stateOf(nominal.states, 1, W);
    const tangent = (row: number): number[] => {
      const y = stateOf(moved.states, 2 * row + 1, W);
      return [...differenceConfiguration(solo, x1.subarray(0, NQ), y.subarray(0, NQ)), ...y.subarray(NQ)];
    };
    for (let j = 0; j < cols; j++) {
      const plus = tangent(2 * j);
      const minus = tangent(2 * j + 1);
      const fdCol = plus.map((p, i) => (p - minus[i]!) / (2 * h));
      const col = j < 2 * NV ? column(nominal.a!, 2 * NV, 2 * NV, j) : column(nominal.b!, 2 * NV, NU, j - 2 * NV);
      expectClose(col, fdCol, `${j < 2 * NV ? 'A' : 'B'} column ${j < 2 * NV ? j : j - 2 * NV}`, 1e-6);
    }
  });

  it('wrenches in derivatives and rollouts: tau is inverse dynamics with them, a rollout step is FD with them', async () => {
    const K = 3;
    const sub = (x: Float64Array, width: number): Float64Array => x.subarray(0, K * width);
    const [q3, qd3, qdd3] = [sub(q, NQ), sub(qd, NV), sub(qdd, NV)];
    const wrenches: LinkWrench[] = [
      { link: 'FL_FOOT', wrench: randomBatch(random, K, 6, -10, 10) }, // one per state, world axes
      { link: 'HR_LOWER_LEG', wrench: [0.2, -0.1, 0.3, 2, -3, 5], reference: 'local' }, // shared, its axes
      { link: 'base_link', wrench: [0.1, 0.2, -0.3, 1, 2, -4] }, // the root link, world axes
    ];
    const d = await client.inverseDynamicsDerivatives(solo.modelId, { q: q3, qd: qd3, qdd: qdd3, wrenches });
    // the reference: InverseDynamics with the same wrenches, an independent RPC
    const id = await client.inverseDynamics(solo.modelId, { q: q3, qd: qd3, qdd: qdd3, wrenches });
    expectClose(d.tau, id.tau, 'Derivatives tau vs InverseDynamics tau with wrenches', 1e-11);
    const bare = await client.inverseDynamicsDerivatives(solo.modelId, { q: q3, qd: qd3, qdd: qdd3 });
    assert.ok(d.dtauDq.some((x, i) => Math.abs(x - bare.dtauDq[i]!) > 1e-3), 'the wrenches change dtau/dq');
    // dtau/dq of state 0 against central differences of InverseDynamics with the wrenches along integrate
    const h = 1e-6;
    const q0 = q3.subarray(0, NQ);
    const one: LinkWrench[] = wrenches.map((w) => ({ ...w, wrench: Array.from(w.wrench as ArrayLike<number>).slice(0, 6) }));
    for (let j = 0; j < NV; j++) {
      const taus: Float64Array[] = [];
      for (const sign of [1, -1]) {
        const dq = new Float64Array(NV);
        dq[j] = sign * h;
        const qs = integrateConfiguration(solo, q0, dq);
        taus.push((await client.inverseDynamics(solo.modelId, { q: qs, qd: qd3.subarray(0, NV), qdd: qdd3.subarray(0, NV), wrenches: one })).tau);
      }
      const fdCol = taus[0]!.map((p, i) => (p - taus[1]![i]!) / (2 * h));
      expectClose(column(d.dtauDq.subarray(0, NV * NV), NV, NV, j), fdCol, `dtau/dq column ${j} with wrenches`, 1e-6);
    }
    const f = await client.forwardDynamicsDerivatives(solo.modelId, { q: q3, qd: qd3, tau: id.tau, wrenches });
    expectClose(f.qdd, qdd3, 'FD derivatives qdd of ID tau with the same wrenches', 1e-9);

    // a rollout's first semi-implicit step with wrenches held over it: qd + dt FD(q, qd, u, wrenches)
    const W = NQ + NV;
    const dt = 0.01;
    const x0 = new Float64Array(K * W);
    for (let k = 0; k < K; k++) {
      x0.set(stateOf(q3, k, NQ), k * W);
      x0.set(stateOf(qd3, k, NV), k * W + NQ);
    }
    const u = randomBatch(random, K * 2, NU, -1, 1);
    const held: LinkWrench[] = [
      { link: 'FR_FOOT', wrench: randomBatch(random, K, 6, -10, 10) }, // one per rollout
      { link: 'HL_LOWER_LEG', wrench: [0, 0.1, 0, 1, 0, 6], reference: 'local' },
    ];
    const r = await client.rollout(solo.modelId, { x0, u, count: K, steps: 2, dt, scheme: 'semiImplicitEuler', wrenches: held });
    const torque = new Float64Array(K * NV);
    for (let k = 0; k < K; k++) torque.set(stateOf(u, 2 * k, NU), k * NV + 6);
    const fd = await client.forwardDynamics(solo.modelId, { q: q3, qd: qd3, tau: torque, wrenches: held });
    for (let k = 0; k < K; k++) {
      const v = stateOf(qd3, k, NV).map((vi, i) => vi + dt * fd.qdd[k * NV + i]!);
      const next = stateOf(r.states, k * 3 + 1, W);
      expectClose(next.subarray(NQ), v, `rollout ${k}: qd_1 = qd + dt FD with the wrenches`, 1e-10);
      expectClose(next.subarray(0, NQ), integrateConfiguration(solo, stateOf(q3, k, NQ), v, dt), `rollout ${k}: q_1`, 1e-10);
    }
    // hostile: a missing link named, an out-of-range value named by its field
    await rejectsWith(client.rollout(solo.modelId, { x0, u, count: K, steps: 2, dt, wrenches: [{ link: 'NO_SUCH_FOOT', wrench: [0, 0, 0, 0, 0, 1] }] }), Status.INVALID_ARGUMENT, /NO_SUCH_FOOT/);
    await rejectsWith(
      client.inverseDynamicsDerivatives(solo.modelId, { q: q3, qd: qd3, qdd: qdd3, wrenches: [{ link: 'FL_FOOT', wrench: [0, 0, 0, 1.7e308, 0, 0] }] }),
      Status.INVALID_ARGUMENT,
      /wrenches\[0\]\.wrench/,
    );
  });

  it('the stream: ID and FD with foot wrenches equal the batch calls', async () => {
    const session = client.openStream();
    try {
      const wrenches: LinkWrench[] = [{ link: 'FL_LOWER_LEG', wrench: [0.1, 0.2, -0.1, 3, -2, 20] }, { link: 'HL_LOWER_LEG', wrench: [0, 0, 0, 0, 1, 18], reference: 'local' }];
      const k = 5;
      const [a, b] = await Promise.all([
        session.inverseDynamics(solo.modelId, stateOf(q, k, NQ), stateOf(qd, k, NV), stateOf(qdd, k, NV), undefined, wrenches),
        session.forwardDynamics(solo.modelId, stateOf(q, k, NQ), stateOf(qd, k, NV), stateOf(tau, k, NV), undefined, wrenches),
      ]);
      const one = { q: stateOf(q, k, NQ), qd: stateOf(qd, k, NV), wrenches };
      expectClose(a.result, (await client.inverseDynamics(solo.modelId, { ...one, qdd: stateOf(qdd, k, NV) })).tau, 'stream ID', 0);
      expectClose(b.result, (await client.forwardDynamics(solo.modelId, { ...one, tau: stateOf(tau, k, NV) })).qdd, 'stream FD', 0);
      await rejectsWith(
        session.inverseDynamics(solo.modelId, stateOf(q, k, NQ).subarray(0, NV), stateOf(qd, k, NV), stateOf(qdd, k, NV)),
        Status.INVALID_ARGUMENT,
        /q has 18 values, expected nq = 19/,
      );
    } finally {
      await session.close();
    }
  });

  it('integrate and difference on the client: identities, unit quaternions, the conventions of docs/trees.md', () => {
    const v = randomBatch(random, COUNT, NV, -1, 1);
    const q1 = integrateConfiguration(solo, q, v);
    for (let k = 0; k < COUNT; k++) assert.ok(Math.abs(Math.hypot(...stateOf(q1, k, NQ).subarray(3, 7)) - 1) < 1e-15);
    expectClose(differenceConfiguration(solo, q, q1), v, 'difference(q, integrate(q, v)) = v', 1e-12);
    const back = integrateConfiguration(solo, q, differenceConfiguration(solo, q, q1));
    for (let k = 0; k < COUNT; k++) {
      const a = stateOf(back, k, NQ);
      const b = stateOf(q1, k, NQ);
      const sign = a[6]! * b[6]! + a[3]! * b[3]! + a[4]! * b[4]! + a[5]! * b[5]! < 0 ? -1 : 1; // q and -q: one rotation
      expectClose(a.map((x, i) => (i >= 3 && i < 7 ? sign * x : x)), b, `integrate(q, difference(q, q1)) = q1 state ${k}`, 1e-12);
    }
    expectClose(integrateConfiguration(solo, q, v, 0), q, 'integrate by 0', 1e-15);
    expectClose(differenceConfiguration(solo, q, integrateConfiguration(solo, q, v, 0.3)), v.map((x) => 0.3 * x), 'difference(q, integrate(q, v, 0.3)) = 0.3 v', 1e-12);
    // the two halves of a step are one step about the same axes only for the joints and the rotation (the
    // origin moves along the orientation at the start of each half)
    const halves = integrateConfiguration(solo, integrateConfiguration(solo, q, v, 0.5), v, 0.5);
    for (let k = 0; k < COUNT; k++) {
      expectClose(stateOf(halves, k, NQ).subarray(3), stateOf(q1, k, NQ).subarray(3), `two halves, rotation and joints, state ${k}`, 1e-12);
    }
    // the root turns about its own axes: a turn about the root's z moves nothing but the orientation by Rz
    const q0 = neutralConfiguration(solo);
    assert.deepEqual(Array.from(q0.subarray(0, 7)), [0, 0, 0, 0, 0, 0, 1]);
    const turn = new Float64Array(NV);
    turn[2] = Math.PI / 2;
    turn[3] = 1; // the linear velocity in the root's axes, taken at the start (R = 1): along world x
    const t = integrateConfiguration(solo, q0, turn);
    expectClose(t.subarray(0, 7), [1, 0, 0, 0, 0, Math.SQRT1_2, Math.SQRT1_2], 'a quarter turn about z', 1e-15);
    expectClose(quaternionToRotation(t.subarray(3, 7)), [0, -1, 0, 1, 0, 0, 0, 0, 1], 'Rz(90 deg)', 1e-15);
    // a second step along the root's x now moves along world y
    const step = new Float64Array(NV);
    step[3] = 1;
    expectClose(integrateConfiguration(solo, t, step).subarray(0, 3), [1, 1, 0], 'linear velocity in the root axes', 1e-15);
    // a planar root and a fixed root add up
    const planar = { root: 'planar' as const, nq: 15, nv: 15 };
    const qp = randomBatch(random, 2, 15, -1, 1);
    const vp = randomBatch(random, 2, 15, -1, 1);
    expectClose(integrateConfiguration(planar, qp, vp, 0.5), qp.map((x, i) => x + 0.5 * vp[i]!), 'planar integrate', 0);
    expectClose(differenceConfiguration(planar, qp, qp.map((x, i) => x + vp[i]!)), vp, 'planar difference', 1e-15);
    expectClose(normalizeConfiguration(solo, q), q, 'normalize a unit quaternion', 1e-15);
    // refusals: the quaternion's norm named, the sizes named
    const bad = Float64Array.from(q.subarray(0, NQ));
    bad.fill(0, 3, 7);
    assert.throws(() => integrateConfiguration(solo, bad, v.subarray(0, NV)), (e: unknown) => e instanceof InvalidArgumentError && /q\[3\.\.7\), the root's quaternion, has norm 0/.test(e.details));
    bad.fill(1e300, 3, 7);
    assert.throws(() => differenceConfiguration(solo, bad, q.subarray(0, NQ)), (e: unknown) => e instanceof InvalidArgumentError && /q0\[3\.\.7\).*norm 2e\+300/.test(e.details));
    assert.throws(() => integrateConfiguration(solo, q.subarray(0, NV), v.subarray(0, NV)), (e: unknown) => e instanceof InvalidArgumentError && /q has 18 values/.test(e.details));
    assert.throws(() => integrateConfiguration(solo, q.subarray(0, NQ), v.subarray(0, NQ)), (e: unknown) => e instanceof InvalidArgumentError && /v has 19 values, expected count\*18 = 18/.test(e.details));
    assert.throws(() => integrateConfiguration({ root: 'floating', nq: 18, nv: 18 }, q.subarray(0, 18), v.subarray(0, 18)), InvalidArgumentError);
    assert.throws(() => normalizeConfiguration(solo, Float64Array.from(q.subarray(0, NQ)).fill(NaN, 0, 1)), /q\[0\] is NaN/);
  });

  it('hostile shapes: INVALID_ARGUMENT naming the field', async () => {
    const zero = new Float64Array(NV);
    const one = Float64Array.from(q.subarray(0, NQ));
    for (const norm of [0, 1e300]) {
      const bad = Float64Array.from(one);
      bad.fill(norm === 0 ? 0 : norm, 3, 7);
      for (const call of [
        () => client.inverseDynamics(solo.modelId, { q: bad, qd: zero, qdd: zero }),
        () => client.forwardDynamics(solo.modelId, { q: bad, qd: zero, tau: zero }),
        () => client.kinematics(solo.modelId, { q: bad }),
        () => client.fullFactor(solo.modelId, { q: bad }),
        () => client.inverseDynamicsDerivatives(solo.modelId, { q: bad, qd: zero, qdd: zero }),
        () => client.rollout(solo.modelId, { x0: [...bad, ...zero], u: new Float64Array(NU), count: 1, steps: 1, dt: 0.01 }),
      ]) {
        await rejectsWith(call(), Status.INVALID_ARGUMENT, new RegExp(`^(x0|q)\\[3\\.\\.[67][\\])].*quaternion.*norm ${norm === 0 ? '0[ ,]' : '2(\\.\\d*)?e\\+300'}`));
      }
    }
    // nq against nv: q with nv values per state, qd with nq
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: q.subarray(0, 2 * NV), qd: qd.subarray(0, 2 * NV), qdd: qdd.subarray(0, 2 * NV), count: 2 }),
      Status.INVALID_ARGUMENT, /^q has 36 values, expected count\*nq = 38$/);
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: q.subarray(0, 2 * NQ), qd: new Float64Array(2 * NQ), qdd: qdd.subarray(0, 2 * NV) }),
      Status.INVALID_ARGUMENT, /^qd has 38 values, expected count\*dof = 36$/);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, links: ['FL_LOWER_LEG', 'NO_SUCH_LINK'] }),
      Status.INVALID_ARGUMENT, /links\[1\] 'NO_SUCH_LINK' is not a frame/);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, link: 'NO_SUCH_LINK' }), Status.INVALID_ARGUMENT, /link 'NO_SUCH_LINK'/);
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: [{ link: 'FL_LOWER_LEG', wrench: [0, 0, 0, 0, 0, 1] }, { link: 'NO_SUCH_LINK', wrench: [0, 0, 0, 0, 0, 1] }] }),
      Status.INVALID_ARGUMENT, /wrenches\[1\]\.link 'NO_SUCH_LINK' is not a frame/);
    await rejectsWith(client.forwardDynamics(solo.modelId, { q: one, qd: zero, tau: zero, wrenches: [{ link: 'NO_SUCH_LINK', wrench: [0, 0, 0, 0, 0, 1] }] }),
      Status.INVALID_ARGUMENT, /wrenches\[0\]\.link/);
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: [{ link: 'FL_LOWER_LEG', wrench: [1, 2, 3, 4, 5] }] }),
      Status.INVALID_ARGUMENT, /wrenches\[0\]\.wrench has 5 values/);
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, payload: { mass: 1, link: 'NO_SUCH_LINK' } }),
      Status.INVALID_ARGUMENT, /payload\.link 'NO_SUCH_LINK'/);
    // checked before sending
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: [{ wrench: [0, 0, 0, 0, 0, 1], reference: 'sideways' as 'world' }] }),
      Status.INVALID_ARGUMENT, /^wrenches\[0\]\.reference 'sideways' is not one of world, base, local$/);
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: [{ link: 'FL_LOWER_LEG' } as LinkWrench] }),
      Status.INVALID_ARGUMENT, /wrenches\[0\]\.wrench/);
    await rejectsWith(client.registerUrdf(text, { root: 'sideways' as 'fixed' }), Status.INVALID_ARGUMENT, /^root 'sideways' is not one of fixed, floating, planar$/);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, reference: 'up' as 'local' }), Status.INVALID_ARGUMENT, /^reference 'up'/);
  });

  it("GetServerInfo's new limits; more wrenches or frames than them: RESOURCE_EXHAUSTED", async () => {
    const info = await client.getServerInfo();
    assert.ok(info.maxDepth >= 4, `maxDepth ${info.maxDepth}`);
    assert.ok(info.maxWrenches >= 4, `maxWrenches ${info.maxWrenches}`);
    assert.ok(info.maxFrames >= 4, `maxFrames ${info.maxFrames}`);
    const one = q.subarray(0, NQ);
    const zero = new Float64Array(NV);
    const many: LinkWrench[] = Array.from({ length: info.maxWrenches + 1 }, () => ({ link: 'FL_LOWER_LEG', wrench: [0, 0, 0, 0, 0, 1] }));
    await rejectsWith(client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: many }), Status.RESOURCE_EXHAUSTED, /max_wrenches/);
    const atLimit = await client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: many.slice(1) });
    const once = await client.inverseDynamics(solo.modelId, { q: one, qd: zero, qdd: zero, wrenches: [{ link: 'FL_LOWER_LEG', wrench: [0, 0, 0, 0, 0, info.maxWrenches] }] });
    expectClose(atLimit.tau, once.tau, `${info.maxWrenches} equal wrenches = one ${info.maxWrenches} times larger`, 1e-12);
    const frames = Array.from({ length: info.maxFrames + 1 }, () => 'FL_LOWER_LEG');
    await rejectsWith(client.kinematics(solo.modelId, { q: one, links: frames }), Status.RESOURCE_EXHAUSTED, /max_frames/);
    const k = await client.kinematics(solo.modelId, { q: one, links: frames.slice(1) });
    assert.equal(k.origin.length, info.maxFrames * 3);
  });

  it('splits the tree calls above max_states and joins the answers in order', async () => {
    const dir = tempDir('trees-metrics');
    const portFile = path.join(dir, 'metrics.port');
    const limited = await startServer({ args: ['--max-states', '10', '--metrics-listen', '127.0.0.1:0', '--metrics-port-file', portFile] });
    const small = new DenocClient(limited.address);
    try {
      const port = Number(fs.readFileSync(portFile, 'utf8').trim());
      const id = (await small.registerUrdf(text, { root: 'floating' })).modelId;
      assert.equal(id, solo.modelId);
      const count = 23; // 10 + 10 + 3
      const qs = randomStates(random, count, NU);
      const vs = randomBatch(random, count, NV, -1, 1);
      const as = randomBatch(random, count, NV, -3, 3);
      const wrenches: LinkWrench[] = [
        { link: 'FL_LOWER_LEG', wrench: randomBatch(random, count, 6, -10, 10) },
        { link: 'HR_LOWER_LEG', wrench: [0, 0, 0, 1, 2, 15], reference: 'local' },
      ];
      const input = { q: qs, qd: vs, qdd: as, wrenches };
      const a = await small.inverseDynamics(id, input);
      assert.equal(await calls(port, 'InverseDynamics'), 3);
      assert.equal(a.count, count);
      expectClose(a.tau, (await client.inverseDynamics(id, input)).tau, 'split ID with wrenches', 0);
      const f = await small.forwardDynamics(id, { q: qs, qd: vs, tau: as, wrenches });
      assert.equal(await calls(port, 'ForwardDynamics'), 3);
      expectClose(f.qdd, (await client.forwardDynamics(id, { q: qs, qd: vs, tau: as, wrenches })).qdd, 'split FD with wrenches', 0);
      const kin = { q: qs, qd: vs, links: FEET, jacobian: true, jdotQd: true, allFrames: true, centerOfMass: true, comJacobian: true, centroidal: true, centroidalMomentum: true };
      const ks = await small.kinematics(id, kin);
      assert.equal(await calls(port, 'Kinematics'), 3);
      const kw = await client.kinematics(id, kin);
      for (const key of ['rotation', 'origin', 'jacobian', 'jdotQd', 'frameRotations', 'frameOrigins', 'com', 'mass', 'comJacobian', 'centroidal', 'centroidalMomentum'] as const) {
        assert.ok(ks[key] !== undefined, key);
        expectClose(ks[key] ?? [], kw[key] ?? [], `split kinematics ${key}`, 0);
      }
      const ds = await small.inverseDynamicsDerivatives(id, { q: qs, qd: vs, qdd: as });
      assert.equal(await calls(port, 'Derivatives'), 3);
      expectClose(ds.dtauDq, (await client.inverseDynamicsDerivatives(id, { q: qs, qd: vs, qdd: as })).dtauDq, 'split derivatives', 0);
      const K = 7;
      const T = 3; // three rollouts per call: 3 + 3 + 1
      const x0 = new Float64Array(K * (NQ + NV));
      for (let k = 0; k < K; k++) x0.set(stateOf(qs, k, NQ), k * (NQ + NV));
      const u = randomBatch(random, K * T, NU, -1, 1);
      const ro = { x0, u, count: K, steps: T, dt: 0.01, linearize: true };
      const rs = await small.rollout(id, ro);
      assert.equal(await calls(port, 'Rollout'), 3);
      const rw = await client.rollout(id, ro);
      expectClose(rs.states, rw.states, 'split rollout states', 0);
      expectClose(rs.a!, rw.a!, 'split rollout A', 0);
      expectClose(rs.b!, rw.b!, 'split rollout B', 0);
    } finally {
      small.close();
      await limited.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it("the README's tree example runs as written: a standing robot's root wrench is zero", async () => {
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Trees and moving roots'), readme.indexOf('## TLS and tokens'));
    const code = /```javascript\n([\s\S]*?)```/.exec(section)![1]!;
    assert.ok(code.trim().split('\n').length <= 14, 'fourteen lines at most');
    const file = path.join(PACKAGE_DIR, 'dist', 'readme-trees-example.mjs'); // inside the package: 'denoc' resolves to it
    fs.writeFileSync(file, code);
    const out = await new Promise<string>((resolve, reject) => {
      execFile(process.execPath, [file], { cwd: PACKAGE_DIR, env: { ...process.env, DENOC_SERVER: server.address, SOLO12: SOLO }, timeout: 60_000 },
        (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)));
    });
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, out);
    const m = /^nq 19 nv 18 nu 12 mass (\S+) kg; root wrench (.*)$/.exec(lines[0]!);
    assert.ok(m !== null, lines[0]);
    assert.equal(m[1], urdfMass(text).toFixed(3));
    const rootWrench = m[2]!.split(' ').map(Number);
    assert.equal(rootWrench.length, 6);
    for (const x of rootWrench) assert.ok(Math.abs(x) < 5e-4, `root wrench ${m[2]}: the feet carry the weight`);
    // the joint torques: the same call made here
    const q0 = neutralConfiguration(solo);
    q0.set([0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6], 7);
    const zero = new Float64Array(NV);
    const mass = urdfMass(text);
    const wrenches = ['FL', 'FR', 'HL', 'HR'].map((leg) => ({ link: `${leg}_FOOT`, wrench: [0, 0, 0, 0, 0, (mass * 9.81) / 4] }));
    const t = (await client.inverseDynamics(solo.modelId, { q: q0, qd: zero, qdd: zero, wrenches })).tau;
    const torques = lines[1]!.replace(/^joint torques /, '').split(' ').map(Number);
    expectClose(torques, Array.from(t.subarray(6)), 'joint torques of the example', 1e-3);
    assert.ok(readme.includes(`\n${lines[0]}\n${lines[1]}\n`), `README shows:\n${out}`);
  });

  it('a client that did not register the model learns its sizes once: count from q.length / nq', async () => {
    const other = new DenocClient(server.address);
    try {
      const three = { q: q.subarray(0, 3 * NQ), qd: qd.subarray(0, 3 * NV), qdd: qdd.subarray(0, 3 * NV) };
      const r = await other.inverseDynamics(solo.modelId, three);
      assert.equal(r.count, 3);
      expectClose(r.tau, (await client.inverseDynamics(solo.modelId, three)).tau, 'tau', 0);
      // a given dof keeps the root's extra coordinate: nq = dof + 1
      const s2 = await other.forwardDynamics(solo.modelId, { q: q.subarray(0, 2 * NQ), qd: qd.subarray(0, 2 * NV), tau: tau.subarray(0, 2 * NV), dof: NV });
      assert.equal(s2.count, 2);
      const listed = await new DenocClient(server.address).listModels();
      const mine = listed.find((m) => m.modelId === solo.modelId);
      assert.deepEqual([mine?.nq, mine?.nv, mine?.nu, mine?.root], [NQ, NV, NU, 'floating']);
      assert.deepEqual(mine?.joints, solo.joints);
    } finally {
      other.close();
    }
  });

  it('simulate a falling Solo-12 (RK4, Dormand-Prince): q of nq per sample, unit quaternions, energy kept, the two agree', async () => {
    const q0 = stateOf(q, 0, NQ);
    const qd0 = randomBatch(random, 1, NV, -0.5, 0.5);
    const run = await client.simulateAll(solo.modelId, { q0, qd0, tEnd: 0.2, integrator: 'rk4', step: 1e-4, dtOut: 0.05 });
    assert.equal(run.count, 5);
    assert.equal(run.q.length, 5 * NQ);
    assert.equal(run.qd.length, 5 * NV);
    expectClose(stateOf(run.q, 0, NQ), q0, 'q at t = 0', 0);
    for (let k = 0; k < run.count; k++) {
      assert.ok(Math.abs(Math.hypot(...stateOf(run.q, k, NQ).subarray(3, 7)) - 1) < 1e-12, `unit quaternion at sample ${k}`);
      expectClose([run.energy[k]!], [run.energy[0]!], `energy at sample ${k}`, 1e-7);
    }
    // no torque, no contact: the centre of mass falls freely, c(t) = c0 + cdot0 t + g t^2 / 2
    const kin = await client.kinematics(solo.modelId, { q: run.q, qd: run.qd, centerOfMass: true, comJacobian: true });
    const c0 = stateOf(kin.com!, 0, 3);
    const J0 = stateOf(kin.comJacobian!, 0, 3 * NV);
    const cdot0 = [0, 1, 2].map((r) => Array.from(qd0).reduce((sum, x, j) => sum + J0[r * NV + j]! * x, 0));
    for (let k = 0; k < run.count; k++) {
      const t = run.t[k]!;
      const want = [0, 1, 2].map((r) => c0[r]! + cdot0[r]! * t + 0.5 * G[r]! * t * t);
      expectClose(stateOf(kin.com!, k, 3), want, `centre of mass at t = ${t}`, 1e-9);
    }
    // Dormand-Prince (the default) on the manifold too: the motion of RK4 at its small step
    const dopri = await client.simulateAll(solo.modelId, { q0, qd0, tEnd: 0.2, rtol: 1e-10, atol: 1e-10, dtOut: 0.05 });
    assert.equal(dopri.count, 5);
    for (let k = 0; k < dopri.count; k++) {
      assert.ok(Math.abs(Math.hypot(...stateOf(dopri.q, k, NQ).subarray(3, 7)) - 1) < 1e-12, `DOPRI5 unit quaternion at sample ${k}`);
    }
    expectClose(dopri.q, run.q, 'DOPRI5 q against RK4', 1e-7);
    expectClose(dopri.qd, run.qd, 'DOPRI5 qd against RK4', 1e-7);
  });

  it('batches as one array per state (number[][]) equal the flat batches', async () => {
    const K = 4;
    const rowsOf = (x: Float64Array, width: number): number[][] => Array.from({ length: K }, (_, k) => Array.from(stateOf(x, k, width)));
    const wrench = randomBatch(random, K, 6, -5, 5);
    const flat = { q: q.subarray(0, K * NQ), qd: qd.subarray(0, K * NV), qdd: qdd.subarray(0, K * NV) };
    const nested = { q: rowsOf(q, NQ), qd: rowsOf(qd, NV), qdd: rowsOf(qdd, NV) };
    const a = await client.inverseDynamics(solo.modelId, { ...nested, wrenches: [{ link: 'FL_FOOT', wrench: rowsOf(wrench, 6) }] });
    assert.equal(a.count, K);
    const b = await client.inverseDynamics(solo.modelId, { ...flat, wrenches: [{ link: 'FL_FOOT', wrench }] });
    expectClose(a.tau, b.tau, 'ID of rows', 0);
    const f = await client.forwardDynamics(solo.modelId, { q: nested.q, qd: nested.qd, tau: rowsOf(tau, NV) });
    expectClose(f.qdd, (await client.forwardDynamics(solo.modelId, { q: flat.q, qd: flat.qd, tau: tau.subarray(0, K * NV) })).qdd, 'FD of rows', 0);
    const k = await client.kinematics(solo.modelId, { q: nested.q.map((r) => Float64Array.from(r)), links: FEET });
    expectClose(k.origin, (await client.kinematics(solo.modelId, { q: flat.q, links: FEET })).origin, 'kinematics of rows', 0);
    const d = await client.inverseDynamicsDerivatives(solo.modelId, nested);
    expectClose(d.dtauDq, (await client.inverseDynamicsDerivatives(solo.modelId, flat)).dtauDq, 'derivatives of rows', 0);
    const x0 = [[...nested.q[0]!, ...nested.qd[0]!]];
    const u = [new Array<number>(NU).fill(0.1), new Array<number>(NU).fill(-0.1)];
    const r = await client.rollout(solo.modelId, { x0, u, count: 1, steps: 2, dt: 0.01 });
    expectClose(r.states, (await client.rollout(solo.modelId, { x0: x0.flat(), u: u.flat(), count: 1, steps: 2, dt: 0.01 })).states, 'rollout of rows', 0);
    expectClose(integrateConfiguration(solo, nested.q, nested.qd), integrateConfiguration(solo, flat.q, flat.qd), 'integrate of rows', 0);
    // rows of different lengths: refused before sending, naming the row
    await rejectsWith(client.inverseDynamics(solo.modelId, { ...nested, q: [nested.q[0]!, nested.q[1]!.slice(0, NV)] }), Status.INVALID_ARGUMENT,
      /^q\[1\] has 18 values, expected 19 as q\[0\]$/);
  });

  it('re-registration keeps the root: a floating model registered again on a server without it', async () => {
    const empty = await startServer();
    const moving = new DenocClient(server.address);
    try {
      const id = (await moving.registerUrdf(text, { root: 'floating' })).modelId;
      assert.equal(id, solo.modelId);
      moving.reconnect(empty.address);
      const one = { q: q.subarray(0, NQ), qd: qd.subarray(0, NV), qdd: qdd.subarray(0, NV), wrenches: [{ link: 'HL_FOOT', wrench: [0, 0, 0, 0, 0, 9] }] };
      const r = await moving.inverseDynamics(id, one);
      assert.equal(moving.reRegistrations, 1);
      expectClose(r.tau, (await client.inverseDynamics(id, one)).tau, 'tau after re-registration', 0);
      const info = await moving.getModel(id);
      assert.deepEqual([info.root, info.nq, info.nv], ['floating', NQ, NV]);
    } finally {
      moving.close();
      await empty.stop();
    }
  });

  it('refusals of serial-only options on a tree and of link with links', async () => {
    const one = q.subarray(0, NQ);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, lambda: true }), Status.INVALID_ARGUMENT, /lambda/);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, link: 'FL_LOWER_LEG', links: ['FR_LOWER_LEG'] }), Status.INVALID_ARGUMENT, /link and links/);
    await rejectsWith(client.kinematics(solo.modelId, { q: one, links: 'FL_LOWER_LEG' as unknown as string[] }), Status.INVALID_ARGUMENT, /^links: expected an array/);
  });

  it('a planar root: nq = nv = nu + 3, the root coordinates first, inverse dynamics against the core', async () => {
    const planar = await client.registerUrdf(text, { root: 'planar' });
    assert.deepEqual([planar.root, planar.nq, planar.nv, planar.nu], ['planar', 15, 15, 12]);
    assert.deepEqual(planar.joints[0], {
      name: 'root_joint', type: 'planar', parent: -1, qIndex: 0, vIndex: 0, nq: 3, nv: 3, link: 'base_link', depth: 1,
    });
    const n = 15;
    const count = 5;
    const qp = randomBatch(random, count, n, -1.5, 1.5);
    const vp = randomBatch(random, count, n, -1, 1);
    const ap = randomBatch(random, count, n, -3, 3);
    const r = await client.inverseDynamics(planar.modelId, { q: qp, qd: vp, qdd: ap });
    const want = await runCli('id', SOLO, Array.from({ length: count }, (_, k) => ({
      q: Array.from(stateOf(qp, k, n)), qd: Array.from(stateOf(vp, k, n)), qdd: Array.from(stateOf(ap, k, n)),
    })), ['--root', 'planar']);
    for (let k = 0; k < count; k++) expectClose(stateOf(r.tau, k, n), want[k]!.tau!, `planar tau state ${k}`);
    // the root link's pose: at (x, y, 0), turned by yaw about z
    const k0 = await client.kinematics(planar.modelId, { q: qp, link: 'base_link' });
    for (let k = 0; k < count; k++) {
      const [x, y, yaw] = stateOf(qp, k, n);
      expectClose(stateOf(k0.origin, k, 3), [x!, y!, 0], `planar root origin ${k}`, 0);
      const c = Math.cos(yaw!);
      const s = Math.sin(yaw!);
      expectClose(stateOf(k0.rotation, k, 9), [c, -s, 0, s, c, 0, 0, 0, 1], `planar root rotation ${k}`, 1e-15);
    }
  });
});
