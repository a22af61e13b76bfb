// Import circles among the product's files (README, "Where things live": no import circles), found over the
// whole graph: a per-file ESLint rule sees one file's imports, a circle is a property of all of them.
//
// Written here rather than taken from eslint-plugin-import's no-cycle: it resolves specifiers through a
// resolver plugin, and ours name `.js` files that exist as `.ts` (NodeNext); the graph needs only the
// relative specifiers of static imports and re-exports, read below. Type-only imports count too: a circle of
// types is still two files that cannot be understood one without the other.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = dirname(import.meta.dirname);
/** The product: every folder but tests, benches, examples and tooling. */
const PRODUCT = ['core', 'net', 'store', 'executor', 'recorder', 'replayer', 'guardrails', 'triggers', 'harness', 'lattice', 'dashboard', 'cli'];
const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+['"](\.{1,2}\/[^'"]+)['"]|(?:^|\n)\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/g;

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** The product's import graph: repository-relative file → the files it imports. */
export function importGraph(root = ROOT) {
  const graph = new Map();
  for (const folder of PRODUCT) {
    let files;
    try {
      files = sourceFiles(join(root, folder));
    } catch {
      continue;
    }
    for (const file of files) {
      const text = readFileSync(file, 'utf8');
      const targets = new Set();
      for (const match of text.matchAll(SPECIFIER)) {
        const specifier = match[1] ?? match[2];
        const target = resolve(dirname(file), specifier.replace(/\.js$/, '.ts'));
        targets.add(relative(root, target));
      }
      graph.set(relative(root, file), [...targets]);
    }
  }
  return graph;
}

/** Every strongly connected group of more than one file (or a file importing itself): each is a circle. */
export function importCycles(graph) {
  // Tarjan's algorithm, iterative: the graph has a thousand files and recursion depth is not ours to spend.
  let index = 0;
  const indices = new Map();
  const lowlinks = new Map();
  const onStack = new Set();
  const stack = [];
  const cycles = [];
  for (const start of graph.keys()) {
    if (indices.has(start)) continue;
    const work = [[start, 0]];
    indices.set(start, index);
    lowlinks.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work.at(-1);
      const [node] = frame;
      const edges = (graph.get(node) ?? []).filter((t) => graph.has(t));
      if (frame[1] < edges.length) {
        const next = edges[frame[1]++];
        if (!indices.has(next)) {
          indices.set(next, index);
          lowlinks.set(next, index++);
          stack.push(next);
          onStack.add(next);
          work.push([next, 0]);
        } else if (onStack.has(next)) lowlinks.set(node, Math.min(lowlinks.get(node), indices.get(next)));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work.at(-1)[0];
        lowlinks.set(parent, Math.min(lowlinks.get(parent), lowlinks.get(node)));
      }
      if (lowlinks.get(node) === indices.get(node)) {
        const group = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          group.push(member);
        } while (member !== node);
        if (group.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(group.sort());
      }
    }
  }
  return cycles;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = importCycles(importGraph());
  for (const cycle of cycles) process.stderr.write(`import circle: ${cycle.join(' ↔ ')}\n`);
  if (cycles.length > 0) {
    process.stderr.write(`${cycles.length} import circle(s) among the product's files: move what both sides need into a file both import\n`);
    process.exit(1);
  }
}
