/**
 * The nginx configuration that feeds `tandem collect` (docs/collect.md): nginx decides which requests are sampled,
 * so an unsampled request costs only a `split_clients` hash; a sampled one is redirected inside nginx to a location
 * that copies it to the collector by `mirror`, without the client waiting for the copy. `mirror` takes no variable,
 * so a `mirror` in the main location would make a subrequest of every request, sampled or not (docs/collect.md).
 *
 * `split_clients` takes percentages with two decimals, so the edge samples at no less than 0.01%; a lower rate is
 * made up by the collector's own sampler (edgeSampling), and each record's rate is the product.
 */
import { hostPort } from '../core/index.js';

export interface EdgeSampling {
  /** The share nginx mirrors, a whole number of hundredths of a percent. */
  readonly edgeRate: number;
  /** The share of mirrored copies the collector records: the rest of the rate asked for. */
  readonly collectorRate: number;
}

const EDGE_STEP = 1e-4;

export function edgeSampling(rate: number): EdgeSampling {
  const edgeRate = Math.min(1, Math.max(EDGE_STEP, Math.ceil(rate / EDGE_STEP - 1e-9) * EDGE_STEP));
  return { edgeRate, collectorRate: Math.min(1, rate / edgeRate) };
}

export interface NginxMirrorOptions {
  /** Where nginx listens for production's clients, host:port. */
  readonly listen: { readonly host: string; readonly port: number };
  /** The service, host:port. */
  readonly upstream: { readonly host: string; readonly port: number };
  /** The collector, host:port. */
  readonly collector: { readonly host: string; readonly port: number };
  readonly rate: number;
  /** Sample whole sessions by this request header instead of each request at random. */
  readonly stickyHeader?: string;
  /** The shared token the collector requires (TANDEM_COLLECT_TOKEN). */
  readonly token?: string;
  /** The service speaks gRPC: nginx listens with HTTP/2 and passes calls with `grpc_pass`. */
  readonly grpc?: boolean;
  /** Longest nginx waits on the collector for one copy (ms): a dead or stalled collector costs a connection no more. */
  readonly collectorTimeoutMs?: number;
}

const address = ({ host, port }: { host: string; port: number }): string => hostPort(host, port);

/** Whether a value can be written into nginx's configuration as a quoted string: nothing in it ends the directive or starts a variable. */
export const isNginxQuotable = (value: string): boolean => /^[\x21-\x7e]*$/.test(value) && !/["'\\$;{}]/.test(value);

function quoted(value: string): string {
  if (!isNginxQuotable(value)) throw new Error(`cannot be written into an nginx configuration: ${JSON.stringify(value)}`);
  return `"${value}"`;
}

/** A header name as nginx's variable for it: `X-Session` → `$http_x_session`. */
function headerVariable(name: string): string {
  if (!/^[A-Za-z0-9-]+$/.test(name)) throw new Error(`not an HTTP header name: ${JSON.stringify(name)}`);
  return `$http_${name.toLowerCase().replaceAll('-', '_')}`;
}

/** The `http { }` part: include it in nginx.conf's http block (or use it as a file under conf.d/). */
export function nginxMirrorConfig(options: NginxMirrorOptions): string {
  const { edgeRate, collectorRate } = edgeSampling(options.rate);
  const key = options.stickyHeader === undefined ? '$request_id' : headerVariable(options.stickyHeader);
  const percent = `${(edgeRate * 100).toFixed(2)}%`;
  const timeout = `${options.collectorTimeoutMs ?? 200}ms`;
  const sampling =
    edgeRate >= 1
      ? ['map $request_id $tandem_mirror_sampled {', '    default 1;', '}']
      : [`split_clients "${key}" $tandem_mirror_sampled {`, `    ${percent} 1;`, '    * "";', '}'];
  const token =
    options.token === undefined ? [] : [`        ${options.grpc ? 'grpc_set_header' : 'proxy_set_header'} X-Tandem-Mirror-Token ${quoted(options.token)};`];
  const pass = options.grpc
    ? {
        main: ['        grpc_pass grpc://tandem_service;'],
        // A sampled request's own URI is now its location's: the call's path is put back before it is passed on.
        sampled: ['        rewrite ^ $request_uri break;', '        grpc_pass grpc://tandem_service;'],
        mirror: [
          '        rewrite ^ $request_uri break;',
          '        grpc_pass grpc://tandem_collector;',
          `        grpc_connect_timeout ${timeout};`,
          `        grpc_send_timeout ${timeout};`,
          `        grpc_read_timeout ${timeout};`,
        ],
      }
    : {
        main: ['        proxy_http_version 1.1;', '        proxy_set_header Connection "";', '        proxy_pass http://tandem_service;'],
        // $request_uri: the path and query exactly as the client sent them, not the sampled location's.
        sampled: ['        proxy_http_version 1.1;', '        proxy_set_header Connection "";', '        proxy_pass http://tandem_service$request_uri;'],
        mirror: [
          '        proxy_http_version 1.1;',
          '        proxy_set_header Connection "";',
          '        proxy_pass http://tandem_collector$request_uri;',
          `        proxy_connect_timeout ${timeout};`,
          `        proxy_send_timeout ${timeout};`,
          `        proxy_read_timeout ${timeout};`,
        ],
      };
  return [
    `# tandem collect: nginx mirrors ${percent} of requests${options.stickyHeader === undefined ? '' : ` (whole sessions by ${options.stickyHeader})`} to the collector at ${address(options.collector)},`,
    `# which records ${collectorRate === 1 ? 'each of them' : `${collectorRate.toPrecision(3)} of them`} (run it with --rate ${options.rate}).`,
    ...sampling,
    'upstream tandem_service {',
    `    server ${address(options.upstream)};`,
    '    keepalive 64;',
    '}',
    'upstream tandem_collector {',
    `    server ${address(options.collector)};`,
    '    keepalive 16;',
    '}',
    'server {',
    `    listen ${address(options.listen)}${options.grpc ? ' http2' : ''};`,
    '    location / {',
    '        # Sampled requests take the mirroring location; the rest pass straight on and cost no subrequest.',
    '        if ($tandem_mirror_sampled) {',
    '            rewrite ^ /_tandem_sampled last;',
    '        }',
    ...pass.main,
    '    }',
    '    location = /_tandem_sampled {',
    '        internal;',
    '        mirror /_tandem_mirror;',
    '        mirror_request_body on;',
    ...pass.sampled,
    '    }',
    '    location = /_tandem_mirror {',
    '        internal;',
    '        access_log off;',
    ...token,
    ...pass.mirror,
    '    }',
    '}',
    '',
  ].join('\n');
}
