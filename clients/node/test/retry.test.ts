// Retries on UNAVAILABLE, as the C++ and Python clients do: a call made while its server is down (killed with
// SIGKILL) succeeds once the server is back on its port, after retries reported to onRetry and counted in
// client.retries; deleteModel is not retried; maxAttempts 1 turns retries off; the defaults are the C++
// client's RetryPolicy.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { DEFAULT_RETRY, DenocClient, Status, UnavailableError, type RetryEvent } from '../src/index';
import { expectClose, startServer, type Server } from './support';

async function kill(s: Server): Promise<void> {
  const gone = new Promise((resolve) => s.process.once('exit', resolve));
  s.process.kill('SIGKILL');
  await gone;
}

describe('retries on UNAVAILABLE', () => {
  it('have the C++ client defaults', () => {
    assert.deepEqual({ ...DEFAULT_RETRY }, { maxAttempts: 5, initialBackoffMs: 50, multiplier: 2, maxBackoffMs: 2000, jitter: 0.2 });
  });

  it('carry a call over a server restart; deleteModel and maxAttempts 1 fail at once', async () => {
    const first = await startServer();
    const servers: Server[] = [first];
    const events: RetryEvent[] = [];
    // more attempts than the default, with short waits: the restart below takes a while on a loaded machine
    const client = new DenocClient(first.address, { retry: { maxAttempts: 40, maxBackoffMs: 200 }, onRetry: (e) => events.push(e) });
    const once = new DenocClient(first.address, { retry: { maxAttempts: 1 } });
    try {
      const arm = await client.findModel('planar_3r');
      const input = { q: [0.1, 0.2, 0.3], qd: [0.3, -0.2, 0.1], qdd: [1, 2, 3] };
      const before = await client.inverseDynamics(arm.modelId, input);
      await once.inverseDynamics(arm.modelId, input);
      assert.equal(client.retries, 0);

      await kill(first);
      const during = client.inverseDynamics(arm.modelId, input);
      await new Promise((resolve) => setTimeout(resolve, 300));
      servers.push(await startServer({ port: first.port }));
      const after = await during;
      expectClose(after.tau, before.tau, 'tau after the restart');
      assert.ok(client.retries > 0, 'the call succeeded without a retry: the server was not down');
      assert.equal(events.length, client.retries);
      events.forEach((e, k) => {
        assert.equal(e.call, 'InverseDynamics');
        assert.equal(e.code, Status.UNAVAILABLE);
        assert.equal(e.attempt, k + 1);
        assert.ok(e.backoffMs >= 40 && e.backoffMs <= 240, `backoff ${e.backoffMs} ms`);
      });

      // not retried: a deletion, and any call of a client with maxAttempts 1
      await kill(servers[1]!);
      const retries = client.retries;
      await assert.rejects(client.deleteModel(arm.modelId), UnavailableError);
      assert.equal(client.retries, retries);
      await assert.rejects(once.inverseDynamics(arm.modelId, input), UnavailableError);
      assert.equal(once.retries, 0);
    } finally {
      client.close();
      once.close();
      for (const s of servers) await s.stop();
    }
  });
});
