// The architecture's import rules (README, "Where things live"), as one ESLint rule over top-level folders.
//
// Written here rather than taken from eslint-plugin-boundaries: that plugin classifies the *resolved* file
// of an import, and our specifiers name `.js` files that exist as `.ts` (NodeNext), which needs a TypeScript
// import resolver as a further dependency; the policy itself is the table below.
import { dirname, relative, resolve, sep } from 'node:path';

const ROOT = dirname(import.meta.dirname);

/** Library folders: the product minus its composition root (cli/). */
const LIBRARY = new Set(['core', 'net', 'store', 'executor', 'recorder', 'replayer', 'guardrails', 'triggers', 'harness', 'lattice', 'dashboard']);

/** Backend implementations and the names that build them: only cli/ (and examples, tests, benches) compose backends. */
const BACKEND_FILES = [/^store\/(clickhouse|local)(\/|-store\.ts$)/, /^executor\/(bullmq|inline)-(queue|worker)\.ts$/];
const BACKEND_NAMES = new Set([
  'createStore',
  'createLocalStore',
  'createClickHouseStore',
  'ClickHouseStore',
  'LocalStore',
  'BullMqQueue',
  'BullMqWorker',
  'InlineQueue',
]);

/**
 * The folder order (README, "Where things live": data flows one way): each product folder and the product folders it
 * may import. A new arrow between folders is a change to this table, made on purpose, never a side effect.
 */
const FOLDER_ORDER = {
  core: [],
  net: ['core'],
  store: ['core'],
  recorder: ['core', 'net', 'store'],
  replayer: ['core', 'net', 'store'],
  guardrails: ['core', 'net'],
  triggers: ['core', 'store'],
  harness: ['core', 'net', 'store', 'guardrails'],
  lattice: ['core', 'store', 'harness'],
  executor: ['core', 'net', 'store', 'recorder', 'replayer', 'guardrails', 'harness'],
  dashboard: ['core', 'store', 'harness', 'executor'],
  cli: ['core', 'net', 'store', 'recorder', 'replayer', 'guardrails', 'triggers', 'harness', 'lattice', 'executor', 'dashboard'],
};

/** The only cli/ files that run the examples: `tandem demo` and `tandem example-stack`. */
const CLI_EXAMPLE_RUNNERS = new Set(['cli/commands/demo.ts', 'cli/commands/example-stack.ts']);

/**
 * harness/'s rooms and what each may import besides the shared files at harness/'s root (stats, wording): the judge
 * reads metrics, calibration feeds the judge, checks compose the judge with the comparisons, and only reports present.
 */
const HARNESS_ROOMS = {
  metrics: [],
  judge: ['metrics'],
  calibration: ['judge', 'metrics'],
  compare: [],
  checks: ['judge', 'compare', 'metrics'],
  reports: ['judge', 'metrics', 'calibration', 'compare', 'checks'],
};

function harnessRoomOf(path) {
  const [top, room, rest] = path.split('/');
  return top === 'harness' && rest !== undefined && room in HARNESS_ROOMS ? room : undefined;
}

/** Why one harness file may not import another, or undefined when it may. */
function harnessRoomViolation(from, to) {
  const source = harnessRoomOf(from);
  if (source === undefined) return undefined;
  if (to === 'harness/index.ts') return `harness/${source}/ imports the files it needs, not harness/index.ts (${to})`;
  const target = harnessRoomOf(to);
  if (target === undefined || target === source || HARNESS_ROOMS[source].includes(target)) return undefined;
  return `harness/${source}/ may import ${HARNESS_ROOMS[source].map((room) => `${room}/`).join(', ') || 'no other room'} and harness/'s shared files, not harness/${target}/ (${to})`;
}

function folderOf(path) {
  return path.split('/')[0];
}

/** Why `from` may not import `to` (repository-relative paths), or undefined when it may. */
export function boundaryViolation(from, to, importedNames) {
  const source = folderOf(from);
  const target = folderOf(to);
  if (source === 'harness' && target === 'harness') return harnessRoomViolation(from, to);
  if (source === target) return undefined;
  if (source === 'core') return `core/ imports nothing of ours (${to})`;
  if (source === 'store' && target !== 'core') return `store/ knows no feature: it imports only core/ (${to})`;
  if (source === 'net' && target !== 'core') return `net/ is the transport every feature shares: it imports only core/ (${to})`;
  if (target === 'bench' && source !== 'bench') return `nothing imports bench/ (${to})`;
  // Benches start their private ClickHouse and Redis with the tests' helpers.
  if (target === 'test' && source !== 'test' && !(source === 'bench' && to.startsWith('test/support/'))) return `nothing imports test/ (${to})`;
  if (target === 'examples' && LIBRARY.has(source)) return `the product never imports examples/ (${to})`;
  if (target === 'examples' && source === 'cli' && !CLI_EXAMPLE_RUNNERS.has(from))
    return `in cli/, only the demo and example-stack commands import examples/ (${to})`;
  if (source in FOLDER_ORDER && target in FOLDER_ORDER && !FOLDER_ORDER[source].includes(target))
    return `${source}/ may import ${FOLDER_ORDER[source].map((f) => `${f}/`).join(', ') || 'nothing of ours'}, not ${target}/: data flows one way (eslint/import-boundaries.js, FOLDER_ORDER) (${to})`;
  if (LIBRARY.has(source) && source !== target) {
    if (BACKEND_FILES.some((pattern) => pattern.test(to))) return `only cli/ composes backends (${to})`;
    const built = importedNames.filter((name) => BACKEND_NAMES.has(name));
    if (built.length > 0) return `only cli/ composes backends (${built.join(', ')} from ${to})`;
  }
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
export const importBoundaries = {
  meta: { type: 'problem', docs: { description: 'the import rules between top-level folders' }, schema: [], messages: { violation: '{{why}}' } },
  create(context) {
    const file = relative(ROOT, context.filename).split(sep).join('/');
    const check = (node, specifier, importedNames) => {
      if (typeof specifier !== 'string' || !specifier.startsWith('.')) return;
      const target = relative(ROOT, resolve(dirname(context.filename), specifier))
        .split(sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      if (target.startsWith('..')) return;
      const why = boundaryViolation(file, target, importedNames);
      if (why) context.report({ node, messageId: 'violation', data: { why } });
    };
    const names = (specifiers) =>
      specifiers.map((s) => (s.type === 'ImportSpecifier' || s.type === 'ExportSpecifier' ? ((s.imported ?? s.local).name ?? '') : '')).filter(Boolean);
    return {
      ImportDeclaration: (node) => check(node, node.source.value, names(node.specifiers)),
      ExportNamedDeclaration: (node) => node.source && check(node, node.source.value, names(node.specifiers)),
      ExportAllDeclaration: (node) => check(node, node.source.value, []),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, []),
    };
  },
};
