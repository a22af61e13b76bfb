/**
 * `node examples/notes/run.mjs --port N (--version v1|v2 | --revision REV [--repo DIR])`:
 * the notes service. With --revision, the version is what the repository's
 * `notes-version` file says at that revision (read with `git show`, no
 * checkout, no shell), as a deploy script building a revision would.
 */
import { execFileSync } from 'node:child_process';
import { startNotes, type NotesVersion } from './notes-service.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};

function versionOf(): NotesVersion {
  const revision = flag('revision');
  const text =
    revision !== undefined && revision !== ''
      ? execFileSync('git', ['show', `${revision}:notes-version`], { cwd: flag('repo') ?? process.cwd(), encoding: 'utf8' }).trim()
      : (flag('version') ?? 'v1');
  if (text !== 'v1' && text !== 'v2') throw new Error(`notes-version must be v1 or v2, got ${JSON.stringify(text.slice(0, 20))}`);
  return text;
}

const port = Number(flag('port') ?? 0);
if (!Number.isInteger(port) || port < 0 || port > 65_535) throw new Error(`--port must be a port number, got ${flag('port')}`);
const version = versionOf();
const { url, server } = await startNotes(version, port);
process.stdout.write(`notes ${version} listening on ${url}\n`);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
