// Checks Kubernetes manifests offline (no cluster) against the API's types from kubernetes-models:
//  1. every document has a known apiVersion and kind and passes the OpenAPI schema validation (types,
//     required fields, enums, formats);
//  2. no unknown field anywhere: each document is type-checked by the TypeScript compiler as an object
//     literal of its kind's interface, whose excess-property check rejects misspelt or misplaced fields
//     (the schemas of step 1 allow additional properties).
// Usage: node validate-k8s.mjs FILE.yaml...   Exit 0 only when every document passes both steps.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const ts = require("typescript");

let failed = 0;
const checked = [];  // { name, apiVersion, kind, obj }
for (const file of process.argv.slice(2)) {
  for (const doc of parseAllDocuments(readFileSync(file, "utf8"))) {
    if (doc.errors.length > 0) {
      console.error(`FAIL ${file}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
      failed++;
      continue;
    }
    const obj = doc.toJS();
    if (obj === null || obj === undefined) continue;
    const { apiVersion, kind } = obj;
    const name = `${file}: ${kind ?? "?"} ${obj.metadata?.name ?? "?"}`;
    if (typeof apiVersion !== "string" || typeof kind !== "string") {
      console.error(`FAIL ${name}: no apiVersion or kind`);
      failed++;
      continue;
    }
    // core group: kubernetes-models/v1/Kind; the others: kubernetes-models/GROUP/VERSION/Kind
    let model;
    try {
      model = (await import(`kubernetes-models/${apiVersion}/${kind}`))[kind];
    } catch {
      console.error(`FAIL ${name}: unknown apiVersion/kind ${apiVersion} ${kind}`);
      failed++;
      continue;
    }
    try {
      new model(obj).validate();
      checked.push({ name, apiVersion, kind, obj });
    } catch (e) {
      console.error(`FAIL ${name} (${apiVersion}): ${e.message}`);
      failed++;
    }
  }
}

// step 2: one TypeScript file per document, compiled together
const dir = mkdtempSync(join(tmpdir(), "denoc-k8s-"));
let valid = 0;
try {
  const files = checked.map((c, i) => {
    const path = join(dir, `doc${i}.ts`);
    const module = `kubernetes-models/${c.apiVersion}/${c.kind}`;
    writeFileSync(path, `import type { I${c.kind} } from "${module}";\n` +
                            `export const doc: I${c.kind} = ${JSON.stringify(c.obj, null, 2)};\n`);
    return path;
  });
  const program = ts.createProgram(files, {
    noEmit: true,
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    typeRoots: [],
    types: [],
    baseUrl: here,
    paths: { "*": [join(here, "node_modules", "*")] },
  });
  const bad = new Set();
  for (const d of ts.getPreEmitDiagnostics(program)) {
    const i = d.file ? files.indexOf(d.file.fileName) : -1;
    const message = ts.flattenDiagnosticMessageText(d.messageText, "\n     ");
    if (i < 0) {
      console.error(`FAIL type check: ${message}`);
      failed++;
      continue;
    }
    const { line } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
    const text = d.file.text.split("\n")[line].trim();
    console.error(`FAIL ${checked[i].name}: ${message}\n     at ${text}`);
    bad.add(i);
  }
  failed += bad.size;
  checked.forEach((c, i) => {
    if (!bad.has(i)) console.log(`ok   ${c.name} (${c.apiVersion})`);
  });
  valid = checked.length - bad.size;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
console.log(`${valid} manifests valid, ${failed} invalid`);
process.exit(failed > 0 || valid === 0 ? 1 : 0);
