/** Who is running, and where: tests substitute it to play a second user. */
export interface BuildHost {
  readonly uid: number;
  readonly tmp: string;
  canWrite(dir: string): boolean;
  warn(line: string): void;
  onExit(cleanup: () => void): void;
}

/** A build folder Tandem will not run code from; the message names it, what is wrong and what to do. */
export class UnsafeBuildFolderError extends Error {
  readonly path: string;
  constructor(path: string, problem: string, remedy: string);
}

/** The folder holding the compiled sources of `root` (same layout), built now if these exact sources have no build yet. */
export function compiledBuild(root: string, host?: BuildHost): Promise<string>;
