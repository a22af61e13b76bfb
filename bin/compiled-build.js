// The compiled JavaScript the CLI runs: the TypeScript sources transpiled once by esbuild and reused while
// they stay the same. Starting through tsx compiled every module on every start (1.4–3.7 s for --help);
// a compiled start is node's own.
//
// A build is named by a hash of every source's path and content (and package.json, esbuild's version and this file),
// so an edited source is a different name: no run can use stale code, and no mtime is trusted. A build is
// written under a temporary name and renamed into place, so processes starting together (a test suite,
// both arms of a trial) never see half a build: the first rename wins, the others use it.
//
// Only folders the user (or the package's owner, or root) controls are ever run from: see buildsDir.
import { createHash } from 'node:crypto';
import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Folders of product code (everything the CLI can load); tests and benches run from source. */
const SOURCE_DIRS = [
  'core',
  'net',
  'store',
  'dashboard',
  'cli',
  'executor',
  'recorder',
  'replayer',
  'guardrails',
  'triggers',
  'harness',
  'lattice',
  'examples',
];
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
      else if ((entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) || entry.name.endsWith('.proto')) files.push(path);
    }
  };
  for (const dir of SOURCE_DIRS) if (existsSync(join(root, dir))) walk(join(root, dir));
  return files.sort();
}

function buildName(root, files, esbuildVersion) {
  const hash = createHash('sha256').update(`esbuild ${esbuildVersion}\n`);
  // How a build is made is part of what it is: a change to this file (what it bundles, say) is a new build.
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  for (const file of [join(root, 'package.json'), ...files]) {
    hash.update(`${relative(root, file)}\n`);
    hash.update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 20);
}

/** A build folder Tandem will not use: its message says which folder, what is wrong with it and what to do. */
export class UnsafeBuildFolderError extends Error {
  constructor(path, problem, remedy) {
    super(`refusing to run the compiled build in ${path}: ${problem}. ${remedy}`);
    this.name = 'UnsafeBuildFolderError';
    this.path = path;
  }
}

/**
 * A folder whose code Tandem may run: a real directory (not a symbolic link), owned by someone trusted, and
 * not writable by anyone else (`forbiddenBits`). Whoever could write there could plant a `cli/main.js` that
 * every `tandem` start runs as its user.
 */
function verifyFolder(path, trustedOwners, forbiddenBits, remedy) {
  const stat = lstatSync(path);
  if (stat.isSymbolicLink()) throw new UnsafeBuildFolderError(path, 'it is a symbolic link', remedy);
  if (!stat.isDirectory()) throw new UnsafeBuildFolderError(path, 'it is not a directory', remedy);
  if (!trustedOwners.includes(stat.uid)) throw new UnsafeBuildFolderError(path, `it is owned by uid ${stat.uid}, not by you (uid ${trustedOwners[0]})`, remedy);
  if ((stat.mode & forbiddenBits) !== 0) throw new UnsafeBuildFolderError(path, `others can write to it (mode ${(stat.mode & 0o777).toString(8)})`, remedy);
}

