// The package as another project gets it: `npm pack` gives a tarball with the compiled JavaScript, the type
// declarations, the proto and the licence (and no sources or tests); a new project outside the repository
// installs the tarball with npm, runs the README example as written against a real denocd (its output is the
// README's, which readme.test checks against the denoc tool), and compiles TypeScript against the
// package's declarations with tsc --strict.
import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';

import { PACKAGE_DIR, REPO_DIR, startServer, type Server } from './support';

function run(file: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { cwd, env: { ...process.env, ...env }, timeout: 300_000, maxBuffer: 1 << 24 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`${file} ${args.join(' ')} failed: ${err.message}\n${stdout}\n${stderr}`));
        else resolve(stdout);
      });
  });
}

const npm = (args: string[], cwd: string): Promise<string> =>
  run(process.platform === 'win32' ? 'npm.cmd' : 'npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], cwd);

describe('the npm package', { timeout: 600_000 }, () => {
  let server: Server;
  let work: string;
  let tarball: string;

  before(async () => {
    server = await startServer();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'denoc-node-package-'));
    // dist/ is built (npm run build, as ctest.sh does): pack it without building again
    const out = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], PACKAGE_DIR);
    tarball = path.join(work, (JSON.parse(out) as { filename: string }[])[0]!.filename);
  });

  after(async () => {
    await server?.stop();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  it('npm pack: compiled JavaScript, declarations, proto and licence; no sources or tests', async () => {
    const files = (await run('tar', ['-tzf', tarball], work)).trim().split('\n');
    for (const f of [
      'package/package.json',
      'package/README.md',
      'package/dist/LICENSE',
      'package/dist/src/index.js',
      'package/dist/src/index.d.ts',
      'package/dist/src/client.d.ts',
      'package/dist/generated/denoc/v1/Dynamics.d.ts',
      'package/dist/proto/denoc/v1/dynamics.proto',
    ]) {
      assert.ok(files.includes(f), `${f} is not in the tarball`);
    }
    for (const f of files) {
      assert.ok(!/\.ts$/.test(f) || f.endsWith('.d.ts'), `a TypeScript source in the tarball: ${f}`);
      assert.ok(!f.includes('/test/') && !f.includes('/examples/') && !f.endsWith('.map'), `not for users: ${f}`);
    }
    const meta = JSON.parse(await run('tar', ['-xzOf', tarball, 'package/package.json'], work)) as Record<string, unknown>;
    assert.equal(meta.license, 'Apache-2.0');
    assert.equal(meta.private, undefined);
    const cmake = fs.readFileSync(path.join(REPO_DIR, 'CMakeLists.txt'), 'utf8');
    assert.equal(meta.version, /project\(denoc VERSION ([0-9.]+)/.exec(cmake)![1]);
    assert.equal(
      await run('tar', ['-xzOf', tarball, 'package/dist/LICENSE'], work),
      fs.readFileSync(path.join(REPO_DIR, 'LICENSE'), 'utf8'),
    );
  });

  it('a new project outside the repository installs the tarball and runs the README example', async () => {
    const app = path.join(work, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'robot-app', private: true }));
    await npm(['install', '--prefer-offline', tarball], app);
    assert.ok(!fs.realpathSync(path.join(app, 'node_modules', 'denoc')).startsWith(REPO_DIR), 'a copy, not a link');

    const readme = fs.readFileSync(path.join(PACKAGE_DIR, 'README.md'), 'utf8');
    const [code] = [...readme.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
    fs.writeFileSync(path.join(app, 'example.mjs'), code!);
    const out = await run(process.execPath, ['example.mjs'], app, { DENOC_SERVER: server.address });
    const lines = out.trim().split('\n');
    assert.equal(lines.length, 2, out);
    assert.ok(readme.includes(`\n${lines[0]}\n${lines[1]}\n`), `the README shows other numbers than:\n${out}`);

    // TypeScript against the installed declarations (the generated message types included)
    fs.writeFileSync(
      path.join(app, 'typed.ts'),
      [
        "import { DenocClient, DenocError, Status, type ModelInfo } from 'denoc';",
        'export async function dofs(address: string): Promise<number[]> {',
        '  const client = new DenocClient(address);',
        '  try {',
        '    const models: ModelInfo[] = await client.listModels();',
        '    return models.map((m) => m.dof);',
        '  } catch (e) {',
        '    if (e instanceof DenocError && e.code === Status.UNAVAILABLE) return [];',
        '    throw e;',
        '  } finally {',
        '    client.close();',
        '  }',
        '}',
      ].join('\n'),
    );
    const tsc = path.join(PACKAGE_DIR, 'node_modules', 'typescript', 'bin', 'tsc');
    // no skipLibCheck: every declaration the package's own refer to must resolve (Node's types from this package)
    await run(process.execPath, [tsc, '--strict', '--noEmit', '--typeRoots', path.join(PACKAGE_DIR, 'node_modules', '@types'),
      '--types', 'node', '--module', 'commonjs', '--target', 'es2022', '--moduleResolution', 'node10', 'typed.ts'], app);
  });
});
