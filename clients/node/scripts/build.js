#!/usr/bin/env node
// npm run build: copies the wire contract from the repository's proto/ into dist/proto (loaded at run time),
// generates the TypeScript message types from it into generated/ (proto-loader-gen-types), then runs tsc.
// The one source of truth is ../../proto/denoc/v1/*.proto (or $DENOC_PROTO_DIR); nothing here is edited by
// hand. Plain CommonJS, no dependencies beyond the package's own: runs on Node 18 and later.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const protoRoot = path.resolve(process.env.DENOC_PROTO_DIR || path.join(root, '..', '..', 'proto'));
const protoRel = path.join('denoc', 'v1');
const protoDir = path.join(protoRoot, protoRel);

if (!fs.existsSync(path.join(protoDir, 'dynamics.proto'))) {
  console.error(`build: ${path.join(protoDir, 'dynamics.proto')} not found (set DENOC_PROTO_DIR to the proto/ directory)`);
  process.exit(2);
}
const protos = fs.readdirSync(protoDir).filter((f) => f.endsWith('.proto')).sort();

// 1. dist/proto: a copy of the proto files, loaded by src/proto.ts at run time
const dist = path.join(root, 'dist');
fs.rmSync(path.join(dist, 'proto'), { recursive: true, force: true });
fs.mkdirSync(path.join(dist, 'proto', protoRel), { recursive: true });
for (const f of protos) fs.copyFileSync(path.join(protoDir, f), path.join(dist, 'proto', protoRel, f));

// 1b. dist/LICENSE and dist/NOTICE: the project's, shipped in the package
for (const f of ['LICENSE', 'NOTICE']) fs.copyFileSync(path.join(root, '..', '..', f), path.join(dist, f));

// 2. generated/: TypeScript types of the messages and the service, with the same options as the loader
function packageBin(pkg, rel) {
  // resolve through the package's main entry: some packages' "exports" hide package.json and bin files
  let dir = path.dirname(require.resolve(pkg));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return path.join(dir, rel);
}
const generated = path.join(root, 'generated');
fs.rmSync(generated, { recursive: true, force: true });
execFileSync(process.execPath, [
  packageBin('@grpc/proto-loader', 'build/bin/proto-loader-gen-types.js'),
  '--keepCase', '--longs=Number', '--enums=String', '--defaults', '--oneofs', '--includeComments',
  '--grpcLib=@grpc/grpc-js', '-I', protoRoot, '-O', generated,
  ...protos.map((f) => path.join(protoRel, f)),
], { cwd: root, stdio: 'inherit' });

// 3. tsc: src, generated, test and examples into dist/
execFileSync(process.execPath, [packageBin('typescript', 'bin/tsc'), '-p', path.join(root, 'tsconfig.json')], {
  cwd: root,
  stdio: 'inherit',
});
