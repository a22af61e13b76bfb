/** `tandem report`: judge a stored experiment and render its report. */
import { Option, type Command } from 'commander';
import type * as report from '../commands/report.js';
import type { Registration } from './registration.js';

export function registerReport(program: Command, { ctx, setExit }: Registration): void {
  program
    .command('report')
    .description('judge a stored experiment and render its report; exit 0 passed, 1 regressed, 4 no verdict, 5 inconclusive')
    .argument('<experiment>', 'experiment id')
    .addOption(
      new Option('--format <format>', 'report format (default: text on a terminal, md otherwise; json with --json)').choices(['json', 'md', 'html', 'text']),
    )
    .option('--out <file>', 'write the report to a file instead of stdout')
    .option('--no-calibration', "ignore the workload's A/A calibration")
    .action(async (experimentId: string, _options, command: Command) =>
      setExit(await (await import('../commands/report.js')).run(experimentId, command.optsWithGlobals<report.ReportOptions>(), ctx)),
    );
}
