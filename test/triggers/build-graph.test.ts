import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../core/index.js';
import { BuildGraph, changedLatticeStates, changedSettings, globToRegExp, parseGraph, sampleValue } from '../../triggers/index.js';

/** Reverse closure by brute force: repeat "add every target with a dependency already in the set" until nothing changes. */
function bruteForce(targets: { name: string; deps: string[] }[], start: Set<string>): Set<string> {
  const closure = new Set(start);
  for (let changed = true; changed;) {
    changed = false;
    for (const t of targets) {
      if (!closure.has(t.name) && t.deps.some((d) => closure.has(d))) {
        closure.add(t.name);
        changed = true;
      }
    }
  }
  return closure;
}

describe('build graph', () => {
  it('matches a brute-force reverse closure on random graphs', () => {
    for (let seed = 1; seed <= 30; seed++) {
      const random = seededRandom(seed);
      const n = 20 + Math.floor(random() * 60);
      const targets = Array.from({ length: n }, (_, i) => ({ name: `t${i}`, srcs: [`src/t${i}`], deps: [] as string[] }));
      // Random edges, cycles allowed: a real graph should not have them, but the closure must still terminate.
      for (let e = 0; e < n * 2; e++) {
        const from = Math.floor(random() * n);
        const to = Math.floor(random() * n);
        if (from !== to && !targets[from]!.deps.includes(`t${to}`)) targets[from]!.deps.push(`t${to}`);
      }
      const graph = new BuildGraph(targets);
      const changed = Array.from({ length: 1 + Math.floor(random() * 4) }, () => `src/t${Math.floor(random() * n)}/file.ts`);
      const { reached } = graph.affected(changed);
      const expected = bruteForce(targets, new Set(changed.map((f) => f.split('/')[1]!)));
      expect(new Set(reached.keys()), `seed ${seed}`).toEqual(expected);
      // Every reported path is a real chain: file, its owner, then each target depending on the previous.
      for (const { path } of reached.values()) {
        expect(changed).toContain(path[0]);
        for (let i = 2; i < path.length; i++) expect(targets.find((t) => t.name === path[i])!.deps).toContain(path[i - 1]);
      }
    }
  });

  it('gives the shortest path and leaves unowned files apart', () => {
    const graph = new BuildGraph([
      { name: 'core', srcs: ['libs/core'], deps: [] },
      { name: 'mid', srcs: ['libs/mid/**/*.ts'], deps: ['core'] },
      { name: 'app', srcs: ['apps/app'], deps: ['mid', 'core'] },
    ]);
    const { reached, unowned } = graph.affected(['libs/core/a.ts', 'README.md']);
    expect(reached.get('app')!.path).toEqual(['libs/core/a.ts', 'core', 'app']);
    expect(reached.get('mid')!.path).toEqual(['libs/core/a.ts', 'core', 'mid']);
    expect(unowned).toEqual(['README.md']);
    expect(graph.owners('libs/mid/x/y.ts')).toEqual(['mid']);
    expect(graph.owners('libs/mid/x/y.js')).toEqual([]);
    expect(new BuildGraph([{ name: 'a', srcs: [], deps: ['ghost'] }]).problems).toEqual(['target a depends on unknown target ghost']);
  });

  it('matches globs the way build tools do', () => {
    expect(globToRegExp('src/**/*.ts').test('src/a/b/c.ts')).toBe(true);
    expect(globToRegExp('src/**/*.ts').test('src/c.ts')).toBe(true);
    expect(globToRegExp('src/*.ts').test('src/a/c.ts')).toBe(false);
    expect(globToRegExp('config/*.{yaml,json}').test('config/x.json')).toBe(true);
    expect(globToRegExp('docs/**').test('docs/a/b.md')).toBe(true);
    // What picomatch brings that the hand-written matcher lacked: dotfiles, negated classes, extglobs.
    expect(globToRegExp('**/*.yml').test('.github/workflows/ci.yml')).toBe(true);
    expect(globToRegExp('src/[^_]*.ts').test('src/_private.ts')).toBe(false);
    expect(globToRegExp('src/[^_]*.ts').test('src/public.ts')).toBe(true);
    expect(globToRegExp('**/*.@(md|mdx)').test('packages/a/README.mdx')).toBe(true);
  });
});

describe('config setting diff', () => {
  it('names the settings that changed, and has no answer for files it cannot parse', () => {
    expect(changedSettings('c.yaml', 'model:\n  depth: 3\n  width: 8\nlog: info\n', 'model:\n  depth: 4\n  width: 8\nlog: info\nnew: 1\n')).toEqual([
      'model.depth',
      'new',
    ]);
    expect(changedSettings('c.json', '{"a":[1,2]}', '{"a":[1,3]}')).toEqual(['a']);
    expect(changedSettings('c.yaml', undefined, 'a: 1\n')).toEqual(['a']);
    expect(changedSettings('c.ini', 'a=1', 'a=2')).toBeUndefined();
    expect(changedSettings('c.json', '{', '{}')).toBeUndefined();
  });
});

describe('priority sampling', () => {
  it('decides by a hash of (change, workload): retries agree, and the share follows p', () => {
    expect(sampleValue('abc123', 'ranking')).toBe(sampleValue('abc123', 'ranking'));
    const kept = Array.from({ length: 4_000 }, (_, i) => sampleValue(`change-${i}`, 'ranking') < 0.25).filter(Boolean).length;
    expect(kept / 4_000).toBeGreaterThan(0.22);
    expect(kept / 4_000).toBeLessThan(0.28);
  });
});

describe('graph exports and change parsers', () => {
  it('reads a JSON graph export and names what is wrong in a bad one', () => {
    expect(parseGraph('json', '{"targets":[{"name":"//a:lib","srcs":["a/**"],"deps":["//b:lib"]},{"name":"//b:lib"}]}', 'graph.json')).toEqual([
      { name: '//a:lib', srcs: ['a/**'], deps: ['//b:lib'] },
      { name: '//b:lib', srcs: [], deps: [] },
    ]);
    expect(() => parseGraph('json', '{"targets":[{"srcs":[]}]}', 'graph.json')).toThrow(/graph\.json: targets\.0\.name/);
    expect(() => parseGraph('json', '{', 'graph.json')).toThrow(/graph\.json: not JSON/);
  });

  it('finds changed lattice states per service', () => {
    const before = 'states:\n  - { name: L0, levels: { a: 0, b: 0 } }\n  - { name: L1, levels: { a: 1, b: 0 } }\n';
    const after = 'states:\n  - { name: L0, levels: { a: 0, b: 0 } }\n  - { name: L1, levels: { a: 1, b: 1 } }\n  - { name: L2, levels: { a: 2, b: 2 } }\n';
    expect(changedLatticeStates('l.yaml', before, after)).toEqual(
      new Map([
        ['b', ['L1', 'L2']],
        ['a', ['L2']],
      ]),
    );
    expect(changedLatticeStates('l.yaml', 'not: a lattice', after)).toBeUndefined();
  });
});
