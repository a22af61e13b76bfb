/** `tandem run` and `tandem submit`, which share the experiment flags. */
import { Option, type Command } from 'commander';
import type * as runCommand from '../commands/run.js';
import type * as submit from '../commands/submit.js';
import type { Registration } from './registration.js';

export function registerExperiments(program: Command, { ctx, setExit }: Registration): void {
  const experimentFlags = (command: Command): Command =>
    command
      .option('--control <url>', 'a running control deployment (with --treatment)')
      .option('--treatment <url>', 'a running treatment deployment (with --control)')
      .option('--control-revision <rev>', 'substituted for {revision} in the control deploy command')
      .option('--treatment-revision <rev>', 'substituted for {revision} in the treatment deploy command')
      .addOption(
        new Option('--stage <stage>', 'lifecycle stage: orders the queue and is part of the dedupe key').choices(['diff', 'land', 'release', 'periodic']),
      )
      .option('--change <id>', 'the change under test (diff, commit): the same change, workload and stage give the same experiment')
      .option('--seed <n>', 'seed of every random choice')
      .option('--trials <n>', 'a fixed horizon: exactly n trials, one look at the end')
      .option('--min-trials <n>', 'override trials.min: the first look of the sequential judge')
      .option('--max-trials <n>', 'override trials.max: undecided then is inconclusive')
      .option('--budget <duration>', 'override trials.budget: no trial starts after this much wall time')
      .addOption(
        new Option('--on-inconclusive <what>', 'what an undecided experiment becomes at this stage (default: harness.onInconclusive)').choices([
          'pass',
          'fail',
          'inconclusive',
        ]),
      )
      .option('--rate <pairs/s>', 'override replay.rate')
      .option('--warmup <duration>', 'override trials.warmup')
      .option('--measure <duration>', 'override trials.measure')
      .option('--aa', 'an A/A calibration (control against control) instead of an experiment');

  experimentFlags(
    program
      .command('run')
      .description(
        'run one experiment now in this process: queued → running → a sequential look after each trial → verdict and report; exit 0 passed, 1 regressed, 2 cancelled/failed, 4 no verdict, 5 inconclusive',
      )
      .argument('<workload>', 'workload from the config'),
  )
    .addOption(
      new Option('--format <format>', 'report format (default: text on a terminal, md otherwise; json with --json)').choices(['json', 'md', 'html', 'text']),
    )
    .option('--every <duration>', 'repeat on this schedule (periodic A/A with --aa) until interrupted')
    .option('--times <n>', 'with --every: stop after this many runs')
    .option('--noop', 'a no-op experiment: exercises the lifecycle and the store only')
    .action(async (workload: string, _options, command: Command) =>
      setExit(await (await import('../commands/run.js')).run(workload, command.optsWithGlobals<runCommand.RunOptions>(), ctx)),
    );

  experimentFlags(
    program
      .command('submit')
      .description('submit experiments for a change: one workload, or every workload --base..--head selects; duplicates of the same change dedupe')
      .argument('[workload]', 'workload from the config (or use --base)'),
  )
    .option('--base <rev>', 'select workloads by what changed since this revision')
    .option(
      '--head <rev>',
      'the revision of the change (default HEAD); the arms deploy --base as control and --head as treatment unless --control-revision/--treatment-revision say otherwise',
    )
    .option('--repo <dir>', 'the git repository (default: the working directory)')
    .option('--wait', 'wait for the verdicts; exit 0 passed, 1 regression, 2 cancelled/failed, 4 no verdict, 5 inconclusive (always, with the inline queue)')
    .option('--noop', 'a no-op experiment: exercises the queue only')
    .option('--rerun', 'run the change again even if its latest attempt has a verdict (a failed, cancelled or deferred one is always rerun)')
    .action(async (workload: string | undefined, _options, command: Command) =>
      setExit(await (await import('../commands/submit.js')).run(workload, command.optsWithGlobals<submit.SubmitOptions>(), ctx)),
    );
}
