/**
 * The dashboard's only script, bundled with ECharts by esbuild when `tandem
 * serve` starts (dashboard/assets.ts) and served from the same origin, so the
 * page's CSP allows no other script.
 *
 * The server renders every piece of HTML (escaped there, in one place); this
 * script only (1) draws the charts described by `data-chart` JSON, (2) swaps
 * in fragments the server pushes over server-sent events, and (3) sends the
 * actions with the bearer token a person typed, kept in sessionStorage.
 */
import * as echarts from 'echarts/core';
import { BarChart, LineChart, LinesChart, ScatterChart } from 'echarts/charts';
import { GridComponent, LegendComponent, MarkAreaComponent, MarkLineComponent, TitleComponent, TooltipComponent } from 'echarts/components';
import { CanvasRenderer } from 'echarts/renderers';

echarts.use([
  BarChart,
  LineChart,
  LinesChart,
  ScatterChart,
  GridComponent,
  LegendComponent,
  MarkAreaComponent,
  MarkLineComponent,
  TitleComponent,
  TooltipComponent,
  CanvasRenderer,
]);

const TOKEN_KEY = 'tandem-token';

interface ChartSpec {
  readonly height: number;
  readonly option: Record<string, unknown>;
}

function drawCharts(root: ParentNode): void {
  for (const element of root.querySelectorAll<HTMLElement>('[data-chart]')) {
    if (echarts.getInstanceByDom(element)) continue;
    let spec: ChartSpec;
    try {
      spec = JSON.parse(element.dataset.chart ?? '') as ChartSpec;
    } catch {
      continue;
    }
    element.style.height = `${spec.height}px`;
    echarts.init(element, null, { renderer: 'canvas' }).setOption(spec.option);
  }
}

function disposeCharts(root: ParentNode): void {
  for (const element of root.querySelectorAll<HTMLElement>('[data-chart]')) echarts.getInstanceByDom(element)?.dispose();
}

/** Follow a live region: each `fragment` event replaces its content; `end` closes the stream for good. */
function follow(region: HTMLElement): void {
  const source = new EventSource(region.dataset.live!);
  source.addEventListener('fragment', (event) => {
    const { html } = JSON.parse((event as MessageEvent<string>).data) as { html: string };
    disposeCharts(region);
    region.innerHTML = html;
    region.dataset.updatedAt = String(Date.now());
    drawCharts(region);
    wireActions(region);
  });
  source.addEventListener('end', () => {
    source.close();
    region.dataset.ended = 'true';
    // What only a running experiment offers (its cancel form) goes with the run.
    for (const element of document.querySelectorAll('[data-live-only]')) element.remove();
  });
}

function say(message: string, failed: boolean): void {
  const status = document.getElementById('action-status');
  if (!status) return;
  status.textContent = message;
  status.className = failed ? 'bad' : 'good';
}

function wireActions(root: ParentNode): void {
  for (const button of root.querySelectorAll<HTMLButtonElement>('button[data-action]')) {
    if (button.dataset.wired === 'true') continue;
    button.dataset.wired = 'true';
    button.addEventListener('click', () => void act(button));
  }
}

async function act(button: HTMLButtonElement): Promise<void> {
  const token = sessionStorage.getItem(TOKEN_KEY) ?? '';
  const reasonInput = document.getElementById('cancel-reason') as HTMLInputElement | null;
  button.disabled = true;
  try {
    const response = await fetch(button.dataset.action!, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(reasonInput?.value ? { reason: reasonInput.value } : {}),
    });
    const body = (await response.json().catch(() => ({}))) as { message?: string; error?: string };
    say(response.ok ? (body.message ?? 'done') : `refused: ${body.error ?? response.statusText}`, !response.ok);
  } catch (error) {
    say(`failed: ${(error as Error).message}`, true);
  } finally {
    button.disabled = false;
  }
}

function wireTokenForm(): void {
  const form = document.getElementById('token-form') as HTMLFormElement | null;
  if (!form) return;
  const state = document.getElementById('token-state');
  const show = (): void => {
    if (state) state.textContent = sessionStorage.getItem(TOKEN_KEY) ? 'token set for this tab' : 'no token set';
  };
  show();
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const input = form.querySelector<HTMLInputElement>('#token-input');
    if (input?.value) sessionStorage.setItem(TOKEN_KEY, input.value);
    else sessionStorage.removeItem(TOKEN_KEY);
    if (input) input.value = '';
    show();
  });
}

drawCharts(document);
wireActions(document);
wireTokenForm();
for (const region of document.querySelectorAll<HTMLElement>('[data-live]')) follow(region);
window.addEventListener('resize', () => {
  for (const element of document.querySelectorAll<HTMLElement>('[data-chart]')) echarts.getInstanceByDom(element)?.resize();
});
