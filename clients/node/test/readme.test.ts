// The README's example, run as written (a .mjs file in this package importing 'denoc'), and the example in
// examples/; their numbers are checked against the denoc command-line tool. Also: the proto the package
// loads is the repository's.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { PROTO_FILE } from '../src/index';
import { cliPath, PACKAGE_DIR, REPO_DIR, runCli, startServer, type Server } from './support';

function run(args: string[], env: Record<string, string>): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { cwd: PACKAGE_DIR, env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`node ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      });
  });
}

const STANFORD = path.join(REPO_DIR, 'examples', 'models', 'stanford_arm.json');
const fixed3 = (xs: number[]): string => xs.map((x) => x.toFixed(3)).join(' ');

describe('README and examples', { timeout: 120_000 }, () => {
  let server: Server;

  before(async () => {
    server = await startServer();
  });

  after(async () => {
    await server?.stop();
  });

  it('the README example runs as written and prints what the core computes', async () => {
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    const blocks = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.equal(blocks.length, 1, 'one js block in README.md');
    const code = blocks[0]!;
    assert.ok(code.trim().split('\n').length <= 10, 'ten lines at most');
    const file = path.join(PACKAGE_DIR, 'dist', 'readme-example.mjs'); // inside the package: 'denoc' resolves to it
    fs.writeFileSync(file, code);
    const out = await run([file], { DENOC_SERVER: server.address });
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, out);

    const q = [0.1, 0.7, 0.05, -0.4, 0.9, 0.2];
    const zero = [0, 0, 0, 0, 0, 0];
    const [id] = await runCli('id', STANFORD, [{ q, qd: zero, qdd: zero }]);
    const [fd] = await runCli('fd', STANFORD, [{ q, qd: zero, tau: zero }]);
    assert.equal(lines[0], `stanford_arm 6 joints; gravity torques ${fixed3(id!.tau!)}`);
    assert.equal(lines[1], `accelerations in free fall ${fixed3(fd!.qdd!)}`);
    // the output shown in the README is this output
    assert.ok(readme.includes(`\n${lines[0]}\n${lines[1]}\n`), `README shows:\n${out}`);
  });

  it('the top-level README shows this example', () => {
    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    const top = fs.readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
    const [code] = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
    assert.ok(top.includes('```js\n' + code + '```'), 'README.md must show the example of clients/node/README.md');
  });

  it("the top-level README's reflection example (buf curl, no stubs) runs as written", async () => {
    const top = fs.readFileSync(path.join(REPO_DIR, 'README.md'), 'utf8');
    const section = top.slice(top.indexOf('**Any gRPC client, through server reflection**'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    // run in this package, whose lock file pins @bufbuild/buf (npx finds it here), with the denoc tool on PATH
    const out = await new Promise<string>((resolve, reject) => {
      execFile('bash', ['-euo', 'pipefail', '-c', block], {
        cwd: PACKAGE_DIR,
        timeout: 120_000,
        env: { ...process.env, DENOC_SERVER: server.address, PATH: `${path.dirname(cliPath())}:${process.env.PATH}` },
      }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}\n${stderr}`)) : resolve(stdout)));
    });
    // two JSON documents: the ListModels and the InverseDynamics answers
    const docs: unknown[] = [];
    let depth = 0;
    let start = 0;
    for (let i = 0; i < out.length; ++i) {
      if (out[i] === '{' && depth++ === 0) start = i;
      else if (out[i] === '}' && --depth === 0) docs.push(JSON.parse(out.slice(start, i + 1)));
    }
    assert.equal(docs.length, 2, out);
    const models = (docs[0] as { models: { name: string }[] }).models.map((m) => m.name);
    assert.ok(models.includes('stanford_arm'), out);
    const { tau } = docs[1] as { tau: number[] };
    const q = [0.1, 0.7, 0.05, -0.4, 0.9, 0.2];
    const zero = [0, 0, 0, 0, 0, 0];
    const [want] = await runCli('id', STANFORD, [{ q, qd: zero, qdd: zero }]);
    assert.equal(tau.length, 6);
    tau.forEach((x, i) => assert.ok(Math.abs(x - want!.tau![i]!) <= 1e-12 * Math.max(1, Math.abs(want!.tau![i]!)), out));
  });

  it('examples/trajectory.ts runs against the server', async () => {
    const out = await run([path.join(PACKAGE_DIR, 'dist', 'examples', 'trajectory.js'), server.address], {});
    assert.match(out, /^model panda: 7 joints, id [0-9a-f]{12}\.\.\./);
    assert.match(out, /inverse dynamics of 201 states in one call/);
    assert.equal((out.match(/panda_joint\d: peak \|tau\|/g) ?? []).length, 7);
    const err = Number(/gives qdd back: max \|error\| (\S+) rad/.exec(out)![1]);
    assert.ok(err < 1e-9, out);
    assert.match(out, /free fall for 0\.5 s: 6 samples/);
  });

  it('the package loads the repository proto, copied unchanged', () => {
    assert.ok(PROTO_FILE.startsWith(path.join(PACKAGE_DIR, 'dist', 'proto')));
    assert.equal(
      fs.readFileSync(PROTO_FILE, 'utf8'),
      fs.readFileSync(path.join(REPO_DIR, 'proto', 'denoc', 'v1', 'dynamics.proto'), 'utf8'),
    );
  });

  it('CommonJS require and ESM import both expose the API', async () => {
    const script =
      "const c = require('denoc'); import('denoc').then((m) => { " +
      "const names = ['DenocClient', 'DenocError', 'UnauthenticatedError', 'PermissionDeniedError', " +
      "'StreamSession', 'Status', 'stateOf', 'PROTO_FILE'];" +
      "for (const n of names) { if (!c[n] || !m[n]) throw new Error('missing ' + n); }" +
      "console.log('ok'); });";
    const out = await run(['-e', script], {});
    assert.equal(out.trim(), 'ok');
  });
});
