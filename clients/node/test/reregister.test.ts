// Transparent re-registration: a model registered on one server, the client pointed at a second server
// whose store is empty; every call succeeds after the client registers the model there again.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { DenocClient, DenocError, Status, wasDeleted, type RegisteredModel } from '../src/index';
import { PANDA_HAND, PANDA_TIP, expectClose, randomBatch, rng, startServer, type Server } from './support';

describe('re-registration on a second server with an empty store', { timeout: 120_000 }, () => {
  let first: Server;
  let second: Server;
  let client: DenocClient;
  let admin: DenocClient; // another client of the second server, used to delete the model behind the client's back
  let model: RegisteredModel;
  const r = rng(5);
  const q = randomBatch(r, 10, 7, -1, 1);
  const qd = randomBatch(r, 10, 7, -1, 1);
  const qdd = randomBatch(r, 10, 7, -1, 1);
  let tauOnFirst: Float64Array;

  before(async () => {
    first = await startServer();
    second = await startServer();
    client = new DenocClient(first.address);
    admin = new DenocClient(second.address);
    model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
    tauOnFirst = (await client.inverseDynamics(model.modelId, { q, qd, qdd })).tau;
  });

  after(async () => {
    client?.close();
    admin?.close();
    await first?.stop();
    await second?.stop();
  });

  it('the second server does not know the model', async () => {
    assert.equal(fs.readdirSync(second.recordsDir).filter((f) => f.endsWith('.pb')).length, 0);
    await assert.rejects(admin.getModel(model.modelId), (e: unknown) => e instanceof DenocError && e.code === Status.NOT_FOUND);
  });

  it('inverseDynamics succeeds after one transparent re-registration, same id, same answer', async () => {
    client.reconnect(second.address);
    const res = await client.inverseDynamics(model.modelId, { q, qd, qdd });
    assert.equal(client.reRegistrations, 1);
    assert.equal(res.modelId, model.modelId);
    expectClose(res.tau, tauOnFirst, 'tau on the second server', 0);
    const info = await admin.getModel(model.modelId);
    assert.equal(info.dof, 7);
    assert.ok(fs.existsSync(path.join(second.recordsDir, `${model.modelId}.pb`)));
    // known now: no further registration
    await client.inverseDynamics(model.modelId, { q, qd, qdd });
    assert.equal(client.reRegistrations, 1);
  });

  it('getModel, forwardDynamics, fullFactor, simulate and a stream session each re-register once', async () => {
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['getModel', () => client.getModel(model.modelId)],
      ['forwardDynamics', () => client.forwardDynamics(model.modelId, { q, qd, tau: qdd })],
      ['fullFactor', () => client.fullFactor(model.modelId, { q })],
      ['simulate', () => client.simulateAll(model.modelId, { q0: q.subarray(0, 7), qd0: qd.subarray(0, 7), tEnd: 0.05 })],
      [
        'stream',
        async () => {
          const s = client.openStream();
          const a = await s.inverseDynamics(model.modelId, q.subarray(0, 7), qd.subarray(0, 7), qdd.subarray(0, 7));
          const b = await s.inverseDynamics(model.modelId, q.subarray(7, 14), qd.subarray(7, 14), qdd.subarray(7, 14));
          await s.close();
          expectClose(a.result, tauOnFirst.subarray(0, 7), 'stream tau 0', 0);
          expectClose(b.result, tauOnFirst.subarray(7, 14), 'stream tau 1', 0);
        },
      ],
    ];
    for (const [name, call] of calls) {
      // the second server loses it (its record removed by hand: not deleted, so no tombstone)
      fs.rmSync(path.join(second.recordsDir, `${model.modelId}.pb`), { force: true });
      const before = client.reRegistrations;
      await call();
      assert.equal(client.reRegistrations, before + 1, name);
    }
  });

  it('a model deleted by another client is not registered again', async () => {
    const holder = new DenocClient(second.address);
    try {
      const m = await holder.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
      await holder.inverseDynamics(m.modelId, { q, qd, qdd });
      await admin.deleteModel(m.modelId);
      const isDeleted = (e: unknown) => e instanceof DenocError && e.code === Status.NOT_FOUND && wasDeleted(e.details);
      await assert.rejects(holder.inverseDynamics(m.modelId, { q, qd, qdd }), isDeleted);
      const s = holder.openStream();
      await assert.rejects(s.inverseDynamics(m.modelId, q.subarray(0, 7), qd.subarray(0, 7), qdd.subarray(0, 7)), isDeleted);
      await s.close().catch(() => undefined);
      assert.equal(holder.reRegistrations, 0);
      assert.ok(!fs.existsSync(path.join(second.recordsDir, `${m.modelId}.pb`)), 'registered again');
    } finally {
      holder.close();
    }
  });

  it('with reRegister: false the NOT_FOUND surfaces', async () => {
    const strict = new DenocClient(first.address, { reRegister: false });
    try {
      const m = await strict.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
      strict.reconnect(second.address);
      fs.rmSync(path.join(second.recordsDir, `${m.modelId}.pb`), { force: true });
      await assert.rejects(strict.inverseDynamics(m.modelId, { q, qd, qdd }), (e: unknown) => e instanceof DenocError && e.code === Status.NOT_FOUND);
      assert.equal(strict.reRegistrations, 0);
    } finally {
      strict.close();
    }
  });
});
