/**
 * A bench's flags are input: a value that is not a number in range ends the run with exit code 3 and a message
 * naming the flag and what it got, before anything starts. (`npm run bench -- capacity --baseline abc` ran both
 * capacity tests at a rate of NaN and printed figures of null with exit code 0.) Every case runs the bench's own `run`
 * with its flags, all of them in one process (support/bench-flag-driver.ts); two run `bench/run.ts` as npm does, for
 * its exit code and wording.
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');

function bench(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'run.ts'), ...args], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr });
    });
  });
}

const CASES: [string[], string][] = [
  [['capacity', '--baseline', 'abc'], '--baseline needs a number from 1 to 200, got "abc"'],
  [['capacity', '--hold'], '--hold needs a number from 1 to 120, got nothing'],
  [['compare', '--records', '5'], '--records needs a whole number from 160 to 1000000, got "5"'],
  [['executor', '--experiments', ''], '--experiments needs a whole number from 1 to 1000000, got ""'],
  [['paired-noise', '--cpus', '1;touch /tmp/x'], '--cpus needs a CPU list like "1" or "0-1", got "1;touch /tmp/x"'],
  [['verdict-stack', '--arm-cpus', '1;touch /tmp/x'], '--arm-cpus needs a CPU list like "1" or "0-1", got "1;touch /tmp/x"'],
  [['verdict-stack', '--arm-cpus', '1', '--start-cpus', '0'], '--start-cpus needs two CPU lists as A:B, like "0:1", got "0"'],
  [['verdict-stack', '--arm-cpus', '1', '--start-cpus', '0:1:2'], '--start-cpus needs two CPU lists as A:B, like "0:1", got "0:1:2"'],
  [['verdict-stack', '--start-cpus', '0:1'], '--start-cpus needs --arm-cpus: the arms are moved onto them once started'],
  [['verdict-stack', '--arm-cpus', '1', '--prestart', '0'], '--prestart needs two CPU lists as A:B, like "0:1", got "0"'],
  [['verdict-stack', '--prestart', '0:0'], '--prestart needs --arm-cpus: the arms started early are moved onto them when their trial begins'],
  [['verdict-stack', '--arm', 'demo;ls'], '--arm takes cli, demo or plain, got "demo;ls"'],
  [['verdict-stack', '--arm'], '--arm takes cli, demo or plain, got ""'],
  [['verdict-stack', '--arm', 'plain', '--step', 'work=1;ls'], '--step with --arm plain takes work=F (the scorer\'s work, e.g. work=1.08), got "work=1;ls"'],
  [['verdict', '--only', 'fleet;ls'], '--only takes fleet or false-pass, got "fleet;ls"'],
  [['paired-noise', '--cross-rounds', '0'], '--cross-rounds needs a whole number from 1 to 1024, got "0"'],
  [['paired-noise', '--treatment-faults', 'latency=much'], 'fault "latency" needs a number'],
  [['paired-noise', '--treatment-faults'], '--treatment-faults needs a list of faults'],
  [['paired-noise', '--treatment-faults', ' '], '--treatment-faults needs a list of faults'],
  [['paired-noise', '--alternate-nice', '0'], '--alternate-nice needs a niceness other than 0'],
  [['paired-noise', '--alternate-nice', '-21'], '--alternate-nice needs a whole number from -20 to 19, got "-21"'],
  [['paired-noise', '--alternate-nice', '-5.5'], '--alternate-nice needs a whole number from -20 to 19, got "-5.5"'],
  [['paired-noise', '--processes', '0'], '--processes needs a whole number from 1 to 8, got "0"'],
  [['paired-noise', '--inference', 'grpc;ls'], '--inference needs http or grpc, not "grpc;ls"'],
  [['paired-noise', '--prewarm', '-1'], '--prewarm needs a whole number from 0 to 1000, got "-1"'],
  [
    ['paired-noise', '--alternate-env', 'GLIBC_TUNABLES=$(touch /tmp/x)'],
    '--alternate-env takes NAME=VALUE words (an upper-case name, a value of letters, digits and . , : = + -), got "GLIBC_TUNABLES=$(touch"',
  ],
  [['paired-noise', '--alternate-env', 'path=/tmp'], '--alternate-env takes NAME=VALUE words'],
  [['paired-noise', '--alternate-env', ''], '--alternate-env needs NAME=VALUE words'],
  [['paired-noise', '--alternate-env', 'A=1', '--alternate-nice', '5'], '--alternate-env and --alternate-nice cannot be combined'],
  [['paired-noise', '--inference'], '--inference needs http or grpc, not ""'],
  [['bh-weights'], 'name at least one store: --demo DIR'],
  [['bh-weights', '--demo'], '--demo needs a directory'],
  [['bh-weights', '--demo', '/tmp', '--demo'], '--demo needs a directory'],
  [['bh-weights', '--bogus;rm -rf /'], 'unknown argument "--bogus;rm -rf /": bh-weights takes --demo DIR, repeated'],
  [['bh-weights', '--demo', '/nonexistent-tandem-demo'], 'invalid config:\n  - config file /nonexistent-tandem-demo/tandem.config.yaml does not exist'],
  [['paired-noise', '--node-args', 'evil.js'], '--node-args takes node flags only (--name or --name=value), got "evil.js"'],
  [
    ['paired-noise', '--alternate-node-args', '--max-semi-space-size=16 --require=/tmp/x;ls'],
    '--alternate-node-args takes node flags only (--name or --name=value), got "--require=/tmp/x;ls"',
  ],
  [['paired-noise', '--alternate-node-args', ' '], '--alternate-node-args needs node flags'],
  [['paired-noise', '--node-args', '--import=tsx'], '--node-args takes no flag that loads code, got "--import=tsx"'],
  [['paired-noise', '--alternate-node-args', '--jitless', '--alternate-nice', '5'], '--alternate-node-args and --alternate-nice cannot be combined'],
];

/** Every case in one driver process: how each bench's `run` ended with the case's flags. */
function driven(cases: readonly string[][]): Promise<{ args: string[]; resolved?: true; badInput?: boolean; message?: string; printedFigures: boolean }[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', join(ROOT, 'test', 'support', 'bench-flag-driver.ts'), JSON.stringify(cases)],
      { cwd: ROOT, timeout: 120_000, maxBuffer: 16 * 1_048_576 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`the driver failed: ${error.message}\n${stderr}`));
        resolve(
          stdout
            .trim()
            .split('\n')
            .map((line) => JSON.parse(line) as never),
        );
      },
    );
  });
}

describe('bench flags', () => {
  it('refuses every bad flag before anything starts: a bad-input error naming the flag, and no figures', { timeout: 150_000 }, async () => {
    const results = await driven(CASES.map(([args]) => args));
    expect(results.map((r) => r.args)).toEqual(CASES.map(([args]) => args));
    for (const [index, [args, message]] of CASES.entries())
      expect({ args, ...results[index] }).toEqual({ args, badInput: true, message: expect.stringContaining(message), printedFigures: false });
  });

  it.concurrent.each(CASES.filter(([args]) => ['capacity', 'paired-noise'].includes(args[0]!)).slice(0, 2))(
    'npm run bench -- %j: exit 3, "%s", no figures',
    async (args, message) => {
      const result = await bench(args);
      expect(result.stderr).toContain(`bench ${args[0]}: ${message}`);
      expect(result.code).toBe(3);
      expect(result.stdout).not.toContain('"bench"');
    },
  );
});
