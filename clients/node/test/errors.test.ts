// Error mapping: every failure is a DenocError with the gRPC status code and the server's own message.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { after, before, describe, it } from 'node:test';

import {
  AbortedError,
  CancelledError,
  DeadlineExceededError,
  DenocClient,
  DenocError,
  InvalidArgumentError,
  NotFoundError,
  Status,
  UnavailableError,
  type RegisteredModel,
} from '../src/index';
import { PANDA_HAND, PANDA_TIP, UNKNOWN_ID, startServer, type Server } from './support';

/** The class each status code seen here must come as. */
const TYPED = new Map<Status, typeof DenocError | (new (details: string) => DenocError)>([
  [Status.INVALID_ARGUMENT, InvalidArgumentError],
  [Status.NOT_FOUND, NotFoundError],
  [Status.ABORTED, AbortedError],
  [Status.UNAVAILABLE, UnavailableError],
  [Status.CANCELLED, CancelledError],
  [Status.DEADLINE_EXCEEDED, DeadlineExceededError],
]);

/** Asserts that `p` rejects with a DenocError of `code` (as its typed subclass) whose server message matches
 * `details`. */
async function rejectsWith(p: Promise<unknown>, code: Status, details: RegExp | string): Promise<DenocError> {
  let caught: unknown;
  try {
    await p;
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof DenocError, `expected a DenocError, got ${String(caught)}`);
  assert.ok(caught instanceof Error);
  const typed = TYPED.get(caught.code);
  assert.ok(typed !== undefined, `no typed class expected for ${caught.codeName}`);
  assert.ok(caught instanceof typed, `${caught.codeName} came as ${caught.name}`);
  assert.equal(caught.name, typed.name);
  assert.equal(caught.code, code, `code ${caught.codeName}: ${caught.details}`);
  assert.equal(caught.codeName, Status[code]);
  if (typeof details === 'string') assert.equal(caught.details, details);
  else assert.match(caught.details, details);
  assert.equal(caught.message, `${Status[code]}: ${caught.details}`);
  return caught;
}

