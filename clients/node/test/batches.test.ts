// What a planner needs from the client against real denocd processes: a payload on the inverse-dynamics,
// forward-dynamics and full-factor batches (equal to the calls without it on a second model whose last link
// carries the payload, merged by hand with the parallel-axis theorem), and Kinematics, Derivatives and
// Rollout split above the server's --max-states (equal to the same batches against a server without the
// limit; the number of calls read from the limited server's metrics).
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { DenocClient, DenocError, Status, type DHLink, type Payload } from '../src/index';
import { PANDA_HAND, PANDA_TIP, calls, expectClose, randomBatch, rng, startServer, tempDir } from './support';

type M3 = [[number, number, number], [number, number, number], [number, number, number]];

const TOOL_INERTIA: M3 = [
  [0.004, 0.0003, -0.0002],
  [0.0003, 0.005, 0.0001],
  [-0.0002, 0.0001, 0.003],
];
const TOOL: Payload = {
  mass: 1.3,
  com: [0.03, -0.02, 0.09],
  inertia: { ixx: 0.004, ixy: 0.0003, ixz: -0.0002, iyy: 0.005, iyz: 0.0001, izz: 0.003 },
};
const TOOL_COM = [0.03, -0.02, 0.09];

const deg = Math.PI / 180;
/** A spatial 4R chain whose last link has an offset mass centre and a full inertia. */
const CHAIN: DHLink[] = [
  { type: 'revolute', a: 0, b: 0.3, alpha: -90 * deg, mass: 4, com: [0, 0.05, 0], inertia: { ixx: 0.02, iyy: 0.03, izz: 0.02 } },
  { type: 'revolute', a: 0.4, b: 0, alpha: 0, mass: 3, com: [-0.2, 0, 0.01], inertia: { ixx: 0.01, iyy: 0.05, izz: 0.05 } },
  { type: 'revolute', a: 0.3, b: 0.05, alpha: 90 * deg, mass: 2, com: [-0.1, 0.02, 0], inertia: { ixx: 0.005, iyy: 0.02, izz: 0.02 } },
  {
    type: 'revolute',
    a: 0,
    b: 0.1,
    alpha: 0,
    mass: 0.8,
    com: [0.01, 0, 0.04],
    inertia: { ixx: 0.002, ixy: 0.0001, ixz: 0, iyy: 0.003, iyz: -0.0002, izz: 0.0015 },
  },
];

/**
 * CHAIN with TOOL merged into its last link by hand: the combined mass, mass centre and inertia about the
 * combined centre (parallel-axis theorem; both bodies in frame n+1, the tip frame).
 */
function withToolByHand(links: DHLink[]): DHLink[] {
  const last = links[links.length - 1]!;
  const i = last.inertia;
  const i1: M3 = [
    [i.ixx, i.ixy ?? 0, i.ixz ?? 0],
    [i.ixy ?? 0, i.iyy, i.iyz ?? 0],
    [i.ixz ?? 0, i.iyz ?? 0, i.izz],
  ];
  const c1 = last.com as number[];
  const m1 = last.mass;
  const m2 = TOOL.mass;
  const m = m1 + m2;
  const c = [0, 1, 2].map((k) => (m1 * c1[k]! + m2 * TOOL_COM[k]!) / m);
  const shift = (mass: number, d: number[], r: number, s: number): number =>
    mass * ((r === s ? d.reduce((t, x) => t + x * x, 0) : 0) - d[r]! * d[s]!);
  const d1 = [0, 1, 2].map((k) => c1[k]! - c[k]!);
  const d2 = [0, 1, 2].map((k) => TOOL_COM[k]! - c[k]!);
  const I = (r: number, s: number): number =>
    i1[r]![s]! + shift(m1, d1, r, s) + TOOL_INERTIA[r]![s]! + shift(m2, d2, r, s);
  return [
    ...links.slice(0, -1),
    { ...last, mass: m, com: c, inertia: { ixx: I(0, 0), ixy: I(0, 1), ixz: I(0, 2), iyy: I(1, 1), iyz: I(1, 2), izz: I(2, 2) } },
  ];
}

