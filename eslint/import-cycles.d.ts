/** The product's import graph: repository-relative file → the files it imports. */
export function importGraph(root?: string): Map<string, string[]>;
/** Every group of files that import each other (a circle), each sorted. */
export function importCycles(graph: Map<string, string[]>): string[][];
