// The client's transport: the WebSocket and timer interfaces it runs on
// (real ones in the browser, fakes in node tests), termhost's close codes,
// and JSON-RPC requests matched to their answers by id. The session
// (client.ts) owns the socket; this module knows nothing of channels.

import type { JsonRpcError } from './types';

/** The subset of the browser WebSocket the client uses. */
export interface SocketLike {
  readonly readyState: number;
  onopen: ((ev: unknown) => void) | null;
  onclose: ((ev: { code: number; reason: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

/** WebSocket readyState OPEN. */
export const OPEN = 1;

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(h: unknown): void;
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(h: unknown): void;
  now(): number;
}

export const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
  setInterval: (fn, ms) => setInterval(fn, ms),
  clearInterval: (h) => clearInterval(h as ReturnType<typeof setInterval>),
  now: () => (typeof performance !== 'undefined' ? performance.now() : Date.now()),
};

/** termhost's own WebSocket close codes (4000–4999). */
export const CloseCodes = {
  /** Sent by this client when it drops a socket itself (reconnect, failed handshake, ping timeout). */
  clientReconnect: 4000,
  /** The server evicted us as too slow: reconnect at once to resume (replay or snapshot). */
  slowConsumer: 4001,
  /** The share link this page uses was revoked or expired (or its terminal disposed): never retry. */
  revoked: 4003,
  /** The role of the person signed in (single sign-on) was lowered or taken away: load the page again for the role they have now. */
  roleChanged: 4004,
} as const;

/** What to do when the server closes the socket with `code`. */
export function closeAction(code: number): 'stop' | 'immediate' | 'backoff' {
  if (code === CloseCodes.revoked || code === CloseCodes.roleChanged) return 'stop';
  if (code === CloseCodes.slowConsumer) return 'immediate';
  // 1012 "service restart": termhost handed over to a new process (an upgrade), which is already listening.
  if (code === 1012) return 'immediate';
  return 'backoff';
}

export class RpcError extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(e: JsonRpcError) {
    super(e.message);
    this.code = e.code;
    this.data = e.data;
  }
}

interface PendingRequest {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer: unknown;
}

/** Outstanding JSON-RPC requests, answered by id, failed together when the socket ends. */
export class RpcRequests {
  #nextId = 1;
  #pending = new Map<number, PendingRequest>();
  readonly #timers: Timers;
  /** Sends a message on the current socket; false when there is none open. */
  readonly #send: (msg: unknown) => boolean;

  constructor(timers: Timers, send: (msg: unknown) => boolean) {
    this.#timers = timers;
    this.#send = send;
  }

  /** Sends a request; timeoutMs 0: no timer (the ping has its own deadline). */
  request(method: string, params: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      if (!this.#send({ jsonrpc: '2.0', id, method, params })) {
        reject(new Error('offline'));
        return;
      }
      const timer =
        timeoutMs > 0
          ? this.#timers.setTimeout(() => {
              this.#pending.delete(id);
              reject(new Error(`${method} timed out`));
            }, timeoutMs)
          : undefined;
      this.#pending.set(id, { resolve, reject, timer });
    });
  }

  /** Settles the request a response answers (a response to none is ignored). */
  answer(msg: Record<string, unknown>): void {
    const r = this.#pending.get(msg.id as number);
    if (!r) return;
    this.#pending.delete(msg.id as number);
    this.#timers.clearTimeout(r.timer);
    if (msg.error) r.reject(new RpcError(msg.error as JsonRpcError));
    else r.resolve(msg.result);
  }

  failAll(e: Error): void {
    for (const [id, r] of this.#pending) {
      this.#timers.clearTimeout(r.timer);
      r.reject(e);
      this.#pending.delete(id);
    }
  }
}
