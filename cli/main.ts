/**
 * The composition root: the only place that parses arguments, picks
 * backends and turns errors into exit codes.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError, TandemError, errorMessage } from '../core/errors.js';
import { escapeControls } from '../core/control-characters.js';
import { fileLawCache, lawCacheDir, useLawCache } from '../harness/judge/law-cache.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { processContext, type CliContext, type GlobalOptions } from './cli-context.js';
import type { Registration } from './program/registration.js';
import { registerConfig } from './program/config.js';
import { registerExampleStack } from './program/example-stack.js';
import { registerRecord } from './program/record.js';
import { registerCollect } from './program/collect.js';
import { registerCorpus } from './program/corpus.js';
import { registerReplay } from './program/replay.js';
import { registerReport } from './program/report.js';
import { registerCalibrate } from './program/calibrate.js';
import { registerFuzz } from './program/fuzz.js';
import { registerExperiments } from './program/experiments.js';
import { registerWorker } from './program/worker.js';
import { registerStatus } from './program/status.js';
import { registerCancel } from './program/cancel.js';
import { registerWait } from './program/wait.js';
import { registerAffected } from './program/affected.js';
import { registerBisect } from './program/bisect.js';
import { registerIngest } from './program/ingest.js';
import { registerTriggers } from './program/triggers.js';
import { registerCapacity } from './program/capacity.js';
import { registerLattice } from './program/lattice.js';
import { registerDemo } from './program/demo.js';
import { registerServe } from './program/serve.js';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/** Build the program; `setExit` receives each command's exit code. */
export function buildProgram(ctx: CliContext, setExit: (code: number) => void): Command {
  const program = new Command('tandem')
    .description('Paired replay of production traffic against control and treatment, with guardrails and verdicts.')
    .version(VERSION)
    .option('-c, --config <file>', 'config file (default: tandem.config.yaml, .yml or .json in the working directory)')
    .option('--json', 'machine-readable output')
    .option('--verbose', 'show stack traces and causes of errors')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({ writeOut: (text) => ctx.out(text), writeErr: (text) => ctx.err(text) });
  program.addHelpText(
    'after',
    [
      '',
      'Exit codes: 0 ok, 1 the verdict says regression, 2 cancelled or runtime failure, 3 bad input or config, 4 no verdict, 5 inconclusive.',
      "Writes (the router's writes: block | tag | allow): any method but GET, HEAD, OPTIONS and TRACE (RFC 9110 §9.2.1),",
      'a safe method with X-HTTP-Method-Override, X-HTTP-Method, X-Method-Override or ?_method= naming an unsafe one,',
      "and any path under a dependency's writePaths (matched decoded and normalized: /%61dmin, //admin, /x/../admin are /admin).",
    ].join('\n'),
  );

  const registration: Registration = { ctx, setExit, globals: (command: Command): GlobalOptions => command.optsWithGlobals<GlobalOptions>() };
  registerConfig(program, registration);
  registerExampleStack(program, registration);
  registerRecord(program, registration);
  registerCollect(program, registration);
  registerCorpus(program, registration);
  registerReplay(program, registration);
  registerReport(program, registration);
  registerCalibrate(program, registration);
  registerFuzz(program, registration);
  registerExperiments(program, registration);
  registerWorker(program, registration);
  registerStatus(program, registration);
  registerCancel(program, registration);
  registerServe(program, registration);
  registerWait(program, registration);
  registerAffected(program, registration);
  registerBisect(program, registration);
  registerIngest(program, registration);
  registerTriggers(program, registration);
  registerCapacity(program, registration);
  registerLattice(program, registration);
  registerDemo(program, registration);
  return program;
}

/** Run the CLI; returns the exit code instead of exiting, so tests can call it. */
export async function main(argv: readonly string[], context: CliContext = processContext()): Promise<number> {
  // Everything printed passes here: names from repositories, recordings and stores may carry terminal escapes.
  const ctx: CliContext = { ...context, out: (text) => context.out(escapeControls(text, 'keep')), err: (text) => context.err(escapeControls(text, 'keep')) };
  let exitCode: number = ExitCode.ok;
  // Laws of the sequential looks kept between runs (harness/judge/law-cache.ts): 3–4 s of simulation per process otherwise.
  const lawDir = lawCacheDir(ctx.env);
  useLawCache(lawDir === undefined ? undefined : fileLawCache(lawDir));
  const program = buildProgram(ctx, (code) => (exitCode = code));
  if (argv.length <= 2) {
    ctx.err(program.helpInformation());
    return ExitCode.badInput;
  }
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    // Options after "--" belong to a command being wrapped, not to Tandem.
    const ours = argv.includes('--') ? argv.slice(0, argv.indexOf('--')) : argv;
    if (error instanceof CommanderError) {
      // Help and version are successful exits; every other parse error is bad input.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return ExitCode.ok;
      if (ours.includes('--json')) ctx.out(jsonError('TANDEM_ERR_USAGE', error.message.replace(/^error: /, ''), ExitCode.badInput));
      return ExitCode.badInput;
    }
    reportError(error, ctx, ours.includes('--verbose'));
    if (ours.includes('--json'))
      ctx.out(
        jsonError(
          error instanceof TandemError ? error.code : 'TANDEM_ERR',
          errorMessage(error),
          exitCodeFor(error),
          error instanceof ConfigError ? error.issues : undefined,
        ),
      );
    return exitCodeFor(error);
  }
}

/** An error as a CI reads it under --json: one JSON object on stdout (the words stay on stderr). */
function jsonError(code: string, message: string, exitCode: number, problems?: readonly string[]): string {
  return JSON.stringify({ error: { code, message, exitCode, ...(problems ? { problems } : {}) } });
}

function reportError(error: unknown, ctx: CliContext, verbose: boolean): void {
  ctx.err(`tandem: ${errorMessage(error)}`);
  if (error instanceof TandemError && error.hint) ctx.err(`  hint: ${error.hint}`);
  if (verbose) {
    let current: unknown = error;
    while (current instanceof Error) {
      ctx.err(current.stack ?? current.message);
      current = current.cause;
      if (current) ctx.err('caused by:');
    }
  } else if (!(error instanceof TandemError)) {
    ctx.err('  (an unexpected error; run again with --verbose for the stack trace)');
  }
}
