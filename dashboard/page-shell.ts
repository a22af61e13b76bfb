/**
 * The frame every dashboard page shares: landmarks (header with the main
 * navigation, main, footer), a skip link, the stylesheet and the one script,
 * both from this origin. Everything inside is escaped by the page that made it.
 */
import { escapeHtml as e } from '../harness/index.js';
import type { Assets } from './assets.js';

export const NAV = [
  { href: '/', label: 'Experiments' },
  { href: '/workloads', label: 'Workloads' },
  { href: '/capacity', label: 'Capacity & lattice' },
  { href: '/changes', label: 'Changes' },
] as const;

export interface PageFrame {
  readonly title: string;
  /** Which navigation entry is the current page. */
  readonly section: (typeof NAV)[number]['href'];
  readonly body: string;
  /** Whether actions are enabled (a token was configured): shows the token form. */
  readonly actions: boolean;
  /** Shown in the footer of regular pages; error pages leave it out. */
  /** Which backend the pages read (never its path or host: a visitor is not told where the data lives). */
  readonly storeKind?: string;
}

export function page(frame: PageFrame, assets: Assets): string {
  const nav = NAV.map((n) => `<li><a href="${n.href}"${n.href === frame.section ? ' aria-current="page"' : ''}>${e(n.label)}</a></li>`).join('');
  // The input has no name: a form submitted before the script loads then sends nothing (never `?token=…` in a URL).
  const token = frame.actions
    ? `<form id="token-form" class="token" aria-label="Bearer token for actions"><label>Token <input type="password" id="token-input" autocomplete="off" size="16"></label> <button type="submit">Set</button> <span id="token-state" class="meta">no token set</span></form>`
    : `<span class="meta">read-only (start with <code>--token-env VAR</code> to cancel and calibrate)</span>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${e(frame.title)} · Tandem</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/dashboard.${assets.style.hash}.css">
<script src="/assets/dashboard.${assets.script.hash}.js" defer></script>
</head><body>
<a class="skip" href="#main">Skip to content</a>
<header><a class="brand" href="/">Tandem</a><nav aria-label="Main"><ul>${nav}</ul></nav>${token}</header>
<main id="main">
${frame.body}
<p id="action-status" role="status" aria-live="polite"></p>
</main>
${frame.storeKind !== undefined ? `<footer>store: ${e(frame.storeKind === 'local' ? 'local files' : frame.storeKind)}</footer>` : ''}
</body></html>
`;
}

/** A link to `path` with the query's non-empty values. */
export function href(path: string, query: Readonly<Record<string, string | number | undefined>>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export const STATUS_CLASS: Readonly<Record<string, string>> = {
  passed: 'good',
  regressed: 'bad',
  failed: 'bad',
  cancelled: 'warn',
  inconclusive: 'warn',
  running: 'ok',
  queued: 'ok',
  completed: 'ok',
  deferred: 'warn',
};

export function statusBadge(status: string): string {
  return `<span class="status ${STATUS_CLASS[status] ?? ''}">${e(status)}</span>`;
}

export const time = (ms: number): string =>
  Number.isFinite(ms)
    ? new Date(ms)
        .toISOString()
        .replace('T', ' ')
        .replace(/\.\d+Z$/, 'Z')
    : '';

/** A chart the dashboard's script draws from its ECharts option (JSON in an escaped attribute). */
export function chartElement(spec: { title: string; height: number; option: unknown } | undefined, title: string): string {
  if (!spec) return `<p class="empty">${e(title)}: no data</p>`;
  return `<div class="chart" role="img" aria-label="${e(spec.title)}" data-chart="${e(JSON.stringify({ height: spec.height, option: spec.option }))}"></div>`;
}