describe('errors surface as DenocError with the server message', { timeout: 120_000 }, () => {
  let server: Server;
  let client: DenocClient;
  let model: RegisteredModel;
  const zeros = new Float64Array(7);

  before(async () => {
    server = await startServer();
    client = new DenocClient(server.address);
    model = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP });
  });

  after(async () => {
    client?.close();
    await server?.stop();
  });

  it('unknown model: NOT_FOUND naming the id, for every call', async () => {
    const msg = `model_id ${UNKNOWN_ID} is not registered`;
    await rejectsWith(client.getModel(UNKNOWN_ID), Status.NOT_FOUND, msg);
    await rejectsWith(client.inverseDynamics(UNKNOWN_ID, { q: zeros, qd: zeros, qdd: zeros, count: 1 }), Status.NOT_FOUND, msg);
    await rejectsWith(client.forwardDynamics(UNKNOWN_ID, { q: zeros, qd: zeros, tau: zeros, dof: 7 }), Status.NOT_FOUND, msg);
    await rejectsWith(client.fullFactor(UNKNOWN_ID, { q: zeros, dof: 7, count: 1 }), Status.NOT_FOUND, msg);
    await rejectsWith(client.deleteModel(UNKNOWN_ID), Status.NOT_FOUND, /is not registered/);
    const run = async (): Promise<void> => {
      for await (const _ of client.simulate(UNKNOWN_ID, { q0: zeros, qd0: zeros, tEnd: 0.1 })) assert.fail('no batch expected');
    };
    await rejectsWith(run(), Status.NOT_FOUND, msg);
    const session = client.openStream();
    await rejectsWith(session.inverseDynamics(UNKNOWN_ID, zeros, zeros, zeros), Status.NOT_FOUND, new RegExp(`model_id ${UNKNOWN_ID} is not registered$`));
    await session.close();
    assert.equal(client.reRegistrations, 0);
  });

  it('malformed model id: INVALID_ARGUMENT', async () => {
    await rejectsWith(client.getModel('not-an-id'), Status.INVALID_ARGUMENT,
      "model_id 'not-an-id' is not a model id, expected 64 lower-case hex digits");
  });

  it('bad shapes and values: INVALID_ARGUMENT naming the array', async () => {
    const q13 = new Float64Array(13);
    const q14 = new Float64Array(14);
    await rejectsWith(client.inverseDynamics(model.modelId, { q: q13, qd: q14, qdd: q14, count: 2 }),
      Status.INVALID_ARGUMENT, 'q has 13 values, expected count*dof = 14');
    await rejectsWith(client.forwardDynamics(model.modelId, { q: q14, qd: q14, tau: new Float64Array(7), count: 2 }),
      Status.INVALID_ARGUMENT, 'tau has 7 values, expected count*dof = 14');
    await rejectsWith(client.inverseDynamics(model.modelId, { q: zeros, qd: zeros, qdd: zeros, dof: 6, count: 1 }),
      Status.INVALID_ARGUMENT, /dof/);
    await rejectsWith(client.fullFactor(model.modelId, { q: zeros, count: 0 }), Status.INVALID_ARGUMENT, /count/);
    await rejectsWith(client.inverseDynamics(model.modelId, { q: zeros, qd: [0, 0, 0, 0, 0, NaN, 0], qdd: zeros }),
      Status.INVALID_ARGUMENT, 'qd[5] (state 0, column 5) is nan, expected a finite number');
    await rejectsWith(client.fullFactor(model.modelId, { q: zeros, bias: true }), Status.INVALID_ARGUMENT, /qd/);
    const session = client.openStream();
    await rejectsWith(session.inverseDynamics(model.modelId, new Float64Array(6), zeros, zeros),
      Status.INVALID_ARGUMENT, 'message 0: q has 6 values, expected dof = 7');
    // the session is over: later calls get the same error
    await rejectsWith(session.inverseDynamics(model.modelId, zeros, zeros, zeros), Status.INVALID_ARGUMENT, /message 0/);
    await session.close();
  });

  it('bad URDF: INVALID_ARGUMENT with the core\'s message', async () => {
    await rejectsWith(client.registerUrdf('<robot name="x"><link name="a"/>'), Status.INVALID_ARGUMENT,
      /^invalid model: URDF text is not well-formed XML \(no element found\) \(line 1\)/);
    // several leaf links without tipLink: the whole tree (the two fingers are its branches), not a refusal
    const tree = await client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'));
    assert.deepEqual([tree.root, tree.nu, tree.nq, tree.nv], ['fixed', 9, 9, 9]);
    assert.deepEqual(tree.joints.slice(7).map((j) => [j.name, j.type, j.parent]), [
      ['panda_finger_joint1', 'prismatic', 6],
      ['panda_finger_joint2', 'prismatic', 6],
    ]);
    await client.deleteModel(tree.modelId);
    await rejectsWith(client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: 'no_such_link' }),
      Status.INVALID_ARGUMENT, /no_such_link/);
    const negativeMass =
      '<robot name="x"><link name="a"/><link name="b"><inertial><mass value="-1"/>' +
      '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>' +
      '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>' +
      '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>';
    await rejectsWith(client.registerUrdf(negativeMass), Status.INVALID_ARGUMENT, "invalid model: URDF link 'b': mass is -1, negative");
    await rejectsWith(client.registerUrdf(fs.readFileSync(PANDA_HAND, 'utf8'), { tipLink: PANDA_TIP, armature: [1, 2] }),
      Status.INVALID_ARGUMENT, /armature/);
    // nothing was registered by the failures
    const ids = (await client.listModels()).filter((m) => !m.pinned).map((m) => m.modelId);
    assert.deepEqual(ids, [model.modelId]);
  });

  it('simulation stopped part way: ABORTED after the batches before it', async () => {
    const run = async (): Promise<number> => {
      let n = 0;
      for await (const b of client.simulate(model.modelId, { q0: zeros, qd0: zeros, tEnd: 1, maxSteps: 3, batchSize: 1 })) n += b.count;
      return n;
    };
    await rejectsWith(run(), Status.ABORTED, /max_steps \(3\) exceeded/);
  });

  it('checks done in the client: unknown route or integrator, bad gravity', async () => {
    await rejectsWith(client.forwardDynamics(model.modelId, { q: zeros, qd: zeros, tau: zeros, route: 'euler' as never }),
      Status.INVALID_ARGUMENT, "route 'euler' is not one of saha, fixman, cholesky");
    await rejectsWith(client.registerUrdf('<robot/>', { gravity: [0, 0] }), Status.INVALID_ARGUMENT, /gravity/);
    const run = async (): Promise<void> => {
      for await (const _ of client.simulate(model.modelId, { q0: zeros, qd0: zeros, tEnd: 1, integrator: 'euler' as never })) break;
    };
    await rejectsWith(run(), Status.INVALID_ARGUMENT, /integrator 'euler'/);
  });

  it('no server: UNAVAILABLE; a cancelled call: CANCELLED; a deadline: DEADLINE_EXCEEDED', async () => {
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const nobody = new DenocClient(`127.0.0.1:${port}`, { timeoutMs: 5000 });
    try {
      await rejectsWith(nobody.listModels(), Status.UNAVAILABLE, /.+/);
    } finally {
      nobody.close();
    }
    const controller = new AbortController();
    const p = client.listModels({ signal: controller.signal });
    controller.abort();
    await rejectsWith(p, Status.CANCELLED, /.+/);
    await rejectsWith(client.listModels({ timeoutMs: -1 }), Status.DEADLINE_EXCEEDED, /.+/);
  });
});
