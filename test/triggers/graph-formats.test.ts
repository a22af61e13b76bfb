import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { expandWorkloadTemplates, parseConfig, parseConfigText } from '../../core/index.js';
import { BuildGraph, parseGraph, unionTargets } from '../../triggers/index.js';

const fixture = (name: string): string => readFileSync(new URL(`./fixtures/${name}`, import.meta.url), 'utf8');

describe('graph exports of Nx, Turborepo and Bazel', () => {
  it('reads `nx graph --file` output: projects own their root, npm: targets are external, edge types label the path', () => {
    const targets = parseGraph('nx', fixture('nx-graph.json'), 'graph.json');
    expect(targets.find((t) => t.name === 'ranking')).toEqual({ name: 'ranking', srcs: ['apps/ranking'], deps: ['features'], externalDeps: ['lodash'] });
    const graph = new BuildGraph(targets);
    const reach = graph.affected(['libs/testing/src/index.ts']).reached.get('api')!;
    expect(reach.path).toEqual(['libs/testing/src/index.ts', 'testing', 'features', 'ranking', 'api']);
    expect(reach.edges).toEqual(['nx implicit', 'dependency', 'nx dynamic']);
    expect(graph.usersOf(['lodash'])).toEqual(['ranking']);
    expect(() => parseGraph('nx', '{"graph":{"nodes":{"a":{"data":{}}}}}', 'graph.json')).toThrow(/graph\.json: graph\.nodes\.a\.data\.root/);
  });

  it('keeps projects the repository named like Object members: `toString` is a project, `__proto__` keeps its edges', () => {
    const text = JSON.stringify({
      graph: {
        nodes: { toString: { data: { root: 'libs/to-string' } }, app: { data: { root: 'apps/app' } } },
        dependencies: {
          app: [
            { source: 'app', target: 'toString', type: 'static' },
            { source: 'app', target: '__proto__', type: 'implicit' },
          ],
          toString: [],
        },
      },
    }).replace('"app":{"data"', '"__proto__":{"data":{"root":"libs/proto"}},"app":{"data"');
    const targets = parseGraph('nx', text, 'graph.json');
    expect(targets.map((t) => t.name).sort()).toEqual(['__proto__', 'app', 'toString']);
    const graph = new BuildGraph(targets);
    expect([...graph.affected(['libs/to-string/a.ts']).reached.keys()].sort()).toEqual(['app', 'toString']);
    const viaProto = graph.affected(['libs/proto/a.ts']).reached;
    expect([...viaProto.keys()].sort()).toEqual(['__proto__', 'app']);
    expect(viaProto.get('app')!.edges).toEqual(['nx implicit']);
  });

  it('reads `turbo run build --dry=json`: one target per package, task dependencies across packages as edges, root tasks left out', () => {
    const targets = parseGraph('turbo', fixture('turbo-dry.json'), 'turbo.json');
    expect(targets).toEqual([
      { name: '@serving/features', srcs: ['packages/features'], deps: [] },
      { name: '@serving/ranking', srcs: ['packages/ranking'], deps: ['@serving/features'] },
      { name: '@serving/api', srcs: ['apps/api'], deps: ['@serving/ranking'] },
    ]);
    expect([...new BuildGraph(targets).affected(['packages/features/src/index.ts']).reached.keys()]).toEqual([
      '@serving/features',
      '@serving/ranking',
      '@serving/api',
    ]);
    expect(() => parseGraph('turbo', '{"tasks":[{"taskId":"a#build"}]}', 'turbo.json')).toThrow(/turbo\.json: tasks\.0\.package/);
  });

  it('reads `bazel query --output=streamed_jsonproto` (and jsonproto): source inputs are exact files, generated files lead to their rule', () => {
    const text = fixture('bazel-query.jsonl');
    const targets = parseGraph('bazel', text, 'deps.jsonl');
    const ranking = targets.find((t) => t.name === '//services/ranking:ranking')!;
    expect(ranking).toMatchObject({ srcsAreFiles: true, deps: ['//libs/features:features', '//libs/features:schema'], externalDeps: ['@npm'] });
    expect(ranking.srcs).toEqual(['services/ranking/BUILD', 'services/ranking/BUILD.bazel', 'services/ranking/main.ts', 'services/ranking/model/score.ts']);
    const graph = new BuildGraph(targets);
    expect(graph.owners('services/ranking/model/score.ts')).toEqual(['//services/ranking:ranking']);
    // A file no rule takes as input is owned by none: exact files, not the package directory.
    expect(graph.owners('services/ranking/notes.txt')).toEqual([]);
    expect(graph.affected(['libs/features/schema.json']).reached.get('//services/ranking:ranking')!.path).toEqual([
      'libs/features/schema.json',
      '//libs/features:schema',
      '//services/ranking:ranking',
    ]);
    const whole = JSON.stringify({
      target: text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
    });
    expect(parseGraph('bazel', whole, 'deps.json')).toEqual(targets);
    expect(() => parseGraph('bazel', '{"type":"RULE","rule":{}}\n', 'deps.jsonl')).toThrow(/deps\.jsonl:1: rule\.name/);
    expect(() => parseGraph('bazel', '{"type":"RULE"}\nnot json\n', 'deps.jsonl')).toThrow(/deps\.jsonl:2: not JSON/);
  });

  it('unites the graphs of both ends of a change: every edge of either, a plain dependency outranking a dev one', () => {
    const base = [
      { name: 'a', srcs: ['a'], deps: [] },
      { name: 'b', srcs: ['b'], deps: ['a'], depKinds: { a: 'devDependency' } },
      { name: 'gone', srcs: ['gone'], deps: [] },
    ];
    const head = [
      { name: 'a', srcs: ['a'], deps: [] },
      { name: 'b', srcs: ['b'], deps: ['a', 'c'] },
      { name: 'c', srcs: ['c'], deps: [] },
    ];
    expect(unionTargets(base, head)).toEqual([
      { name: 'a', srcs: ['a'], deps: [] },
      { name: 'b', srcs: ['b'], deps: ['a', 'c'] },
      { name: 'gone', srcs: ['gone'], deps: [] },
      { name: 'c', srcs: ['c'], deps: [] },
    ]);
  });
});

