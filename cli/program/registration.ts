/**
 * What every command registration needs from the composition root (cli/main.ts). A registration names its
 * command, options and help; the command's module is imported only when the command runs, so `--help` and
 * every other command never load it (nor the ClickHouse client, BullMQ or Playwright behind it).
 */
import type { Command } from 'commander';
import type { CliContext, GlobalOptions } from '../cli-context.js';

export interface Registration {
  readonly ctx: CliContext;
  /** Receives the command's exit code. */
  readonly setExit: (code: number) => void;
  /** The global options (--config, --json, --verbose) as the command sees them. */
  readonly globals: (command: Command) => GlobalOptions;
}
