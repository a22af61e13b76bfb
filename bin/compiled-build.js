// The compiled JavaScript the CLI runs: the TypeScript sources transpiled once by esbuild and reused while
// they stay the same. Starting through tsx compiled every module on every start (1.4–3.7 s for --help);
// a compiled start is node's own.
//
// A build is named by a hash of every source's path and content (and package.json and esbuild's version),
// so an edited source is a different name: no run can use stale code, and no mtime is trusted. A build is
// written under a temporary name and renamed into place, so processes starting together (a test suite,
// both arms of a trial) never see half a build: the first rename wins, the others use it.
import { createHash } from 'node:crypto';
import { accessSync, constants, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

/** Folders of product code (everything the CLI can load); tests and benches run from source. */
const SOURCE_DIRS = ['core', 'store', 'dashboard', 'cli', 'executor', 'recorder', 'replayer', 'guardrails', 'triggers', 'harness', 'lattice', 'examples'];
/**
 * Builds of other sources are removed once unused this long (each start that uses a build touches it): a
 * long-running worker may still load modules lazily from its own.
 */
const KEEP_OLD_BUILDS_MS = 7 * 24 * 3_600_000;

function sourceFiles(root) {
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) walk(join(root, dir));
  return files.sort();
}

function buildName(root, files, esbuildVersion) {
  const hash = createHash('sha256').update(`esbuild ${esbuildVersion}\n`);
  for (const file of [join(root, 'package.json'), ...files]) {
    hash.update(`${relative(root, file)}\n`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 20);
}

/** Where builds go: beside the sources, or in the temp dir when the package folder is read-only. */
function buildsDir(root) {
  const local = join(root, '.build');
  try {
    mkdirSync(local, { recursive: true });
    accessSync(local, constants.W_OK);
    return local;
  } catch {
    const shared = join(tmpdir(), `tandem-build-${process.getuid?.() ?? 'user'}`);
    mkdirSync(shared, { recursive: true, mode: 0o700 });
    return shared;
  }
}

function removeOldBuilds(dir, current) {
  const now = Date.now();
  for (const name of readdirSync(dir)) {
    if (name === current) continue;
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > KEEP_OLD_BUILDS_MS) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by another process meanwhile.
    }
  }
}

/**
 * The folder holding the compiled sources of `root` (same layout: `cli/main.js` for `cli/main.ts`), built
 * now if these exact sources have no build yet.
 */
export async function compiledBuild(root) {
  const esbuildVersion = JSON.parse(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8')).version;
  const files = sourceFiles(root);
  const dir = buildsDir(root);
  const name = buildName(root, files, esbuildVersion);
  const out = join(dir, name);
  if (existsSync(out)) {
    try {
      utimesSync(out, new Date(), new Date());
    } catch {
      // A read-only build folder someone else made: used as it is.
    }
    return out;
  }
  const staging = join(dir, `${name}.staging-${process.pid}-${Math.random().toString(36).slice(2)}`);
  try {
    const { build } = await import('esbuild');
    await build({ entryPoints: files, outdir: staging, outbase: root, format: 'esm', platform: 'node', target: 'node20', sourcemap: true, logLevel: 'error' });
    // What the compiled modules reach by relative path: the version (cli reads ../package.json), the CLI
    // itself (deploy commands of the demo), and dependencies when the build lives outside the package.
    copyFileSync(join(root, 'package.json'), join(staging, 'package.json'));
    symlinkSync(join(root, 'bin'), join(staging, 'bin'));
    if (dir !== join(root, '.build')) symlinkSync(join(root, 'node_modules'), join(staging, 'node_modules'));
    try {
      renameSync(staging, out);
    } catch (error) {
      // Another process finished the same build first: use it.
      if (!existsSync(out)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  removeOldBuilds(dir, name);
  return out;
}
