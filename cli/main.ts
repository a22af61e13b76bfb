/**
 * The composition root: the only place that parses arguments, picks
 * backends and turns errors into exit codes.
 */
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { TandemError, errorMessage } from '../core/index.js';
import { ExitCode, exitCodeFor } from './exit-codes.js';
import { processContext, type CliContext, type GlobalOptions } from './cli-context.js';
import * as validate from './commands/validate.js';
import * as schema from './commands/schema.js';
import * as storeInit from './commands/store-init.js';
import * as exampleStack from './commands/example-stack.js';
import * as record from './commands/record.js';
import * as corpus from './commands/corpus.js';
import * as replay from './commands/replay.js';
import * as report from './commands/report.js';
import * as calibrate from './commands/calibrate.js';
import * as fuzz from './commands/fuzz.js';
import * as runCommand from './commands/run.js';
import * as submit from './commands/submit.js';
import * as worker from './commands/worker.js';
import * as status from './commands/status.js';
import * as cancel from './commands/cancel.js';
import * as wait from './commands/wait.js';
import * as affected from './commands/affected.js';
import * as bisect from './commands/bisect.js';
import * as ingest from './commands/ingest.js';
import * as triggersCommand from './commands/triggers.js';
import * as latticeCommand from './commands/lattice.js';
import * as latticeValidate from './commands/lattice-validate.js';
import * as demo from './commands/demo.js';
import * as capacity from './commands/capacity.js';

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
      'and any path under a dependency\'s writePaths (matched decoded and normalized: /%61dmin, //admin, /x/../admin are /admin).',
    ].join('\n'),
  );

  const globals = (command: Command): GlobalOptions => command.optsWithGlobals<GlobalOptions>();

  program
    .command('validate')
    .description('check the config; print every problem with its path (exit 3 when invalid)')
    .action(async (_options, command: Command) => setExit(await validate.run(globals(command), ctx)));

  program
    .command('schema')
    .description('print the JSON Schema of the config file, for editors')
    .addOption(new Option('--markdown', 'print the Markdown config reference instead'))
    .action(async (options: schema.SchemaOptions) => setExit(await schema.run(options, ctx)));

  const store = program.command('store').description('manage the configured store');
  store
    .command('init')
    .description('create the store directories or ClickHouse tables (idempotent)')
    .action(async (_options, command: Command) => setExit(await storeInit.run(globals(command), ctx)));

  program
    .command('example-stack')
    .description('start the example serving stack (query, ranking, features, gateway, prediction shards) until Ctrl-C')
    .option('--service <name>', 'run only this service, configured from the environment (for deploy commands)')
    .option('--port <port>', 'with --service: port to listen on (default: any free port)')
    .option('--faults <list>', 'faults of ranking, e.g. "latency=5,malformed-tensor=rank-video,latent-timeout,error-rate=0.02"')
    .option('--shards <n>', 'prediction shards', '4')
    .option('--isolate <services>', 'comma-separated services to run as child processes')
    .option('--traffic <rate>', 'play production traffic at this many requests per second, then stop')
    .option('--duration <duration>', 'with --traffic: for how long', '30s')
    .action(async (_options, command: Command) => setExit(await exampleStack.run(command.optsWithGlobals<exampleStack.ExampleStackOptions>(), ctx)));

  program
    .command('record')
    .description('record production requests through a sampling reverse proxy (sidecar) until Ctrl-C')
    .requiredOption('--tier <tier>', 'tier the requests belong to')
    .requiredOption('--listen <[host:]port>', 'where the sidecar listens (host defaults to 127.0.0.1)')
    .requiredOption('--upstream <url>', 'the service to forward to; a path in it prefixes every forwarded path (the corpus keeps the path clients sent)')
    .option('--rate <share>', 'share of requests to record, in (0, 1] (default: recorder.rate from the config)')
    .option('--sticky-header <name>', 'keep or drop whole sessions by hashing this header')
    .option('--sticky-query <name>', 'keep or drop whole sessions by hashing this query parameter')
    .option('--admin <[host:]port>', 'where /metrics and /healthz are served (default: a free port)')
    .action(async (_options, command: Command) => setExit(await record.run(command.optsWithGlobals<record.RecordOptions>(), ctx)));

  const corpusCommand = program.command('corpus').description('list, show, import, export and prune recorded corpora');
  corpusCommand
    .command('ls')
    .description('per tier: records, time range, bytes')
    .action(async (_options, command: Command) => setExit(await corpus.ls(globals(command), ctx)));
  corpusCommand
    .command('show <tier>')
    .description('print recorded requests of a tier')
    .option('--since <duration>', 'only this recent (e.g. 4h)')
    .option('--limit <n>', 'at most this many', '10')
    .action(async (tier: string, _options, command: Command) => setExit(await corpus.show(tier, command.optsWithGlobals<corpus.ShowOptions>(), ctx)));
  corpusCommand
    .command('import <file>')
    .description('import a HAR or GoReplay (.gor) file; bad entries are reported and skipped')
    .requiredOption('--tier <tier>', 'tier to import into')
    .option('--format <format>', 'har or gor (default: from the file name)')
    .option('--rebase', 'shift times so the newest request is now (old captures fall outside the lookback otherwise)')
    .action(async (file: string, _options, command: Command) => setExit(await corpus.importFile(file, command.optsWithGlobals<corpus.ImportOptions>(), ctx)));
  corpusCommand
    .command('export <tier>')
    .description('write a tier as NDJSON (stdout, or --out FILE created mode 0600)')
    .option('--since <duration>', 'only this recent')
    .option('--out <file>', 'write here instead of stdout')
    .action(async (tier: string, _options, command: Command) => setExit(await corpus.exportTier(tier, command.optsWithGlobals<corpus.ExportOptions>(), ctx)));
  corpusCommand
    .command('prune')
    .description('delete records older than a duration (default: the longest workload lookback, at least 4h)')
    .option('--tier <tier>', 'only this tier')
    .option('--older-than <duration>', 'e.g. 4h, 7d')
    .action(async (_options, command: Command) => setExit(await corpus.prune(command.optsWithGlobals<corpus.PruneOptions>(), ctx)));

  program
    .command('replay')
    .description('replay the workload\'s corpus into control and treatment in paired trials, with a live progress line')
    .requiredOption('--workload <name>', 'workload from the config')
    .option('--control <url>', 'a running control deployment (with --treatment)')
    .option('--treatment <url>', 'a running treatment deployment (with --control)')
    .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
    .option('--treatment-revision <rev>', 'substituted for {revision} in the treatment deploy command')
    .option('--seed <n>', 'seed of every random choice (default: random, printed)')
    .option('--trials <n>', 'exactly this many trials (default trials.max)')
    .option('--rate <pairs/s>', 'override replay.rate')
    .option('--warmup <duration>', 'override trials.warmup')
    .option('--measure <duration>', 'override trials.measure')
    .option('--control-prime <url>', "a second control deployment, for the response comparison's noise cancellation")
    .action(async (_options, command: Command) => setExit(await replay.run(command.optsWithGlobals<replay.ReplayOptions>(), ctx)));

  program
    .command('report')
    .description('judge a stored experiment and render its report; exit 0 passed, 1 regressed, 4 no verdict, 5 inconclusive')
    .argument('<experiment>', 'experiment id')
    .addOption(new Option('--format <format>', 'report format').choices(['json', 'md', 'html']))
    .option('--out <file>', 'write the report to a file instead of stdout')
    .option('--no-calibration', "ignore the workload's A/A calibration")
    .action(async (experimentId: string, _options, command: Command) => setExit(await report.run(experimentId, command.optsWithGlobals<report.ReportOptions>(), ctx)));

  program
    .command('calibrate')
    .description('A/A calibration: control against control; reports noise floor, slot bias and false-positive rate per metric')
    .requiredOption('--workload <name>', 'workload from the config')
    .option('--control <url>', 'a running control deployment (used for both arms)')
    .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
    .option('--trials <n>', 'A/A trials (default: 3 x trials.count, at least 10)')
    .option('--subsets <n>', 'seeded subsets judged for the false-positive rate', '200')
    .option('--seed <n>', 'seed of every random choice')
    .option('--rate <pairs/s>', 'override replay.rate')
    .option('--warmup <duration>', 'override trials.warmup')
    .option('--measure <duration>', 'override trials.measure')
    .action(async (_options, command: Command) => setExit(await calibrate.run(command.optsWithGlobals<calibrate.CalibrateOptions>(), ctx)));

  program
    .command('fuzz')
    .description("single-SUT fuzzing: mutated corpus records against one instance; exit 1 on 5xx, crashes, timeouts or property violations")
    .requiredOption('--workload <name>', 'workload whose corpus is mutated')
    .requiredOption('--url <url>', 'the one instance under test')
    .option('--max-requests <n>', 'at most this many requests', '500')
    .option('--duration <duration>', 'at most this long', '60s')
    .option('--seed <n>', 'seed of the mutations', '1')
    .option('--concurrency <n>', 'requests in flight', '8')
    .option('--health-path <path>', 'probed after a dropped connection to tell a crash', '/healthz')
    .action(async (_options, command: Command) => setExit(await fuzz.run(command.optsWithGlobals<fuzz.FuzzCommandOptions>(), ctx)));

  const experimentFlags = (command: Command): Command =>
    command
      .option('--control <url>', 'a running control deployment (with --treatment)')
      .option('--treatment <url>', 'a running treatment deployment (with --control)')
      .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
      .option('--treatment-revision <rev>', 'substituted for {revision} in the treatment deploy command')
      .addOption(new Option('--stage <stage>', 'lifecycle stage: orders the queue and is part of the dedupe key').choices(['diff', 'land', 'release', 'periodic']))
      .option('--change <id>', 'the change under test (diff, commit): the same change, workload and stage give the same experiment')
      .option('--seed <n>', 'seed of every random choice')
      .option('--trials <n>', 'a fixed horizon: exactly n trials, one look at the end')
      .option('--min-trials <n>', 'override trials.min: the first look of the sequential judge')
      .option('--max-trials <n>', 'override trials.max: undecided then is inconclusive')
      .option('--budget <duration>', 'override trials.budget: no trial starts after this much wall time')
      .addOption(new Option('--on-inconclusive <what>', 'what an undecided experiment becomes at this stage (default: harness.onInconclusive)').choices(['pass', 'fail', 'inconclusive']))
      .option('--rate <pairs/s>', 'override replay.rate')
      .option('--warmup <duration>', 'override trials.warmup')
      .option('--measure <duration>', 'override trials.measure')
      .option('--aa', 'an A/A calibration (control against control) instead of an experiment');

  experimentFlags(program.command('run').description('run one experiment now in this process: queued → running → a sequential look after each trial → verdict and report; exit 0 passed, 1 regressed, 2 cancelled/failed, 4 no verdict, 5 inconclusive').argument('<workload>', 'workload from the config'))
    .addOption(new Option('--format <format>', 'report format').choices(['json', 'md', 'html']))
    .option('--every <duration>', 'repeat on this schedule (periodic A/A with --aa) until interrupted')
    .option('--times <n>', 'with --every: stop after this many runs')
    .option('--noop', 'a no-op experiment: exercises the lifecycle and the store only')
    .action(async (workload: string, _options, command: Command) => setExit(await runCommand.run(workload, command.optsWithGlobals<runCommand.RunOptions>(), ctx)));

  experimentFlags(program.command('submit').description('submit experiments for a change: one workload, or every workload --base..--head selects; duplicates of the same change dedupe').argument('[workload]', 'workload from the config (or use --base)'))
    .option('--base <rev>', 'select workloads by what changed since this revision')
    .option('--head <rev>', 'the revision of the change (default HEAD); the arms deploy --base as control and --head as treatment unless --control-revision/--treatment-revision say otherwise')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .option('--wait', 'wait for the verdicts; exit 0 passed, 1 regression, 2 cancelled/failed, 4 no verdict, 5 inconclusive (always, with the inline queue)')
    .option('--noop', 'a no-op experiment: exercises the queue only')
    .option('--rerun', 'run the change again even if its latest attempt has a verdict (a failed, cancelled or deferred one is always rerun)')
    .action(async (workload: string | undefined, _options, command: Command) => setExit(await submit.run(workload, command.optsWithGlobals<submit.SubmitOptions>(), ctx)));

  program
    .command('worker')
    .description('process experiments from the BullMQ queue until SIGINT/SIGTERM')
    .option('--concurrency <n>', 'experiments this worker runs at once (default: queue.concurrency)')
    .action(async (_options, command: Command) => setExit(await worker.run(command.optsWithGlobals<worker.WorkerOptions>(), ctx)));

  program
    .command('status')
    .description('the newest experiments, or one with its trials, verdict and events')
    .argument('[experiment]', 'experiment id')
    .option('--workload <name>', 'only this workload')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (id: string | undefined, _options, command: Command) => setExit(await status.run(id, command.optsWithGlobals<status.StatusOptions>(), ctx)));

  program
    .command('cancel')
    .description('cancel an experiment: removed when queued, stopped within a second when running')
    .argument('<experiment>', 'experiment id')
    .option('--reason <text>', 'recorded with the cancellation')
    .action(async (id: string, _options, command: Command) => setExit(await cancel.run(id, command.optsWithGlobals<cancel.CancelOptions>(), ctx)));

  program
    .command('wait')
    .description('wait for an experiment to end; exit 0 passed, 1 regressed, 2 cancelled/failed/timeout, 4 no verdict, 5 inconclusive')
    .argument('<experiment>', 'experiment id')
    .option('--timeout <duration>', 'give up after this long (default 1h)')
    .action(async (id: string, _options, command: Command) => setExit(await wait.run(id, command.optsWithGlobals<wait.WaitOptions>(), ctx)));

  program
    .command('affected')
    .description('the workloads a change selects (build graph, global inputs, config consumption) and why; the rest with the reason')
    .requiredOption('--base <rev>', 'the revision the change starts from')
    .option('--head <rev>', 'the revision of the change (default HEAD)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) => setExit(await affected.run(command.optsWithGlobals<affected.AffectedOptions>(), ctx)));

  program
    .command('bisect')
    .description('find the first bad revision: each step an experiment of the candidate against the good revision')
    .requiredOption('--workload <name>', 'workload whose deploy template takes {revision}')
    .requiredOption('--good <rev>', 'a revision without the regression')
    .option('--bad <rev>', 'a revision with it (default HEAD)')
    .option('--metric <name>', 'the regressed metric to chase (default: the experiment verdict)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) => setExit(await bisect.run(command.optsWithGlobals<bisect.BisectOptions>(), ctx)));

  program
    .command('bisect-step')
    .description('judge the checked-out revision for `git bisect run` (exit 0 good, 1 bad, 125 skip)')
    .requiredOption('--workload <name>', 'workload whose deploy template takes {revision}')
    .requiredOption('--good <rev>', 'a revision without the regression')
    .option('--metric <name>', 'the regressed metric to chase')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) => setExit(await bisect.step(command.optsWithGlobals<bisect.BisectOptions>(), ctx)));

  program
    .command('ingest')
    .description('HTTP ingest of the config consumption index (POST /config-reads) until Ctrl-C')
    .option('--listen <[host:]port>', 'address to listen on (default 127.0.0.1:7400)')
    .option('--token-env <VAR>', 'environment variable holding the bearer token (default TANDEM_INGEST_TOKEN)')
    .action(async (_options, command: Command) => setExit(await ingest.run(command.optsWithGlobals<ingest.IngestOptions>(), ctx)));

  program
    .command('triggers')
    .description('trigger selection tools')
    .command('evaluate')
    .description("replay recent config changes offline: how many the setting-level refinement suppresses, and how many of those settings were read later (FIRE's evaluation)")
    .option('--since <duration>', 'how far back (default 30d)')
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .action(async (_options, command: Command) => setExit(await triggersCommand.evaluate(command.optsWithGlobals<triggersCommand.EvaluateOptions>(), ctx)));

  program
    .command('capacity')
    .description("capacity test: ramp replay to a multiple of the baseline with the lattice's controller live; quality, stability, states and recovery per bucket")
    .requiredOption('--workload <name>', 'workload whose corpus and control deployment are used')
    .requiredOption('--lattice <name>', 'lattice whose states and quality target apply')
    .option('--peak <multiple>', 'top of the ramp as a multiple of the baseline (default 2)')
    .option('--baseline <req/s>', 'the 1x rate (default replay.rate)')
    .option('--lead <duration>', 'time at the baseline first (default 1m)')
    .option('--ramp <duration>', 'ramp duration (default 5m)')
    .option('--hold <duration>', 'time at the peak (default 5m)')
    .option('--cooldown <duration>', 'time back at the baseline (default 5m)')
    .option('--bucket <duration>', 'timeline resolution (default 1m)')
    .option('--controller <url>', 'the lattice controller the services coordinate with (omit for an uncoordinated run)')
    .option('--url <url>', 'the deployment under test (default: the workload control URL)')
    .option('--html <file>', 'also write the HTML report (traffic, load-factor and state on one time axis)')
    .action(async (_options, command: Command) => setExit(await capacity.run(command.optsWithGlobals<capacity.CapacityOptions>(), ctx)));

  const latticeGroup = program.command('lattice').description('degradation lattices (HiLO)');
  latticeGroup
    .command('validate')
    .description('run each candidate state as a paired experiment (treatment forced by the test-scenario header) and check capacity/quality monotonicity and targets')
    .requiredOption('--lattice <name>', 'lattice from the config')
    .requiredOption('--workload <name>', 'workload whose control build serves both arms')
    .option('--states <names>', 'comma-separated states (default: all but the first)')
    .option('--control <url>', 'a running control deployment (used for both arms)')
    .option('--trials <n>', 'exactly this many trials (default trials.max)')
    .option('--header <name>', 'test-scenario header (default x-tandem-levels)')
    .option('--base <rev>', "validate the states this change altered (from the base revision; like 'tandem affected')")
    .option('--head <rev>', 'head revision of the change (default HEAD)')
    .option('--repo <dir>', 'git repository of the change (default the working directory)')
    .action(async (_options, command: Command) => setExit(await latticeValidate.validate(command.optsWithGlobals<latticeValidate.ValidateOptions>(), ctx)));
  latticeGroup
    .command('serve')
    .description("run a lattice's controller: services report load-factors and take their levels; every decision is stored")
    .requiredOption('--lattice <name>', 'lattice from the config')
    .option('--listen <[host:]port>', 'address to listen on (default 127.0.0.1:7300)')
    .option('--token-env <VAR>', 'environment variable holding the bearer token for load-factor reports (default TANDEM_CONTROLLER_TOKEN)')
    .action(async (_options, command: Command) => setExit(await latticeCommand.serve(command.optsWithGlobals<latticeCommand.LatticeServeOptions>(), ctx)));

  program
    .command('demo')
    .description('the whole platform on the example stack: record, three experiments, affected workloads, a capacity test; a summary and HTML reports')
    .option('--dir <dir>', 'where the demo writes its config, store and reports (default .tandem/demo)')
    .option('--store <kind>', 'local (default) or clickhouse')
    .option('--clickhouse-url <url>', 'ClickHouse HTTP URL with --store clickhouse (default http://127.0.0.1:8123)')
    .option('--queue <kind>', 'inline (default) or bullmq')
    .option('--redis-url <url>', 'Redis URL with --queue bullmq (default redis://127.0.0.1:6379)')
    .option('--no-worker', 'with --queue bullmq: leave experiments to `tandem worker` processes')
    .option('--quick', 'shorter recording and trials (tests)')
    .action(async (_options, command: Command) => setExit(await demo.run(command.optsWithGlobals<demo.DemoOptions>(), ctx)));

  return program;
}

/** Run the CLI; returns the exit code instead of exiting, so tests can call it. */
export async function main(argv: readonly string[], ctx: CliContext = processContext()): Promise<number> {
  let exitCode: number = ExitCode.ok;
  const program = buildProgram(ctx, (code) => (exitCode = code));
  if (argv.length <= 2) {
    ctx.err(program.helpInformation());
    return ExitCode.badInput;
  }
  try {
    await program.parseAsync([...argv]);
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are successful exits; every other parse error is bad input.
      return error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help' ? ExitCode.ok : ExitCode.badInput;
    }
    reportError(error, ctx, argv.includes('--verbose'));
    return exitCodeFor(error);
  }
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