/** Somewhere more than 1e-6 relative apart: the payload changed the answer. */
function differs(a: ArrayLike<number>, b: ArrayLike<number>): boolean {
  for (let k = 0; k < b.length; k++) {
    if (Math.abs((a[k] as number) - (b[k] as number)) > 1e-6 * Math.max(1, Math.abs(b[k] as number))) return true;
  }
  return false;
}

describe('payloads on dynamics batches, split planning batches', { timeout: 180_000 }, () => {
  it('a payload on ID, FD and full factor batches equals the model with it merged by hand', async () => {
    const server = await startServer({ args: ['--max-states', '4'] }); // the payload travels with every part
    const client = new DenocClient(server.address);
    try {
      const plain = (await client.registerDH(CHAIN, { name: 'chain' })).modelId;
      const heavy = (await client.registerDH(withToolByHand(CHAIN), { name: 'chain with the tool' })).modelId;
      assert.notEqual(plain, heavy);
      const n = CHAIN.length;
      const count = 9;
      const random = rng(41);
      const q = randomBatch(random, count, n, -1.5, 1.5);
      const qd = randomBatch(random, count, n, -1, 1);
      const qdd = randomBatch(random, count, n, -3, 3);
      const tau = randomBatch(random, count, n, -10, 10);
      const wrench = randomBatch(random, count, 6, -2, 2);

      const id = await client.inverseDynamics(plain, { q, qd, qdd, payload: TOOL });
      expectClose(id.tau, (await client.inverseDynamics(heavy, { q, qd, qdd })).tau, 'inverse dynamics', 1e-9);
      assert.ok(differs(id.tau, (await client.inverseDynamics(plain, { q, qd, qdd })).tau));
      expectClose(
        (await client.inverseDynamics(plain, { q, qd, qdd, tipWrench: wrench, payload: TOOL })).tau,
        (await client.inverseDynamics(heavy, { q, qd, qdd, tipWrench: wrench })).tau,
        'inverse dynamics with wrenches',
        1e-9,
      );
      for (const route of ['saha', 'fixman', 'cholesky'] as const) {
        const fd = await client.forwardDynamics(plain, { q, qd, tau, route, payload: TOOL });
        expectClose(fd.qdd, (await client.forwardDynamics(heavy, { q, qd, tau, route })).qdd, `forward dynamics ${route}`, 1e-9);
        assert.ok(differs(fd.qdd, (await client.forwardDynamics(plain, { q, qd, tau, route })).qdd));
      }
      const flags = { convective: true, bias: true, gravityTorque: true, inverse: true };
      const f = await client.fullFactor(plain, { q, qd, ...flags, payload: TOOL });
      const want = await client.fullFactor(heavy, { q, qd, ...flags });
      const without = await client.fullFactor(plain, { q, qd, ...flags });
      for (const key of ['inertia', 'u', 'd', 'logDet', 'convective', 'bias', 'gravityTorque', 'inverse'] as const) {
        expectClose(f[key] ?? [], want[key] ?? [], `full factor ${key}`, 1e-9);
      }
      assert.ok(differs(f.inertia, without.inertia));
      assert.ok(differs(f.gravityTorque ?? [], without.gravityTorque ?? []));
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('splits Kinematics, Derivatives and Rollout above maxStates and joins the answers in order', async () => {
    const dir = tempDir('metrics');
    const portFile = path.join(dir, 'metrics.port');
    const limited = await startServer({
      args: ['--max-states', '10', '--metrics-listen', '127.0.0.1:0', '--metrics-port-file', portFile],
    });
    const whole = await startServer();
    const small = new DenocClient(limited.address);
    const big = new DenocClient(whole.address);
    try {
      const port = Number(fs.readFileSync(portFile, 'utf8').trim());
      assert.ok(port > 0);
      const urdf = fs.readFileSync(PANDA_HAND, 'utf8');
      const id = (await small.registerUrdf(urdf, { tipLink: PANDA_TIP })).modelId;
      assert.equal((await big.registerUrdf(urdf, { tipLink: PANDA_TIP })).modelId, id);
      assert.equal(await small.maxStates(), 10);
      assert.ok((await big.maxStates()) > 1000);
      const n = 7;
      const random = rng(42);

      let count = 37; // 10 + 10 + 10 + 7
      let q = randomBatch(random, count, n, -1.5, 1.5);
      let qd = randomBatch(random, count, n, -1, 1);
      const input = {
        link: 'panda_link7',
        point: [0.01, 0.02, 0.03],
        jacobian: true,
        jdotQd: true,
        lambda: true,
        allFrames: true,
        payload: TOOL,
      };
      const k = await small.kinematics(id, { q, qd, ...input });
      const kw = await big.kinematics(id, { q, qd, ...input });
      assert.equal(await calls(port, 'Kinematics'), 4);
      assert.equal(k.count, count);
      assert.equal(k.origin.length, count * 3);
      for (const key of ['rotation', 'origin', 'jacobian', 'jdotQd', 'lambda', 'frameRotations', 'frameOrigins'] as const) {
        assert.ok(k[key] !== undefined, key);
        expectClose(k[key] ?? [], kw[key] ?? [], `kinematics ${key}`);
      }
      await small.kinematics(id, { q: q.subarray(0, 10 * n), qd: qd.subarray(0, 10 * n), ...input }); // fits: one call
      assert.equal(await calls(port, 'Kinematics'), 5);

      count = 23; // 10 + 10 + 3
      q = randomBatch(random, count, n, -1.5, 1.5);
      qd = randomBatch(random, count, n, -1, 1);
      const x = randomBatch(random, count, n, -5, 5);
      const tipWrench = randomBatch(random, count, 6, -2, 2);
      const di = await small.inverseDynamicsDerivatives(id, { q, qd, qdd: x, tipWrench, payload: TOOL });
      const diw = await big.inverseDynamicsDerivatives(id, { q, qd, qdd: x, tipWrench, payload: TOOL });
      assert.equal(await calls(port, 'Derivatives'), 3);
      assert.equal(di.count, count);
      for (const key of ['dtauDq', 'dtauDqd', 'tau'] as const) expectClose(di[key], diw[key], `derivatives ${key}`);
      const df = await small.forwardDynamicsDerivatives(id, { q, qd, tau: x });
      const dfw = await big.forwardDynamicsDerivatives(id, { q, qd, tau: x });
      assert.equal(await calls(port, 'Derivatives'), 6);
      for (const key of ['dqddDq', 'dqddDqd', 'dqddDtau', 'qdd'] as const) expectClose(df[key], dfw[key], `derivatives ${key}`);

      const K = 8;
      const T = 3; // floor(10 / 3) = 3 rollouts per call: 3 + 3 + 2
      const x0 = randomBatch(random, K, 2 * n, -0.5, 0.5);
      const u = randomBatch(random, K * T, n, -5, 5);
      const ro = { count: K, steps: T, dt: 0.01, linearize: true, payload: TOOL };
      const r = await small.rollout(id, { x0, u, ...ro });
      const rw = await big.rollout(id, { x0, u, ...ro });
      assert.equal(await calls(port, 'Rollout'), 3);
      assert.equal(r.count, K);
      assert.equal(r.steps, T);
      assert.equal(r.states.length, K * (T + 1) * 2 * n);
      expectClose(r.states, rw.states, 'rollout states');
      expectClose(r.a ?? [], rw.a ?? [], 'rollout A');
      expectClose(r.b ?? [], rw.b ?? [], 'rollout B');
      assert.equal(r.a?.length, K * T * 4 * n * n);
      // a shared control sequence goes whole to every part
      const shared = { x0, u: u.subarray(0, T * n), count: K, steps: T, dt: 0.01, sharedControls: true };
      const rs = await small.rollout(id, shared);
      assert.equal(await calls(port, 'Rollout'), 6);
      expectClose(rs.states, (await big.rollout(id, shared)).states, 'rollout with shared controls');
      // one rollout of more than maxStates steps is sent as it is: the server refuses it with its message
      await assert.rejects(
        small.rollout(id, { x0: x0.subarray(0, 4 * n), u: randomBatch(random, 2 * 11, n, -1, 1), count: 2, steps: 11, dt: 0.01 }),
        (e: unknown) => e instanceof DenocError && e.code === Status.RESOURCE_EXHAUSTED && e.message.includes('max_states'),
      );
      assert.equal(await calls(port, 'Rollout', 'RESOURCE_EXHAUSTED'), 1);
      assert.equal(await calls(port, 'Rollout'), 6);
    } finally {
      small.close();
      big.close();
      await limited.stop();
      await whole.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
