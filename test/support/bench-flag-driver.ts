/**
 * Runs many benches' bad-flag cases in one process (test/hostile/bench-flags.test.ts): each bench module is imported
 * once and its `run` called with the case's flags, as bench/run.ts does; one JSON line per case says how it ended and
 * whether a figures line was printed. A process per case spent most of the test's time loading the same modules.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { isBadInput } from '../../core/errors.js';

const cases = JSON.parse(process.argv[2] ?? '[]') as string[][];
const benchDir = join(import.meta.dirname, '..', '..', 'bench');
const write = process.stdout.write.bind(process.stdout);
for (const [name, ...args] of cases) {
  let printed = '';
  // What the bench prints is kept, not shown: a figures line before the flag was refused is a failure of the case.
  process.stdout.write = ((chunk: string | Uint8Array) => ((printed += String(chunk)), true)) as typeof process.stdout.write;
  const log = console.log;
  console.log = (...parts: unknown[]) => void (printed += `${parts.join(' ')}\n`);
  let outcome: { resolved?: true; badInput?: boolean; message?: string };
  try {
    const bench = (await import(pathToFileURL(join(benchDir, `${name}.bench.ts`)).href)) as { run(args: string[]): Promise<void> };
    await bench.run(args);
    outcome = { resolved: true };
  } catch (error) {
    outcome = { badInput: isBadInput(error), message: (error as Error).message };
  } finally {
    process.stdout.write = write;
    console.log = log;
  }
  write(`${JSON.stringify({ args: [name, ...args], ...outcome, printedFigures: printed.includes('"bench"') })}\n`);
}
