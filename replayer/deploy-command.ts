/**
 * The one place where values meet a deploy command. The command template is
 * configuration, written by the workload's owner and run by `sh -c` (so it may
 * `cd` and `&&`); the values — revision, port, arm, dependency URLs — come from
 * CLI flags, API requests and git, and are never spliced into the shell text.
 * Each placeholder becomes a reference to an environment variable that holds
 * the value (`{revision}` → `"${TANDEM_REVISION}"`), quoted for where it stands
 * in the template, so the shell expands it as one word and never parses it.
 * The revision is validated here too, whatever path it came by.
 */
import { InputError, REVISION_RULE, isRevision } from '../core/index.js';

import type { ArmName } from './schedule.js';

const PLACEHOLDER = /\{(port|arm|revision|dep:[A-Za-z0-9._-]+)\}/g;

export interface DeployValues {
  readonly port: number;
  /** control, treatment or control-prime (a second control deployed per trial). */
  readonly arm: ArmName | 'control-prime';
  /** Empty when the arm has no revision. */
  readonly revision: string;
  readonly dependencies: Readonly<Record<string, string>>;
}

export interface DeployCommand {
  /** The shell text: the template with placeholders replaced by variable references. */
  readonly shell: string;
  /** The variables those references read. */
  readonly env: Readonly<Record<string, string>>;
  /** The command as a person would read it, values shown (for errors and logs only, never run). */
  readonly display: string;
}

/** An arm's revision must be a revision; checked when arms are set up (exit 3 before anything runs) and again per command. */
export function checkRevision(arm: ArmName | 'control-prime', revision: string): void {
  if (revision !== '' && !isRevision(revision)) throw new InputError(`the ${arm} revision ${JSON.stringify(revision.slice(0, 80))} is not ${REVISION_RULE}`);
}

const variableFor = (key: string): string =>
  key.startsWith('dep:')
    ? `TANDEM_DEP_${key
        .slice(4)
        .toUpperCase()
        .replace(/[^A-Z0-9]/g, '_')}`
    : `TANDEM_${key.toUpperCase()}`;

/** Substitute a deploy template; an unknown placeholder, dependency or a bad revision is an InputError naming it. */
export function deployCommand(template: string, values: DeployValues): DeployCommand {
  const unknown = template.match(/\{[^}]*\}/g)?.filter((p) => !new RegExp(`^${PLACEHOLDER.source}$`).test(p));
  if (unknown && unknown.length > 0)
    throw new InputError(`deploy command has unknown placeholder ${unknown[0]} (known: {port}, {arm}, {revision}, {dep:NAME})`);
  checkRevision(values.arm, values.revision);
  const env: Record<string, string> = {};
  const valueOf = (key: string): string => {
    if (key === 'port') return String(values.port);
    if (key === 'arm') return values.arm;
    if (key === 'revision') return values.revision;
    const dependency = key.slice(4);
    const url = values.dependencies[dependency];
    if (url === undefined) throw new InputError(`deploy command uses {dep:${dependency}}, but the workload declares no dependency "${dependency}"`);
    return url;
  };
  let shell = '';
  let display = '';
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < template.length; i++) {
    const c = template[i]!;
    PLACEHOLDER.lastIndex = i;
    const match = c === '{' ? PLACEHOLDER.exec(template) : null;
    if (match && match.index === i) {
      const key = match[1]!;
      const variable = variableFor(key);
      env[variable] = valueOf(key);
      shell += quote === '"' ? `\${${variable}}` : quote === "'" ? `'"\${${variable}}"'` : `"\${${variable}}"`;
      display += env[variable];
      i += match[0].length - 1;
      continue;
    }
    if (c === '\\' && quote !== "'") {
      shell += c + (template[i + 1] ?? '');
      display += c + (template[i + 1] ?? '');
      i++;
      continue;
    }
    if ((c === "'" || c === '"') && (quote === undefined || quote === c)) quote = quote === undefined ? c : undefined;
    shell += c;
    display += c;
  }
  return { shell, env, display };
}