/** The running user and where the checks look; tests substitute them to play a second user. */
function defaultHost() {
  return {
    uid: process.getuid?.() ?? -1,
    tmp: tmpdir(),
    warn: (line) => process.stderr.write(`${line}\n`),
    onExit: (cleanup) => process.once('exit', cleanup),
    canWrite(dir) {
      try {
        accessSync(dir, constants.W_OK);
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * Where builds go, verified: `.build` beside the sources when the package folder is writable, else
 * `$TMPDIR/tandem-build-<uid>`, created 0700 or verified to be the user's own 0700 folder (else a fresh
 * private one). In `.build`, the package's owner and root are trusted too (they can edit its sources anyway):
 * a `.build` that fails is refused, since only someone who can write the package folder could have made it.
 */
function buildsDir(root, host) {
  const local = join(root, '.build');
  let localWritable = false;
  try {
    mkdirSync(local, { recursive: true, mode: 0o755 });
    localWritable = host.canWrite(local);
  } catch {
    // A read-only package folder: builds go to the temp folder.
  }
  if (localWritable) {
    verifyFolder(
      local,
      [host.uid, 0, statSync(root).uid],
      0o022,
      `Remove it (it holds only compiled copies of the sources) or make it yours with mode 755, then start again.`,
    );
    return local;
  }
  if (host.uid === -1)
    throw new UnsafeBuildFolderError(
      root,
      'the package folder is not writable and this platform has no user id to make a private temporary folder with',
      'Run from a writable copy of the package.',
    );
  const shared = join(host.tmp, `tandem-build-${host.uid}`);
  try {
    mkdirSync(shared, { recursive: true, mode: 0o700 });
    verifyFolder(shared, [host.uid], 0o077, 'Remove it if it is not yours, or set TMPDIR to a folder only you can write.');
    return shared;
  } catch (error) {
    // Someone else's folder in the way must not stop tandem from starting: build in a fresh private folder
    // (a slower start, said once) and remove it when the process ends.
    const reason = error instanceof UnsafeBuildFolderError ? error.message.replace(/^refusing to run the compiled build in /, '') : String(error);
    const fresh = mkdtempSync(join(host.tmp, `tandem-build-${host.uid}-`));
    host.warn(`tandem: not using ${reason} Building in a fresh private folder instead (${fresh}), removed at exit.`);
    host.onExit(() => rmSync(fresh, { recursive: true, force: true }));
    return fresh;
  }
}

/** Modes with no write bit for group and others, all through a fresh build (esbuild creates folders under the umask, which may be 002). */
function withoutSharedWrite(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    chmodSync(path, statSync(path).mode & 0o755);
    if (entry.isDirectory()) withoutSharedWrite(path);
  }
  chmodSync(dir, statSync(dir).mode & 0o755);
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

/** The example services' process entry, relative to the package. */
const SERVICE_ENTRY = join('examples', 'stack', 'service-main');

/**
 * The example services' process entry, bundled with everything it imports (node_modules included) into one file
 * in place of its transpiled module: a fresh example process is ready in about 0.4 s instead of 0.75 s (resolving
 * and loading a few hundred CommonJS modules is most of a start), and each trial of the demo starts two. It stays
 * at the module's own path, so the paths its modules read beside themselves (`new URL('./protos/…',
 * import.meta.url)`) still resolve within this build. CommonJS dependencies bundled into an ES module need a
 * `require` (the banner gives them node's own) and, where they read files beside themselves (grpc-js's and
 * reflection's .proto files), their own `__dirname` and `__filename`: each such module gets them, as paths
 * relative to the bundle, so a build moved with its package still finds them.
 */
async function bundleServiceEntry(root, staging, buildDir, build) {
  const entry = join(root, `${SERVICE_ENTRY}.ts`);
  if (!existsSync(entry)) return;
  const outfile = join(staging, `${SERVICE_ENTRY}.js`);
  const realModules = realpathSync(join(root, 'node_modules'));
  // Where this build reaches the package's node_modules: the package's own for builds inside it, else the link in the build.
  const modulesOfBuild = buildDir === join(root, '.build') ? join(root, 'node_modules') : join(staging, 'node_modules');
  const ownPaths = {
    name: 'own-dirname',
    setup(plugin) {
      plugin.onLoad({ filter: /[\\/]node_modules[\\/].*\.c?js$/ }, (args) => {
        const text = readFileSync(args.path, 'utf8');
        if (!/\b__(dirname|filename)\b/.test(text) || !args.path.startsWith(realModules)) return undefined;
        const fromBundle = relative(dirname(outfile), join(modulesOfBuild, relative(realModules, args.path)));
        const prelude = `var __filename = __bundlePath(${JSON.stringify(fromBundle)}), __dirname = __bundleDirname(__filename);\n`;
        return { contents: prelude + text, loader: 'js' };
      });
    },
  };
  await build({
    entryPoints: [entry],
    outfile,
    allowOverwrite: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    logLevel: 'error',
    plugins: [ownPaths],
    banner: {
      js: [
        "import { createRequire as __bundleRequire } from 'node:module';",
        "import { dirname as __bundleDirname, join as __bundleJoin } from 'node:path';",
        "import { fileURLToPath as __bundleFileOf } from 'node:url';",
        'const require = __bundleRequire(import.meta.url);',
        'const __bundlePath = (path) => __bundleJoin(__bundleDirname(__bundleFileOf(import.meta.url)), path);',
      ].join(' '),
    },
  });
}

/**
 * The folder holding the compiled sources of `root` (same layout: `cli/main.js` for `cli/main.ts`), built
 * now if these exact sources have no build yet.
 */
export async function compiledBuild(root, host = defaultHost()) {
  const esbuildVersion = JSON.parse(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8')).version;
  const files = sourceFiles(root);
  const dir = buildsDir(root, host);
  const name = buildName(root, files, esbuildVersion);
  const out = join(dir, name);
  if (existsSync(out)) {
    // The folder above is verified, so only a trusted user put this here; checked anyway, as a second door.
    verifyFolder(out, [host.uid, 0, statSync(dir).uid], 0o022, 'Remove it; the next start builds it again.');
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
    await build({
      entryPoints: files.filter((f) => f.endsWith('.ts')),
      outdir: staging,
      outbase: root,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      sourcemap: true,
      logLevel: 'error',
    });
    await bundleServiceEntry(root, staging, dir, build);
    // Protocol Buffers definitions are read at run time (gRPC services load them beside their module).
    for (const file of files.filter((f) => f.endsWith('.proto'))) {
      mkdirSync(dirname(join(staging, relative(root, file))), { recursive: true });
      copyFileSync(file, join(staging, relative(root, file)));
    }
    // What the compiled modules reach by relative path: the version (cli reads ../package.json), the CLI
    // itself (deploy commands of the demo), and dependencies when the build lives outside the package.
    copyFileSync(join(root, 'package.json'), join(staging, 'package.json'));
    symlinkSync(join(root, 'bin'), join(staging, 'bin'));
    if (dir !== join(root, '.build')) symlinkSync(join(root, 'node_modules'), join(staging, 'node_modules'));
    withoutSharedWrite(staging);
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
