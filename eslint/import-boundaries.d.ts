import type { Rule } from 'eslint';

/** Why `from` may not import `to` (repository-relative paths, `.ts`), or undefined when it may. */
export function boundaryViolation(from: string, to: string, importedNames: readonly string[]): string | undefined;
export const importBoundaries: Rule.RuleModule;
