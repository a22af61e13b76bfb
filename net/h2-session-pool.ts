/**
 * Client HTTP/2 sessions kept by a key (a target, a client connection, a slot), for every part of Tandem that opens
 * them: each is made with the header limits (h2-limits.ts) and watched for reaching its peer (h2-forward.ts's
 * reachedPeer), and is forgotten once its peer sends GOAWAY or it closes, so the next request opens a new one. A
 * change to how HTTP/2 sessions are pooled is made here.
 */
import { connect, type ClientHttp2Session } from 'node:http2';
import { watchConnection } from './h2-forward.js';
import { withHeaderLimits } from './h2-limits.js';

export interface H2SessionPoolOptions<K> {
  /** Streams this side opens at once on one session; the peer's own limit applies too. */
  readonly peerMaxConcurrentStreams?: number;
  /** Called with each new session, for what its owner adds (passing a GOAWAY on, counting errors). */
  readonly onSession?: (key: K, session: ClientHttp2Session) => void;
}

export class H2SessionPool<K> {
  readonly #sessions = new Map<K, ClientHttp2Session>();
  readonly #options: H2SessionPoolOptions<K>;

  constructor(options: H2SessionPoolOptions<K> = {}) {
    this.#options = options;
  }

  /** The open session of `key`, or a new one to `origin`. */
  get(key: K, origin: string): ClientHttp2Session {
    const existing = this.#sessions.get(key);
    if (existing && !existing.closed && !existing.destroyed) return existing;
    const { peerMaxConcurrentStreams } = this.#options;
    const session = watchConnection(
      connect(origin, withHeaderLimits({ settings: { enablePush: false }, ...(peerMaxConcurrentStreams !== undefined ? { peerMaxConcurrentStreams } : {}) })),
    );
    // Each stream reports its own failure.
    session.on('error', () => undefined);
    const forget = (): void => {
      if (this.#sessions.get(key) === session) this.#sessions.delete(key);
    };
    session.once('goaway', forget);
    session.once('close', forget);
    this.#sessions.set(key, session);
    this.#options.onSession?.(key, session);
    return session;
  }

  /** Close `key`'s session once its streams are done, and forget it. */
  release(key: K): void {
    this.#sessions.get(key)?.close();
    this.#sessions.delete(key);
  }

  /** Destroy every session now. */
  destroyAll(): void {
    for (const session of this.#sessions.values()) session.destroy();
    this.#sessions.clear();
  }
}
