/** Reading one counter of a service, as tests, benchmarks and the demo do: the sum over all its label sets. */
import { parsePrometheusText } from '../../core/prometheus-text.js'; // leaf import: see faults.ts

export async function metricTotal(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return parsePrometheusText(text)
    .samples.filter((s) => s.name === name)
    .reduce((sum, s) => sum + s.value, 0);
}
