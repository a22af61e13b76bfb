import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledBuild } from '../../bin/compiled-build.js';
import { REPO_ROOT } from '../support/cli.js';
import { tempDir } from '../support/temp-dir.js';

/** A package with the folders the build compiles: one module whose value the test edits. */
async function fakePackage(value: number): Promise<string> {
  const root = await tempDir();
  await mkdir(join(root, 'core'), { recursive: true });
  await mkdir(join(root, 'bin'), { recursive: true });
  await writeFile(join(root, 'package.json'), JSON.stringify({ name: 'fake', version: '1.0.0', type: 'module' }));
  await writeFile(join(root, 'core', 'value.ts'), `export const value: number = ${value};\n`);
  await symlink(join(REPO_ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

const valueOf = async (build: string): Promise<number> => ((await import(pathToFileURL(join(build, 'core', 'value.js')).href)) as { value: number }).value;

describe('the compiled build the CLI runs', () => {
  it('is reused while the sources are unchanged and rebuilt when one changes: an edit never runs stale code', async () => {
    const root = await fakePackage(1);
    const first = await compiledBuild(root);
    expect(await valueOf(first)).toBe(1);
    expect(await compiledBuild(root)).toBe(first);
    // Same length, so only the content tells the two sources apart.
    await writeFile(join(root, 'core', 'value.ts'), 'export const value: number = 2;\n');
    const second = await compiledBuild(root);
    expect(second).not.toBe(first);
    expect(await valueOf(second)).toBe(2);
  });

  it('is built once by concurrent first starts: every caller gets the same complete build, no staging left', async () => {
    const root = await fakePackage(7);
    const builds = await Promise.all(Array.from({ length: 4 }, () => compiledBuild(root)));
    expect(new Set(builds).size).toBe(1);
    expect(await valueOf(builds[0]!)).toBe(7);
    expect((await readdir(join(root, '.build'))).filter((name) => name.includes('.staging-'))).toEqual([]);
  });
});
