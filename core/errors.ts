/**
 * One error root with stable codes. Callers branch on `code`, never on the
 * message; the CLI maps codes to exit codes in one place (cli/exit-codes.ts).
 * docs/errors.md lists every code with how to fix it.
 */
export class TandemError extends Error {
  readonly code: string = 'TANDEM_ERR';
  /** A short instruction for the person reading the error, when there is one. */
  readonly hint: string | undefined;
  constructor(message: string, options?: ErrorOptions & { hint?: string }) {
    super(message, options);
    this.name = new.target.name;
    this.hint = options?.hint;
  }
}

/** The configuration is invalid; `issues` holds one line per problem, each naming its path. */
export class ConfigError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_CONFIG';
  constructor(
    readonly issues: readonly string[],
    readonly source = 'config',
    options?: ErrorOptions,
  ) {
    super(`invalid ${source}:\n  - ${issues.join('\n  - ')}`, options);
  }
}

/** A command-line argument or other direct user input is wrong. */
export class UsageError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_USAGE';
}

/** Input data (a corpus line, an import file, an HTTP body) could not be used. */
export class InputError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_INPUT';
}

const BAD_INPUT_CODES: ReadonlySet<string> = new Set(['TANDEM_ERR_CONFIG', 'TANDEM_ERR_USAGE', 'TANDEM_ERR_INPUT', 'TANDEM_ERR_NOT_FOUND']);

/** Whether an error is the caller's bad input (config, arguments, data, a name that does not exist): exit code 3 wherever a process exits on it. */
export function isBadInput(error: unknown): boolean {
  return error instanceof TandemError && BAD_INPUT_CODES.has(error.code);
}

/** Something asked for by name does not exist: an experiment, a workload, a change (the dashboard answers 404). */
export class NotFoundError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_NOT_FOUND';
}

/** A storage backend failed: unreachable, refused a query, or the disk refused a write. */
export class StoreError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_STORE';
}

/** The experiment queue's server (Redis) is unreachable or refused a command. */
export class QueueError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_QUEUE';
}

/** A service Tandem talks to (a metrics source, an error-record endpoint, the lattice controller, an ingest) answered wrongly. */
export class UpstreamError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_UPSTREAM';
}

/** Tandem broke one of its own rules (a function called outside its domain): a bug to report, never the user's input. */
export class InternalError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_INTERNAL';
}

/** An experiment was cancelled (by a monitor, a user, or a shutdown). */
export class ExperimentCancelledError extends TandemError {
  override readonly code: string = 'TANDEM_ERR_CANCELLED';
}

/** Narrow an unknown thrown value to a message without losing non-Error throws. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
