/**
 * What an experiment compared, for the titles of its reports and `status`:
 * each arm's revision (a commit shortened to 12 characters) and/or URL, from
 * what the arms recorded when the experiment ran, else from its request.
 */
type Side = { readonly revision?: string; readonly url?: string };

const short = (revision: string): string => (/^[0-9a-f]{40}$/.test(revision) ? revision.slice(0, 12) : revision);

function sideOf(spec: Readonly<Record<string, unknown>>, arm: 'control' | 'treatment'): Side {
  const compared = (spec.compared as Partial<Record<typeof arm, Side>> | undefined)?.[arm];
  const request = spec.request as Readonly<Record<string, unknown>> | undefined;
  const revision = compared?.revision ?? (typeof request?.[`${arm}Revision`] === 'string' ? (request[`${arm}Revision`] as string) : undefined);
  const url = compared?.url ?? (typeof request?.[arm] === 'string' ? (request[arm] as string) : undefined);
  return { ...(revision !== undefined ? { revision } : {}), ...(url !== undefined ? { url } : {}) };
}

function sideText(side: Side): string | undefined {
  if (side.revision !== undefined && side.url !== undefined) return `${short(side.revision)} (${side.url})`;
  if (side.revision !== undefined) return short(side.revision);
  return side.url;
}

/** "control 1a2b3c4d5e6f vs treatment 6f5e4d3c2b1a", or undefined when the experiment recorded neither arm. */
export function comparedText(spec: Readonly<Record<string, unknown>>): string | undefined {
  const control = sideText(sideOf(spec, 'control'));
  const treatment = sideText(sideOf(spec, 'treatment'));
  if (control === undefined && treatment === undefined) return undefined;
  return `control ${control ?? 'as configured'} vs treatment ${treatment ?? 'as configured'}`;
}

/** A response field as a reader names it: the empty path is the body as a whole (a body that is not JSON, or one replaced outright). */
export function fieldName(path: string): string {
  return path === '' ? '(whole body)' : path;
}
