/**
 * Degradation-lattice changes: a lattice file lists product states, each
 * fixing a level per service (`states: [{ name, levels: { service: level } }]`).
 * Diffing the file before and after a change gives, per service, the states
 * whose level changed (or that appeared or disappeared): those services'
 * workloads are selected, with the changed states as candidates to validate.
 */
import { parse as parseYaml } from 'yaml';

interface LatticeState {
  readonly name: string;
  readonly levels: Readonly<Record<string, number>>;
}

function statesOf(text: string | undefined, file: string): LatticeState[] | undefined {
  if (text === undefined) return [];
  let data: unknown;
  try {
    data = /\.json$/i.test(file) ? JSON.parse(text) : parseYaml(text);
  } catch {
    return undefined;
  }
  const lattices = Array.isArray((data as { lattices?: unknown })?.lattices) ? (data as { lattices: unknown[] }).lattices : [data];
  const states: LatticeState[] = [];
  for (const lattice of lattices) {
    const list = (lattice as { states?: unknown })?.states;
    if (!Array.isArray(list)) return undefined;
    const prefix = lattices.length > 1 ? `${String((lattice as { name?: unknown }).name ?? '?')}/` : '';
    for (const s of list as { name?: unknown; levels?: unknown }[]) {
      if (typeof s?.name !== 'string' || s.levels === null || typeof s.levels !== 'object') return undefined;
      states.push({ name: `${prefix}${s.name}`, levels: s.levels as Record<string, number> });
    }
  }
  return states;
}

/** Service → names of the states whose level for it changed; undefined when either side is not a readable lattice. */
export function changedLatticeStates(file: string, before: string | undefined, after: string | undefined): Map<string, string[]> | undefined {
  const a = statesOf(before, file);
  const b = statesOf(after, file);
  if (a === undefined || b === undefined) return undefined;
  const byName = (states: LatticeState[]) => new Map(states.map((s) => [s.name, s]));
  const left = byName(a);
  const right = byName(b);
  const changed = new Map<string, Set<string>>();
  for (const name of new Set([...left.keys(), ...right.keys()])) {
    const l = left.get(name)?.levels ?? {};
    const r = right.get(name)?.levels ?? {};
    for (const service of new Set([...Object.keys(l), ...Object.keys(r)])) {
      if (l[service] !== r[service]) {
        const set = changed.get(service) ?? new Set<string>();
        set.add(name);
        changed.set(service, set);
      }
    }
  }
  return new Map([...changed].map(([service, states]) => [service, [...states]]));
}