describe('docs/triggers.md', () => {
  it('every YAML config it shows is a valid config', () => {
    const text = readFileSync(new URL('../../docs/triggers.md', import.meta.url), 'utf8');
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(4);
    for (const block of blocks) expect(() => parseConfigText(block, 'docs/triggers.md')).not.toThrow();
  });
});

describe('workload templates', () => {
  const config = parseConfig({
    workloadTemplates: [
      {
        targets: ['@x/*'],
        workload: { arms: { control: { deploy: { command: 'serve {dir} {port}' } }, treatment: { deploy: { command: 'serve {dir} {port}' } } } },
      },
    ],
  });

  it('make one workload per matching target, named by its last segment, with {dir} substituted and the target as its trigger', () => {
    const expanded = expandWorkloadTemplates(config, [
      { name: '@x/ranking', dir: 'services/ranking' },
      { name: '@y/other', dir: 'other' },
    ]);
    expect(expanded.workloads).toHaveLength(1);
    expect(expanded.workloads[0]).toMatchObject({
      name: 'ranking',
      tier: 'ranking',
      triggers: { targets: ['@x/ranking'] },
      arms: { control: { deploy: { command: 'serve services/ranking {port}' } } },
    });
  });

  it('refuse a target name or directory a shell would interpret, and two targets giving one name', () => {
    expect(() => expandWorkloadTemplates(config, [{ name: '@x/a', dir: 'packages/$(touch pwned)' }])).toThrow(
      /workloadTemplates\[0\]: target "@x\/a" \(directory "packages\/\$\(touch pwned\)"\) has characters that are not safe/,
    );
    expect(() => expandWorkloadTemplates(config, [{ name: '@x/a;rm', dir: 'a' }])).toThrow(/not safe to substitute/);
    const deep = parseConfig({ workloadTemplates: [{ targets: ['@x/**'], workload: {} }] });
    expect(() =>
      expandWorkloadTemplates(deep, [
        { name: '@x/a', dir: 'one/a' },
        { name: '@x/b/a', dir: 'two/a' },
      ]),
    ).toThrow(/gives the name "a" to targets @x\/a and @x\/b\/a/);
  });
});
