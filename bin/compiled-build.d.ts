/** The folder holding the compiled sources of `root` (same layout), built now if these exact sources have no build yet. */
export function compiledBuild(root: string): Promise<string>;
