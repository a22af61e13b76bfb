/**
 * The unit layer starts no child process and no private ClickHouse or Redis: `npm run test:unit` stays seconds, and
 * a file that does either belongs to integration (vitest.layers.ts). Two such files had been left among the units.
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layerOf } from '../../vitest.layers.js';

const ROOT = join(import.meta.dirname, '..', '..');
const STARTS_A_PROCESS = /\b(spawn|spawnSync|execFile|execFileSync|fork|spawnCli|startRedis|startClickHouse|startNginx|startChild)\(/;

describe('the test layers', () => {
  it('keep child processes and private servers out of the unit layer', async () => {
    const files = (await readdir(join(ROOT, 'test'), { recursive: true })).filter((file) => file.endsWith('.test.ts')).map((file) => `test/${file}`);
    const misplaced: string[] = [];
    for (const file of files) if (layerOf(file) === 'unit' && STARTS_A_PROCESS.test(await readFile(join(ROOT, file), 'utf8'))) misplaced.push(file);
    expect(misplaced).toEqual([]);
    expect(files.length).toBeGreaterThan(100);
    expect(layerOf('test/executor/redis-down.test.ts')).toBe('integration');
  });
});
