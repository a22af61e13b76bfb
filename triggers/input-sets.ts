/**
 * Which changed files cannot change a running service: input sets (docs,
 * tests, snapshots, stories by default; see DEFAULT_INPUT_SETS in core/config/schema.ts) matched
 * relative to the root of the target owning the file, the way Nx named
 * inputs and Turborepo inputs are relative to a project. Per-target
 * overrides come first; files no target owns are matched relative to the
 * repository root.
 */
import picomatch from 'picomatch';
import { isInputSetName, type TandemConfig } from '../core/index.js';
import { globToRegExp } from './glob.js';

interface Rule {
  /** The set's name, or the pattern itself. */
  readonly label: string;
  readonly patterns: readonly RegExp[];
}

export class InputSets {
  readonly #sets: ReadonlyMap<string, readonly RegExp[]>;
  readonly #global: readonly Rule[];
  readonly #perTarget: readonly { readonly matches: (name: string) => boolean; readonly rules: readonly Rule[] }[];
  readonly #cache = new Map<string, readonly Rule[]>();

  constructor(triggers: TandemConfig['triggers']) {
    this.#sets = new Map(Object.entries(triggers.inputSets).map(([name, patterns]) => [name, patterns.map(globToRegExp)]));
    this.#global = this.#rules(triggers.ignoredInputs);
    this.#perTarget = triggers.targetInputs.map((entry) => ({ matches: picomatch(entry.targets), rules: this.#rules(entry.ignoredInputs) }));
  }

  #rules(entries: readonly string[]): Rule[] {
    return entries.map((entry) =>
      isInputSetName(entry) && this.#sets.has(entry) ? { label: entry, patterns: this.#sets.get(entry)! } : { label: entry, patterns: [globToRegExp(entry)] },
    );
  }

  #rulesFor(target: string | undefined): readonly Rule[] {
    if (target === undefined) return this.#global;
    let rules = this.#cache.get(target);
    if (!rules) {
      rules = this.#perTarget.find((entry) => entry.matches(target))?.rules ?? this.#global;
      this.#cache.set(target, rules);
    }
    return rules;
  }

  /** The ignored input (set name or pattern) `file` falls in for `target` rooted at `root`; undefined when it counts. */
  ignoredBy(file: string, root: string, target?: string): string | undefined {
    const relative = root === '' ? file : file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
    return this.#rulesFor(target).find((rule) => rule.patterns.some((p) => p.test(relative)))?.label;
  }

  /** Whether `file` is in some input set at all (a doc, a test…): shown as a cause only after source files. */
  isNonSource(file: string): boolean {
    for (const patterns of this.#sets.values()) {
      for (const p of patterns) {
        // Relative to any directory: the file's own suffixes.
        let rest = file;
        for (;;) {
          if (p.test(rest)) return true;
          const slash = rest.indexOf('/');
          if (slash === -1) break;
          rest = rest.slice(slash + 1);
        }
      }
    }
    return false;
  }
}
