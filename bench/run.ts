/**
 * `npm run bench -- <name>`: runs bench/<name>.bench.ts. Every benchmark
 * measures against a baseline in the same run and ends with one JSON line:
 * {"bench":"<name>","figures":{…},"targets":{"<figure>":{"value":v,"min":m}}}
 */
import { readdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

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
await bench.run(process.argv.slice(3));
