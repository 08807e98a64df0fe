#!/usr/bin/env node
// The gateway's layering, checked on every lint (docs/architecture.md, "Layers and packages"):
// serve/ and runtime/ meet only through ports/, upstream/ sits beside runtime/ without reaching
// into it or up into serve/, and no module imports itself back through a cycle. Tests are left
// out: they may wire layers together. No dependencies: a regex over import/export specifiers.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'packages', 'gateway', 'src');

/** folder → folders it must never import (relative to src/). */
const FORBIDDEN = {
  serve: ['runtime', 'upstream', 'images', 'registration', 'sandbox'],
  runtime: ['serve', 'upstream', 'registration', 'sandbox'],
  upstream: ['serve', 'runtime', 'registration'],
  ports: ['serve', 'runtime', 'upstream', 'registration', 'pins', 'schema', 'images', 'sandbox'],
  // ringfence's own tools: built on runtime/, reached by serve/ only through the upstream port.
  sandbox: ['serve', 'upstream', 'registration'],
  'policy-view': ['serve', 'runtime', 'upstream'],
  config: ['serve', 'runtime', 'upstream', 'registration', 'pins'],
  audit: ['serve', 'runtime', 'upstream', 'registration', 'audit-export'],
  // Reads the audit log's file and ships it; knows nothing of how calls are served.
  'audit-export': ['serve', 'runtime', 'upstream', 'registration', 'sandbox'],
  schema: ['serve', 'runtime', 'upstream', 'registration'],
  pins: ['serve', 'runtime', 'upstream', 'registration'],
  // The task registry and wire forms: used by serve/ and upstream/, knowing neither.
  tasks: ['serve', 'runtime', 'upstream', 'registration', 'images'],
  'local-http': ['serve', 'runtime', 'upstream', 'registration', 'console'],
  // Metrics: told through ports/observer.ts, never reaching into what they count.
  metrics: ['serve', 'runtime', 'upstream', 'registration', 'sandbox', 'audit', 'schema'],
  // The console only reads a home's files: it never starts, serves or registers anything.
  console: ['serve', 'runtime', 'upstream', 'registration', 'images', 'schema', 'doctor'],
};

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return d.name === '__fixtures__' ? [] : sourceFiles(path);
    return /\.ts$/.test(d.name) && !/\.test\.ts$/.test(d.name) ? [path] : [];
  });
}

const SPECIFIER =
  /(?:^|\n)\s*(?:import|export)\b[^'";]*?from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = new Set();
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? m[2];
    found.add(resolve(dirname(file), spec.replace(/\.js$/, '.ts')));
  }
  return [...found];
}

const files = sourceFiles(root);
const graph = new Map(files.map((f) => [f, importsOf(f)]));
const folderOf = (file) => relative(root, file).split('/')[0];
const problems = [];

for (const [file, deps] of graph) {
  const from = folderOf(file);
  for (const dep of deps) {
    if (!graph.has(dep)) {
      problems.push(`${relative(root, file)} imports ${relative(root, dep)}, which is not a source file`);
      continue;
    }
    if ((FORBIDDEN[from] ?? []).includes(folderOf(dep))) {
      problems.push(
        `${relative(root, file)} imports ${relative(root, dep)}: ${from}/ may not import ${folderOf(dep)}/`,
      );
    }
  }
}

// Cycles: depth-first search with an explicit path; each cycle reported once, from its smallest file.
const state = new Map();
const reported = new Set();
function visit(file, path) {
  state.set(file, 'open');
  path.push(file);
  for (const dep of graph.get(file) ?? []) {
    if (!graph.has(dep)) continue;
    if (state.get(dep) === 'open') {
      const cycle = path.slice(path.indexOf(dep)).map((f) => relative(root, f));
      const key = [...cycle].sort().join(' ');
      if (!reported.has(key)) {
        reported.add(key);
        problems.push(`import cycle: ${[...cycle, cycle[0]].join(' → ')}`);
      }
    } else if (!state.has(dep)) {
      visit(dep, path);
    }
  }
  path.pop();
  state.set(file, 'done');
}
for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file, []);

// One coded error base (docs/architecture.md, "Errors"): shipped code throws a `RingfenceError`
// subclass with a code, or the one wire error (`WireError`, a JSON-RPC error with its number);
// never a plain `Error`, whose message reaches a person with no code and, from the CLI, as a bug.
const PLAIN_ERROR = /\bnew Error\(/;
const ERROR_CLASS = /\bclass\s+(\w+)\s+extends\s+Error\b/;
for (const file of files) {
  const name = relative(root, file);
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(\/\/|\*)/.test(line)) return;
      if (PLAIN_ERROR.test(line))
        problems.push(
          `${name}:${i + 1} makes a plain Error: throw a coded one (GatewayError, or the module's own RingfenceError)`,
        );
      const found = ERROR_CLASS.exec(line);
      if (found && !(name === 'errors.ts' && found[1] === 'WireError'))
        problems.push(
          `${name}:${i + 1} class ${found[1]} extends Error: extend RingfenceError (a local error) or WireError (a JSON-RPC one)`,
        );
    });
}

// The edge's shape (docs/architecture.md, "The edge: codecs, dispatcher, registry"): within serve/,
// one module starts and lists upstreams, one sends them requests, and the pipeline is entered only
// through the dispatcher and the helpers it calls. A regex over code lines (comments skipped): a
// receiver named `…upstream` or `…Upstream`, as every such variable in serve/ is named.
const EDGE_RULES = [
  {
    pattern:
      /\bcreateUpstream\(|\b\w*[uU]pstream[!?]?\.(?:start|close|listTools|listPrompts|listResources|listResourceTemplates)\(/,
    // serve/listings.ts is the registry's own listing step (each listing failing alone), imported only by it.
    only: ['serve/registry.ts', 'serve/listings.ts'],
    what: 'creates, starts, lists or closes an upstream: only the registry (serve/registry.ts, with its serve/listings.ts) does',
  },
  {
    pattern:
      /\b\w*[uU]pstream[!?]?\.(?:callTool|getPrompt|readResource|complete|subscribeResource|setLoggingLevel)\(/,
    only: ['serve/pipeline/method-steps.ts'],
    what: "sends an upstream a request: only the pipeline's forward step (serve/pipeline/method-steps.ts) does",
  },
  {
    pattern: /\brunForward\(/,
    only: [
      'serve/dispatch.ts',
      'serve/resource-reads.ts',
      'serve/completion.ts',
      'serve/log-levels.ts',
      'serve/pipeline/run.ts',
    ],
    what: 'enters the pipeline: only the dispatcher (serve/dispatch.ts) and the helpers it calls do',
  },
  {
    pattern: /\bstartToolTask\(/,
    only: ['serve/dispatch.ts', 'serve/pipeline/task-run.ts'],
    what: 'starts a task through the pipeline: only the dispatcher (serve/dispatch.ts) does',
  },
];
for (const file of files) {
  const name = relative(root, file);
  if (!name.startsWith('serve/')) continue;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
      for (const rule of EDGE_RULES)
        if (rule.pattern.test(line) && !rule.only.includes(name))
          problems.push(`${name}:${i + 1} ${rule.what}`);
    });
}

if (problems.length > 0) {
  console.error(`check-layers: ${problems.length} problem(s) in packages/gateway/src:`);
  for (const p of problems) console.error(`  ${p}`);
  console.error(
    'Move a shared type into packages/gateway/src/ports/; errors: see packages/gateway/src/errors.ts (docs/architecture.md).',
  );
  process.exit(1);
}
console.log(
  `check-layers: ${files.length} gateway modules, layering holds, no import cycle, every error coded.`,
);
