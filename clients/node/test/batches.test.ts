// What a planner needs from the client against real denocd processes: a payload on the inverse-dynamics,
// forward-dynamics and full-factor batches (equal to the calls without it on a second model whose last link
// carries the payload, merged by hand with the parallel-axis theorem), and Kinematics, Derivatives and
// Rollout split above the server's --max-states (equal to the same batches against a server without the
// limit; the number of calls read from the limited server's metrics), and a client that kept a larger maxStates
// than the server now serving its address (a rolling upgrade): the batch refused with RESOURCE_EXHAUSTED naming
// max_states is split anew after one GetServerInfo, read from that server's metrics.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { DenocClient, DenocError, Status, namesCachedLimit, type DHLink, type Payload } from '../src/index';
import { PANDA_HAND, PANDA_TIP, calls, expectClose, randomBatch, rng, startServer, tempDir, type Server } from './support';

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

/**
 * One address served by one denocd after another (the same port and store), the client kept across them, as
 * during a rolling upgrade: `keepLargeLimitThenServeSeven` gives a client that kept maxStates = 100000 from a
 * batched call (after a reconnect, which forgets a limit kept before) facing a denocd with --max-states 7, and
 * the metrics port of that server. `stop` ends the server serving and removes the directory.
 */
async function upgrade(): Promise<{
  client: DenocClient;
  id: string;
  keepLargeLimitThenServeSeven: () => Promise<number>;
  stop: () => Promise<void>;
}> {
  const dir = tempDir('upgrade');
  const storeDir = path.join(dir, 'store');
  let serving: Server | undefined;
  let starts = 0;
  const serve = async (maxStates: string, port?: number): Promise<[Server, number]> => {
    await serving?.stop();
    const portFile = path.join(dir, `metrics-${++starts}.port`);
    const args = ['--max-states', maxStates, '--metrics-listen', '127.0.0.1:0', '--metrics-port-file', portFile];
    serving = await startServer(port === undefined ? { storeDir, args } : { storeDir, args, port });
    const metrics = Number(fs.readFileSync(portFile, 'utf8').trim());
    assert.ok(metrics > 0);
    return [serving, metrics];
  };
  const [first] = await serve('100000');
  const address = first.address;
  const client = new DenocClient(address);
  const id = (await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP })).modelId;
  return {
    client,
    id,
    keepLargeLimitThenServeSeven: async () => {
      const [large] = await serve('100000', first.port);
      client.reconnect(address);
      const zero = new Float64Array(2 * 7);
      await client.inverseDynamics(id, { q: zero, qd: zero, qdd: zero });
      assert.equal(await client.maxStates(), 100000);
      const [, metrics] = await serve('7', large.port);
      await client.waitForReady();
      return metrics;
    },
    stop: async () => {
      client.close();
      await serving?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('a replica with a smaller max_states', { timeout: 180_000 }, () => {
  it('a dynamics batch refused for max_states is split by the limit read again once', async () => {
    const { client, id, keepLargeLimitThenServeSeven, stop } = await upgrade();
    try {
      const port = await keepLargeLimitThenServeSeven();
      const n = 7;
      const count = 50;
      const random = rng(51);
      const q = randomBatch(random, count, n, -1.5, 1.5);
      const qd = randomBatch(random, count, n, -1, 1);
      const qdd = randomBatch(random, count, n, -3, 3);
      const tau = (await client.inverseDynamics(id, { q, qd, qdd })).tau;
      // 50 states sent whole (refused), one GetServerInfo, then 8 calls of 7, 7, ..., 7, 1 states
      assert.equal(await calls(port, 'InverseDynamics', 'RESOURCE_EXHAUSTED'), 1);
      assert.equal(await calls(port, 'GetServerInfo'), 1);
      assert.equal(await calls(port, 'InverseDynamics'), 8);
      assert.equal(await client.maxStates(), 7);
      assert.equal(tau.length, count * n);
      for (let k = 0; k < count; k++) {
        const one = (s: Float64Array) => s.subarray(k * n, (k + 1) * n);
        const want = (await client.inverseDynamics(id, { q: one(q), qd: one(qd), qdd: one(qdd) })).tau;
        expectClose(tau.subarray(k * n, (k + 1) * n), want, `tau of state ${k}`);
      }

      // RESOURCE_EXHAUSTED naming a limit the client does not keep (65 wrenches, max_wrenches): thrown as it is
      // from the first part, the limits not read again
      const wrenches = Array.from({ length: 65 }, () => ({ link: 'panda_link7', wrench: [0, 0, 0, 0, 0, 0] }));
      await assert.rejects(
        client.inverseDynamics(id, { q, qd, qdd, wrenches }),
        (e: unknown) =>
          e instanceof DenocError &&
          e.code === Status.RESOURCE_EXHAUSTED &&
          e.details.includes('max_wrenches') &&
          !namesCachedLimit(e),
      );
      assert.equal(await calls(port, 'InverseDynamics', 'RESOURCE_EXHAUSTED'), 2);
      assert.equal(await calls(port, 'GetServerInfo'), 1);
    } finally {
      await stop();
    }
  });

  it('derivatives and rollouts are split anew; a rollout above the limit fails after one re-read', async () => {
    const { client, id, keepLargeLimitThenServeSeven, stop } = await upgrade();
    try {
      const n = 7;
      const random = rng(52);
      let port = await keepLargeLimitThenServeSeven();
      const count = 50;
      const q = randomBatch(random, count, n, -1.5, 1.5);
      const qd = randomBatch(random, count, n, -1, 1);
      const qdd = randomBatch(random, count, n, -3, 3);
      const d = await client.inverseDynamicsDerivatives(id, { q, qd, qdd });
      assert.equal(await calls(port, 'Derivatives', 'RESOURCE_EXHAUSTED'), 1);
      assert.equal(await calls(port, 'GetServerInfo'), 1);
      assert.equal(await calls(port, 'Derivatives'), 8);
      assert.equal(d.count, count);
      for (let k = 0; k < count; k++) {
        const one = (s: Float64Array) => s.subarray(k * n, (k + 1) * n);
        const want = await client.inverseDynamicsDerivatives(id, { q: one(q), qd: one(qd), qdd: one(qdd) });
        expectClose(d.dtauDq.subarray(k * n * n, (k + 1) * n * n), want.dtauDq, `dtau/dq of state ${k}`);
        expectClose(d.dtauDqd.subarray(k * n * n, (k + 1) * n * n), want.dtauDqd, `dtau/dqd of state ${k}`);
        expectClose(d.tau.subarray(k * n, (k + 1) * n), want.tau, `tau of state ${k}`);
      }

      port = await keepLargeLimitThenServeSeven();
      const K = 20;
      const T = 3; // 60 states; floor(7 / 3) = 2 rollouts per call: 10 calls
      const x0 = randomBatch(random, K, 2 * n, -0.5, 0.5);
      const u = randomBatch(random, K * T, n, -5, 5);
      const r = await client.rollout(id, { x0, u, count: K, steps: T, dt: 0.01, linearize: true });
      assert.equal(await calls(port, 'Rollout', 'RESOURCE_EXHAUSTED'), 1);
      assert.equal(await calls(port, 'GetServerInfo'), 1);
      assert.equal(await calls(port, 'Rollout'), 10);
      assert.equal(r.count, K);
      const x = 2 * n;
      for (let k = 0; k < K; k++) {
        const one = await client.rollout(id, {
          x0: x0.subarray(k * x, (k + 1) * x),
          u: u.subarray(k * T * n, (k + 1) * T * n),
          count: 1,
          steps: T,
          dt: 0.01,
          linearize: true,
        });
        const per = (a: Float64Array | undefined, size: number) => (a ?? new Float64Array()).subarray(k * size, (k + 1) * size);
        expectClose(per(r.states, (T + 1) * x), one.states, `states of rollout ${k}`);
        expectClose(per(r.a, T * x * x), one.a ?? [], `A of rollout ${k}`);
        expectClose(per(r.b, T * x * n), one.b ?? [], `B of rollout ${k}`);
      }

      // two rollouts of 11 steps: no split fits 7 states. Kept 100000: sent whole, refused, one re-read, sent
      // again (split by 7: still whole), refused, thrown
      port = await keepLargeLimitThenServeSeven();
      const tooLong = { x0: x0.subarray(0, 2 * x), u: randomBatch(random, 2 * 11, n, -1, 1), count: 2, steps: 11, dt: 0.01 };
      const refused = (e: unknown) => namesCachedLimit(e) && e instanceof DenocError && e.details.includes('max_states = 7');
      await assert.rejects(client.rollout(id, tooLong), refused);
      assert.equal(await calls(port, 'Rollout', 'RESOURCE_EXHAUSTED'), 2);
      assert.equal(await calls(port, 'GetServerInfo'), 1);
      // kept 7: refused, one re-read (7 again), thrown without sending again
      await assert.rejects(client.rollout(id, tooLong), refused);
      assert.equal(await calls(port, 'Rollout', 'RESOURCE_EXHAUSTED'), 3);
      assert.equal(await calls(port, 'GetServerInfo'), 2);
      assert.equal(await calls(port, 'Rollout'), 0);
    } finally {
      await stop();
    }
  });
});
