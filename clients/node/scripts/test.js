#!/usr/bin/env node
// npm test: runs the compiled tests (dist/test/*.test.js) with Node's test runner. The tests start their own
// denocd servers: $DENOCD is the denocd binary and $DENOC_CLI the denoc command-line tool (the in-process
// oracle); both default to ../../build/release. Extra arguments go to `node --test` before the files.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const dir = path.resolve(__dirname, '..', 'dist', 'test');
if (!fs.existsSync(dir)) {
  console.error('test: dist/test is missing: run `npm run build` first');
  process.exit(2);
}
const files = fs.readdirSync(dir).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join(dir, f));
const r = spawnSync(process.execPath, ['--test', ...process.argv.slice(2), ...files], { stdio: 'inherit' });
process.exit(r.status === null ? 1 : r.status);
