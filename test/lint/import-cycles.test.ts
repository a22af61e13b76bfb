/**
 * Issue 70, finding 8: `guardrails/router.ts` ↔ `guardrails/h2-egress.ts`, `harness/sequential.ts` ↔
 * `harness/law-cache.ts` and three files of `store/clickhouse/` imported each other, and no lint said so. The lint
 * (`npm run lint`, `npm test`) now fails on any import circle among the product's files.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles, importGraph } from '../../eslint/import-cycles.js';
import { tempDir } from '../support/temp-dir.js';

type Graph = Map<string, string[]>;
const cyclesOf = importCycles;
const graphOf = importGraph;

describe('the import-circle lint', () => {
  it('finds every circle, however long, and a file importing itself; a chain without one is none', () => {
    const graph: Graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
      ['f.ts', ['d.ts']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('reads imports, type imports and re-exports of the product folders, written over several lines', async () => {
    const root = await tempDir();
    mkdirSync(join(root, 'store', 'clickhouse'), { recursive: true });
    writeFileSync(join(root, 'store', 'clickhouse', 'schema.ts'), "import {\n  qualified,\n} from '../sql.js';\nexport { rows } from './rows.js';\n");
    writeFileSync(join(root, 'store', 'clickhouse', 'rows.ts'), "import type { Table } from './schema.js';\n");
    writeFileSync(join(root, 'store', 'sql.ts'), "import './clickhouse/rows.js';\n");
    expect(cyclesOf(graphOf(root))).toEqual([['store/clickhouse/rows.ts', 'store/clickhouse/schema.ts', 'store/sql.ts']]);
  });

  it('finds none in the product as it is', () => {
    expect(cyclesOf(graphOf())).toEqual([]);
  });
});
