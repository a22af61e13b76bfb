/**
 * `npm run bench -- <name>`: runs bench/<name>.bench.ts. Every benchmark
 * measures against a baseline in the same run and ends with one JSON line:
 * {"bench":"<name>","figures":{…},"targets":{"<figure>":{"value":v,"min":m}}}
 */
import { readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { isBadInput } from '../core/errors.js';

const here = import.meta.dirname;
const available = readdirSync(here)
  .filter((file) => file.endsWith('.bench.ts'))
  .map((file) => file.slice(0, -'.bench.ts'.length))
  .sort();

const name = process.argv[2];
if (name === undefined || !available.includes(name)) {
  process.stderr.write(
    `${name === undefined ? 'name a benchmark' : `no benchmark named "${name}"`}: npm run bench -- <name>\n` +
      `available: ${available.length > 0 ? available.join(', ') : '(none yet)'}\n`,
  );
  process.exit(3);
}
const bench = (await import(pathToFileURL(join(here, `${name}.bench.ts`)).href)) as { run(args: string[]): Promise<void> };
try {
  await bench.run(process.argv.slice(3));
} catch (error) {
  // A bad flag is the caller's input: its message and exit code 3, as the CLI does; anything else is a crash.
  if (!isBadInput(error)) throw error;
  process.stderr.write(`bench ${name}: ${(error as Error).message}\n`);
  process.exit(3);
}
