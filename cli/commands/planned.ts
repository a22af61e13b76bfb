/**
 * Commands whose capabilities are still being built. They are listed so
 * `tandem --help` shows the whole tool, and they refuse honestly (exit 2)
 * rather than pretending to work.
 */
export interface PlannedCommand {
  readonly name: string;
  readonly summary: string;
  /** Issue that builds it. */
  readonly issue: number;
}

export const PLANNED_COMMANDS: readonly PlannedCommand[] = [
  { name: 'run', summary: 'run one experiment now', issue: 9 },
  { name: 'worker', summary: 'process queued experiments', issue: 9 },
  { name: 'status', summary: 'show experiments and their states', issue: 9 },
  { name: 'cancel', summary: 'cancel an experiment', issue: 9 },
  { name: 'wait', summary: 'wait for an experiment to finish', issue: 9 },
  { name: 'submit', summary: 'select and submit experiments for a change', issue: 10 },
  { name: 'affected', summary: 'list workloads a change can reach', issue: 10 },
  { name: 'triggers', summary: 'evaluate trigger selection offline', issue: 10 },
  { name: 'bisect', summary: 'find the first bad revision in a range', issue: 10 },
  { name: 'bisect-step', summary: 'one step of `git bisect run`', issue: 10 },
  { name: 'capacity', summary: 'capacity test of a degradation lattice', issue: 11 },
  { name: 'demo', summary: 'the whole platform in one command', issue: 12 },
];
