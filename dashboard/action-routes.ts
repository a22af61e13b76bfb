/**
 * The dashboard's two actions, `POST /api/experiments/<id>/cancel` and
 * `POST /api/workloads/<name>/calibrate`. They exist only with a bearer
 * token, and are CSRF-safe: the token travels in an `Authorization` header
 * (a cross-site form cannot send one, a cross-site script cannot without a
 * CORS preflight this server never grants), the body must be JSON, and a
 * foreign `Origin` or `Sec-Fetch-Site` is refused before the token is looked at.
 */
import { timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readBody } from '../core/index.js';
import type { DashboardActions, DashboardContext } from './context.js';
import { decodeSegment, experimentIdFrom, replyJson } from './http-replies.js';

export interface ActionOptions {
  /** Undefined: read-only, every action is refused. */
  readonly token: string | undefined;
  readonly actions: DashboardActions | undefined;
  /** Whether an `Origin` header's host:port is this server. */
  readonly ownOrigin: (hostAndPort: string) => boolean;
}

function tokenCheck(token: string): (req: IncomingMessage) => boolean {
  const expected = Buffer.from(`Bearer ${token}`);
  return (req) => {
    const given = Buffer.from(req.headers.authorization ?? '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  };
}

// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const CONTROL = /[\u0000-\u001f\u007f]/;

export function actionRoutes(ctx: DashboardContext, options: ActionOptions): (req: IncomingMessage, res: ServerResponse, path: string) => Promise<void> {
  const authorized = options.token ? tokenCheck(options.token) : () => false;
  const actions = options.token ? options.actions : undefined;
  return async (req, res, path) => {
    if (req.method !== 'POST') return replyJson(res, 405, { error: 'actions are POST' }, { allow: 'POST' });
    if (!actions) return replyJson(res, 403, { error: 'read-only: the dashboard was started without --token-env, so it takes no actions' });
    const origin = req.headers.origin;
    if (origin !== undefined && !options.ownOrigin(origin.replace(/^https?:\/\//, '').toLowerCase()))
      return replyJson(res, 403, { error: 'cross-origin request refused' });
    const site = req.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') return replyJson(res, 403, { error: 'cross-site request refused' });
    if (!authorized(req)) return replyJson(res, 401, { error: 'missing or wrong bearer token' });
    if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
      return replyJson(res, 415, { error: 'send JSON (content-type: application/json)' });
    const text = await readBody(req, 4_096);
    if (text === undefined) return replyJson(res, 413, { error: 'body above 4 KiB' });
    let body: { reason?: unknown };
    try {
      body = (text.trim() === '' ? {} : JSON.parse(text)) as { reason?: unknown };
    } catch {
      return replyJson(res, 400, { error: 'body must be JSON such as {"reason": "..."}' });
    }
    const segments = path.split('/').slice(2).map(decodeSegment);
    if (segments[0] === 'experiments' && segments[2] === 'cancel' && segments.length === 3) {
      const id = experimentIdFrom(segments[1]!);
      const reason = body.reason === undefined ? 'cancelled from the dashboard' : body.reason;
      if (typeof reason !== 'string' || reason.length > 200 || CONTROL.test(reason))
        return replyJson(res, 400, { error: 'reason must be text of at most 200 characters without control characters' });
      const result = await actions.cancel(id, reason);
      if (result === undefined) return replyJson(res, 404, { error: `no experiment ${id} in the store` });
      return replyJson(res, 200, { id, message: `${id}: ${result}` });
    }
    if (segments[0] === 'workloads' && segments[2] === 'calibrate' && segments.length === 3) {
      const workload = ctx.workload(segments[1]!);
      if (!workload) return replyJson(res, 404, { error: `no workload ${JSON.stringify(segments[1]!.slice(0, 100))} in the config` });
      const { id, deduplicated } = await actions.calibrate(workload.name);
      return replyJson(res, 202, { id, message: `${deduplicated ? 'already queued' : 'queued'}: A/A calibration ${id}` });
    }
    return replyJson(res, 404, { error: 'no such action' });
  };
}
