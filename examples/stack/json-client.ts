/**
 * Downstream JSON calls of the example services, over a keep-alive undici
 * Agent. A non-2xx answer, a timeout or a connection failure becomes a
 * DownstreamError carrying the status the caller should report.
 */
import { Agent, request } from 'undici';

export class DownstreamError extends Error {
  constructor(
    /** 502 for failures, 504 for timeouts, or the downstream 5xx status. */
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class JsonClient {
  readonly #agent = new Agent({ keepAliveTimeout: 4_000, connections: 64 });

  async post<T>(url: string, body: unknown, options: { headers?: Record<string, string>; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? 10_000);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    let response;
    try {
      response = await request(url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: { ...options.headers, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal,
      });
    } catch (error) {
      if (timeout.aborted) throw new DownstreamError(504, `${url}: timed out after ${options.timeoutMs ?? 10_000} ms`);
      throw new DownstreamError(502, `${url}: ${(error as Error).message}`);
    }
    const text = await response.body.text();
    if (response.statusCode < 200 || response.statusCode >= 300) {
      throw new DownstreamError(response.statusCode >= 500 ? response.statusCode : 502, `${url} answered ${response.statusCode}: ${text.slice(0, 200)}`);
    }
    return JSON.parse(text) as T;
  }

  close(): Promise<void> {
    return this.#agent.close();
  }
}
