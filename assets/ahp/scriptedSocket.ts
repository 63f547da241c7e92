// A socket the unit tests script from the server's side: it records what
// the client sends and delivers what the test says the server answers.
// Test support only: no bundle imports it.

import type { SocketLike } from './client';

/** A JSON-RPC message the client sent (or the test delivers). */
export type Msg = { id?: number; method?: string; params?: Record<string, unknown>; result?: unknown; error?: unknown };

export class ScriptedSocket implements SocketLike {
  readyState = 0;
  onopen: SocketLike['onopen'] = null;
  onclose: SocketLike['onclose'] = null;
  onerror: SocketLike['onerror'] = null;
  onmessage: SocketLike['onmessage'] = null;
  sent: Msg[] = [];
  constructor(readonly url: string) {}
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000, reason = '') {
    if (this.readyState === 3) return;
    this.readyState = 3;
    queueMicrotask(() => this.onclose?.({ code, reason }));
  }
  /** The server accepts the connection. */
  open() {
    this.readyState = 1;
    this.onopen?.({});
  }
  deliver(m: unknown) {
    this.onmessage?.({ data: JSON.stringify(m) });
  }
  reply(id: number, result: unknown) {
    this.deliver({ jsonrpc: '2.0', id, result });
  }
  /** The last message the client sent with this method. */
  last(method: string) {
    return this.sent.filter((m) => m.method === method).at(-1);
  }
}
