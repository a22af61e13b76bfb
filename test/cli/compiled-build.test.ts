import { chmod, chown, lstat, mkdir, readdir, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compiledBuild, UnsafeBuildFolderError } from '../../bin/compiled-build.js';
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

  describe('runs only code from folders the user controls (a second user is played by chown: the suite runs as root)', () => {
    const OTHER_UID = 4242;
    const isRoot = process.getuid?.() === 0;
    /** The running user, with the package folder read-only to it, so builds go to the temp folder. */
    function readOnlyPackage(tmp: string) {
      const warnings: string[] = [];
      const cleanups: (() => void)[] = [];
      return {
        host: {
          uid: process.getuid!(),
          tmp,
          canWrite: () => false,
          warn: (line: string) => warnings.push(line),
          onExit: (cleanup: () => void) => cleanups.push(cleanup),
        },
        warnings,
        cleanups,
      };
    }
    /** What another user would plant: a build of the exact name, whose CLI would run as us. */
    async function plant(folder: string, root: string): Promise<void> {
      const name = (await compiledBuild(root)).split('/').pop()!;
      await mkdir(join(folder, name, 'core'), { recursive: true });
      await writeFile(join(folder, name, 'core', 'value.js'), 'export const value = 666;\n');
    }

    it.runIf(isRoot)('never uses a temp build folder another user made: it builds in a fresh private folder, says so, and removes it at exit', async () => {
      const root = await fakePackage(3);
      const tmp = await tempDir();
      const theirs = join(tmp, `tandem-build-${process.getuid!()}`);
      await mkdir(theirs, { mode: 0o700 });
      await plant(theirs, root);
      await chown(theirs, OTHER_UID, OTHER_UID);
      const { host, warnings, cleanups } = readOnlyPackage(tmp);
      const build = await compiledBuild(root, host);
      expect(build.startsWith(theirs + '/')).toBe(false);
      expect(await valueOf(build)).toBe(3);
      expect(warnings.join('\n')).toContain(`${theirs}: it is owned by uid ${OTHER_UID}`);
      expect(((await stat(join(build, '..'))).mode & 0o777).toString(8)).toBe('700');
      for (const cleanup of cleanups) cleanup();
      await expect(lstat(join(build, '..'))).rejects.toThrow(/ENOENT/);
    });

    it.runIf(isRoot)('never follows a symbolic link planted as the temp build folder, nor uses one of ours others can write', async () => {
      const root = await fakePackage(4);
      const tmp = await tempDir();
      const elsewhere = await tempDir();
      await plant(elsewhere, root);
      await symlink(elsewhere, join(tmp, `tandem-build-${process.getuid!()}`));
      const linked = readOnlyPackage(tmp);
      expect(await valueOf(await compiledBuild(root, linked.host))).toBe(4);
      expect(linked.warnings.join('\n')).toContain('it is a symbolic link');

      const open = await tempDir();
      const shared = join(open, `tandem-build-${process.getuid!()}`);
      await mkdir(shared);
      await chmod(shared, 0o777);
      await plant(shared, root);
      const opened = readOnlyPackage(open);
      expect(await valueOf(await compiledBuild(root, opened.host))).toBe(4);
      expect(opened.warnings.join('\n')).toContain('others can write to it (mode 777)');
    });

    it('makes its own temp build folder 0700 and reuses it', async () => {
      const root = await fakePackage(5);
      const tmp = await tempDir();
      const { host, warnings } = readOnlyPackage(tmp);
      const build = await compiledBuild(root, host);
      expect(build.startsWith(join(tmp, `tandem-build-${process.getuid!()}`) + '/')).toBe(true);
      expect(((await stat(join(build, '..'))).mode & 0o777).toString(8)).toBe('700');
      expect(await compiledBuild(root, host)).toBe(build);
      expect(warnings).toEqual([]);
    });

    it.runIf(isRoot)('refuses a .build another user made in the package folder, naming it and the owner, and runs none of it', async () => {
      const root = await fakePackage(6);
      await plant(join(root, '.build'), root);
      await chown(join(root, '.build'), OTHER_UID, OTHER_UID);
      // The package's owner is trusted (they can edit the sources anyway): make it someone other than both.
      await chown(root, 4343, 4343);
      const error = await compiledBuild(root).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(UnsafeBuildFolderError);
      expect((error as Error).message).toContain(`${join(root, '.build')}: it is owned by uid ${OTHER_UID}`);
    });

    it('refuses a .build others can write, and leaves no shared write bit on what it builds (whatever the umask)', async () => {
      const root = await fakePackage(8);
      const previous = process.umask(0o002);
      let build: string;
      try {
        build = await compiledBuild(root);
      } finally {
        process.umask(previous);
      }
      for (const path of [build, join(build, 'core'), join(build, 'core', 'value.js')]) expect((await stat(path)).mode & 0o022).toBe(0);
      await chmod(join(root, '.build'), 0o777);
      await expect(compiledBuild(root)).rejects.toThrow(/others can write to it \(mode 777\)/);
    });
  });
});
