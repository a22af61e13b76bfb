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
  { name: 'demo', summary: 'the whole platform in one command', issue: 12 },
];
