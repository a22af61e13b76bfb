/**
 * Narrowing a lockfile change: the external packages whose resolved version
 * or integrity changed in package-lock.json (v2/v3 `packages` map). A
 * transitive package's change is attributed to the direct dependency whose
 * subtree holds it. Undefined when the lockfile cannot be read: the change
 * then selects everything, as any global input does.
 */
interface LockEntry {
  readonly version?: string;
  readonly resolved?: string;
  readonly integrity?: string;
}

function entries(text: string | undefined): Map<string, string> | undefined {
  if (text === undefined) return new Map();
  try {
    const lock = JSON.parse(text) as { packages?: Record<string, LockEntry> };
    if (!lock.packages || typeof lock.packages !== 'object') return undefined;
    return new Map(Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/')).map(([path, e]) => [path, `${e.version ?? ''}|${e.resolved ?? ''}|${e.integrity ?? ''}`]));
  } catch {
    return undefined;
  }
}

/** Names of the direct dependencies (top-level node_modules entries) whose resolved subtree changed. */
export function changedLockedPackages(before: string | undefined, after: string | undefined): Set<string> | undefined {
  const a = entries(before);
  const b = entries(after);
  if (a === undefined || b === undefined) return undefined;
  const changed = new Set<string>();
  for (const path of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(path) === b.get(path)) continue;
    // node_modules/@scope/name/node_modules/x → @scope/name
    const match = /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
    if (match) changed.add(match[1]!);
  }
  return changed;
}
