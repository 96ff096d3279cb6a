// GetServerInfo against a denocd started with chosen limits (the answer must be the flags), the default
// deadline, batches above the server's --max-states split by the client and joined in order (equal to the
// in-process core through the denoc tool, and to one-state calls), and lookup by name that refuses ambiguity.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

import { DEFAULT_TIMEOUT_MS, DenocClient, DenocError, Status, type DHLink } from '../src/index';
import {
  PACKAGE_DIR,
  PANDA_HAND,
  PANDA_TIP,
  expectClose,
  randomBatch,
  rng,
  rows,
  runCli,
  startServer,
  tempDir,
} from './support';

describe('GetServerInfo, split batches, names', { timeout: 180_000 }, () => {
  it('answers the flags the server was started with', async () => {
    const server = await startServer({
      args: ['--max-dof', '12', '--max-states', '7', '--max-message-bytes', '3000000', '--max-streams', '5'],
    });
    const client = new DenocClient(server.address);
    try {
      assert.equal(DEFAULT_TIMEOUT_MS, 30_000);
      const info = await client.getServerInfo();
      const pkg = JSON.parse(fs.readFileSync(path.join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string };
      assert.equal(info.version, pkg.version);
      assert.equal(info.protoPackage, 'denoc.v1');
      assert.equal(info.maxDof, 12);
      assert.equal(info.maxStates, 7);
      assert.equal(info.maxReceiveMessageBytes, 3_000_000);
      assert.equal(info.maxSendMessageBytes, 3_000_000);
      assert.equal(info.maxStreams, 5);
      assert.equal(info.tokensRequired, false);
      assert.equal(await client.maxStates(), 7);
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('needs a token when tokens are on', async () => {
    const dir = tempDir('tokens');
    const tokens = path.join(dir, 'tokens');
    fs.writeFileSync(tokens, 'alice token-of-alice\n');
    const server = await startServer({ args: ['--token-file', tokens] });
    const anonymous = new DenocClient(server.address);
    const alice = new DenocClient(server.address, { token: 'token-of-alice' });
    try {
      await assert.rejects(anonymous.getServerInfo(), (e: unknown) => e instanceof DenocError && e.code === Status.UNAUTHENTICATED);
      assert.equal((await alice.getServerInfo()).tokensRequired, true);
    } finally {
      anonymous.close();
      alice.close();
      await server.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('splits batches above maxStates and joins the answers in order', async () => {
    const server = await startServer({ args: ['--max-states', '4'] });
    const client = new DenocClient(server.address);
    try {
      const model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
      const n = model.dof;
      const count = 11; // 4 + 4 + 3
      const random = rng(7);
      const q = randomBatch(random, count, n, -1.5, 1.5);
      const qd = randomBatch(random, count, n, -2, 2);
      const qdd = randomBatch(random, count, n, -5, 5);
      const tau = randomBatch(random, count, n, -20, 20);
      const wrench = randomBatch(random, count, 6, -3, 3);

      const id = await client.inverseDynamics(model.modelId, { q, qd, qdd });
      assert.equal(id.count, count);
      const states = rows(q, count, n).map((row, k) => ({ q: row, qd: rows(qd, count, n)[k], qdd: rows(qdd, count, n)[k] }));
      const core = await runCli('id', PANDA_HAND, states, ['--tip-link', PANDA_TIP]);
      expectClose(id.tau, core.flatMap((s) => s.tau ?? []), 'split inverse dynamics vs the core');

      const withWrench = await client.inverseDynamics(model.modelId, { q, qd, qdd, tipWrench: wrench });
      for (let k = 0; k < count; k++) {
        const one = await client.inverseDynamics(model.modelId, {
          q: q.subarray(k * n, (k + 1) * n),
          qd: qd.subarray(k * n, (k + 1) * n),
          qdd: qdd.subarray(k * n, (k + 1) * n),
          tipWrench: wrench.subarray(6 * k, 6 * k + 6),
        });
        expectClose(withWrench.tau.subarray(k * n, (k + 1) * n), one.tau, `wrench state ${k}`);
      }

      const fd = await client.forwardDynamics(model.modelId, { q, qd, tau, route: 'fixman' });
      assert.equal(fd.route, 'fixman');
      // forward dynamics inverts inverse dynamics: ID(q, qd, FD(q, qd, tau)) = tau
      const back = await client.inverseDynamics(model.modelId, { q, qd, qdd: fd.qdd });
      expectClose(back.tau, tau, 'ID(FD(tau)) vs tau', 1e-9);

      const f = await client.fullFactor(model.modelId, { q, qd, convective: true, bias: true, gravityTorque: true, inverse: true });
      assert.equal(f.inertia.length, count * n * n);
      assert.equal(f.logDet.length, count);
      for (let k = 0; k < count; k++) {
        const one = await client.fullFactor(model.modelId, {
          q: q.subarray(k * n, (k + 1) * n),
          qd: qd.subarray(k * n, (k + 1) * n),
          convective: true,
          bias: true,
          gravityTorque: true,
          inverse: true,
        });
        const mat = (a: Float64Array | undefined): Float64Array => (a ?? new Float64Array(0)).subarray(k * n * n, (k + 1) * n * n);
        const vec = (a: Float64Array | undefined): Float64Array => (a ?? new Float64Array(0)).subarray(k * n, (k + 1) * n);
        expectClose(mat(f.inertia), one.inertia, `inertia ${k}`);
        expectClose(mat(f.inverse), one.inverse ?? [], `inverse ${k}`);
        expectClose(mat(f.convective), one.convective ?? [], `convective ${k}`);
        expectClose(vec(f.bias), one.bias ?? [], `bias ${k}`);
        expectClose(vec(f.gravityTorque), one.gravityTorque ?? [], `gravity torque ${k}`);
        expectClose(f.logDet.subarray(k, k + 1), one.logDet, `log det ${k}`);
      }
    } finally {
      client.close();
      await server.stop();
    }
  });

  it('refuses an ambiguous name', async () => {
    const server = await startServer({ args: ['--examples=false'] });
    const client = new DenocClient(server.address);
    try {
      const link: DHLink = {
        type: 'revolute',
        a: 0.5,
        mass: 1,
        com: { x: -0.25, y: 0, z: 0 },
        inertia: { ixx: 0.001, iyy: 0.02, izz: 0.02 },
      };
      const a = await client.registerDH([link], { name: 'twin', gravity: [0, 0, -9.81] });
      const b = await client.registerDH([link], { name: 'twin', gravity: [0, -9.81, 0] });
      assert.notEqual(a.modelId, b.modelId);
      await assert.rejects(
        client.findModel('twin'),
        (e: unknown) =>
          e instanceof DenocError &&
          e.code === Status.FAILED_PRECONDITION &&
          e.message.includes(a.modelId) &&
          e.message.includes(b.modelId),
      );
      await assert.rejects(client.findModel('nobody'), (e: unknown) => e instanceof DenocError && e.code === Status.NOT_FOUND);
      await client.deleteModel(b.modelId);
      assert.equal((await client.findModel('twin')).modelId, a.modelId);
    } finally {
      client.close();
      await server.stop();
    }
  });
});
