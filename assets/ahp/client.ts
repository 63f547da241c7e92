// The browser AHP client: one WebSocket, JSON-RPC requests with ids, channel
// mirrors with write-ahead reconciliation, protocol ping for latency and
// liveness (a silent link is dropped at once, not after TCP's minutes), and
// automatic reconnect (legacy `reconnect`, replay or snapshot, `missing`;
// fresh `initialize` + resubscribe if the server no longer knows us).
//
// It has no DOM dependencies besides a WebSocket-like object, so it runs in
// node tests with a fake socket and fake timers.
//
// This file is the session (handshake, reconnect, subscriptions, mirrors);
// the socket and timer interfaces, close codes and JSON-RPC requests are in
// transport.ts, the ping and dead-link detection in liveness.ts.

import { backoffDelay, defaultBackoff, type BackoffOptions } from './backoff';
import { ChannelMirror, type PendingAction } from './mirror';
import { DEFAULT_CONTENT_BUDGET } from './content';
import { Liveness } from './liveness';
import { decodeBinaryData, extCapabilities } from './ext';
import { closeAction, CloseCodes, OPEN, realTimers, RpcError, RpcRequests, type SocketLike, type Timers } from './transport';
import {
  PROTOCOL_VERSIONS,
  ROOT_CHANNEL,
  type ActionEnvelope,
  type CreateTerminalParams,
  type InitializeResult,
  type ReconnectResult,
  type Snapshot,
  type StateAction,
  type SubscribeResult,
} from './types';

export { CloseCodes, closeAction, RpcError, type SocketLike, type Timers } from './transport';

export interface ClientOptions {
  url: string;
  clientId: string;
  /** A new clientId, used once when the server refuses ours (it belongs to another credential). */
  freshClientId?: () => string;
  clientInfo?: { name: string; version?: string };
  createSocket?: (url: string) => SocketLike;
  timers?: Timers;
  random?: () => number;
  backoff?: BackoffOptions;
  /** A protocol ping this often (latency, and liveness). */
  pingIntervalMs?: number;
  /**
   * A ping unanswered for this long, with nothing else received meanwhile →
   * the link is dead (a frozen proxy, a lost Wi-Fi): the socket is dropped
   * and the client reconnects at once. A dead link is noticed within
   * pingIntervalMs + pingTimeoutMs.
   */
  pingTimeoutMs?: number;
  /** A socket not online (opened and handshaken) within this is dropped and retried. */
  openTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** Bytes of content each terminal mirror keeps (the server's --scrollback); default 1 MiB. */
  contentBudget?: number;
}

/** The timings a page (or a test) may tune. */
export type ClientTimings = Pick<ClientOptions, 'pingIntervalMs' | 'pingTimeoutMs' | 'openTimeoutMs' | 'requestTimeoutMs' | 'backoff'>;

export type ConnectionState = 'connecting' | 'online' | 'offline' | 'closed';

export interface StateDetail {
  attempt: number;
  nextRetryMs?: number;
  error?: string;
  /** The close code that ended the connection for good ('closed' only). */
  closeCode?: number;
}

export type SnapshotReason = 'initialize' | 'subscribe' | 'reconnect' | 'reinitialize';

export interface ClientEvents {
  /** Connection state changed. */
  state: (s: ConnectionState, detail: StateDetail) => void;
  /** A channel was (re)loaded from a snapshot: views must redraw from `state`. */
  snapshot: (channel: string, state: unknown, reason: SnapshotReason) => void;
  /**
   * A confirmed action was applied to a channel (own echo or foreign).
   * `replayed` marks history from a reconnect replay (output produced while
   * we were away), as opposed to live actions.
   */
  action: (env: ActionEnvelope, state: unknown, own: boolean, replayed: boolean) => void;
  /** The server rejected one of our actions. */
  rejected: (env: ActionEnvelope, reason: string) => void;
  /** A subscribed channel no longer exists (reconnect `missing`, or resubscribe failed). */
  missing: (channel: string) => void;
  /** Round-trip time of the last protocol ping, in ms. */
  latency: (ms: number) => void;
  /** The view state of a channel changed (confirmed or pending changed). */
  view: (channel: string, state: unknown) => void;
  /** A notification other than `action` (server extensions such as `x-termhost/controlRequest`). */
  notification: (method: string, params: unknown) => void;
}

type Listener<K extends keyof ClientEvents> = ClientEvents[K];

export class AhpClient {
  clientId: string;
  readonly url: string;
  protocolVersion = '';
  serverInfo: InitializeResult['serverInfo'];
  /** The initialize result's `_meta` (server extensions, e.g. termhost's presence id). */
  serverMeta: InitializeResult['_meta'];
  connection: ConnectionState = 'connecting';
  /** Highest serverSeq seen on any channel: the legacy reconnect watermark. */
  lastSeenServerSeq = 0;
  latencyMs: number | undefined;

  readonly #o: Required<Omit<ClientOptions, 'clientInfo' | 'freshClientId'>> & Pick<ClientOptions, 'clientInfo' | 'freshClientId'>;
  #ws: SocketLike | undefined;
  #clientSeq = 0;
  readonly #requests: RpcRequests;
  readonly #liveness: Liveness;
  #mirrors = new Map<string, ChannelMirror>();
  /** Channels we want to be subscribed to (survives reconnects). */
  #wanted = new Set<string>();
  /** Envelopes that arrived for a channel whose subscribe answer is still outstanding. */
  #early = new Map<string, ActionEnvelope[]>();
  #listeners: { [K in keyof ClientEvents]?: Set<Listener<K>> } = {};
  #attempt = 0;
  #retryTimer: unknown;
  #openTimer: unknown;
  #closed = false;
  #handshakeDone = false;
  #generation = 0;
  #holding: ActionEnvelope[] | undefined;
  /** Applying a reconnect replay: the actions are history. */
  #replaying = false;
  /** The current socket is being closed by us: its close code is our own. */
  #selfClose = false;
  /** Why the connection ended for good, when the server ended it (e.g. 4003). */
  endedBy: { code: number; reason: string } | undefined;

  constructor(o: ClientOptions) {
    this.clientId = o.clientId;
    this.url = o.url;
    this.#o = {
      createSocket: (url) => {
        const ws = new WebSocket(url);
        ws.binaryType = 'arraybuffer'; // binary data messages (extCapabilities.binaryData)
        return ws as unknown as SocketLike;
      },
      timers: realTimers,
      random: Math.random,
      backoff: defaultBackoff,
      pingIntervalMs: 5_000,
      pingTimeoutMs: 5_000,
      openTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      contentBudget: DEFAULT_CONTENT_BUDGET,
      ...o,
    };
    this.#wanted.add(ROOT_CHANNEL);
    this.#requests = new RpcRequests(this.#o.timers, (msg) => this.#send(msg));
    this.#liveness = new Liveness({
      timers: this.#o.timers,
      intervalMs: this.#o.pingIntervalMs,
      timeoutMs: this.#o.pingTimeoutMs,
      ping: () => this.#request('ping', { channel: ROOT_CHANNEL }, 0),
      onLatency: (ms) => {
        this.latencyMs = ms;
        this.#emit('latency', ms);
      },
      onDead: () => this.#abandon('no answer from the server'),
    });
  }

  on<K extends keyof ClientEvents>(ev: K, fn: ClientEvents[K]): () => void {
    let set = this.#listeners[ev] as Set<Listener<K>> | undefined;
    if (!set) {
      set = new Set();
      (this.#listeners as Record<string, Set<unknown>>)[ev] = set as Set<unknown>;
    }
    set.add(fn);
    return () => set!.delete(fn);
  }

  #emit<K extends keyof ClientEvents>(ev: K, ...args: Parameters<ClientEvents[K]>): void {
    const set = this.#listeners[ev] as Set<(...a: unknown[]) => void> | undefined;
    if (!set) return;
    for (const fn of [...set]) {
      try {
        fn(...args);
      } catch (e) {
        console.error(`termhost: ${ev} listener failed`, e);
      }
    }
  }

  /** Confirmed + predicted state of a channel, if loaded. */
  state<S>(channel: string): S | undefined {
    return this.#mirrors.get(channel)?.view as S | undefined;
  }

  /**
   * The _meta of a command's terminal/commandExecuted on a terminal channel
   * (termhost's "termhost/runBy"), while its mirror keeps the command: AHP's
   * reducer keeps no _meta in a command part.
   */
  commandMeta(channel: string, commandId: string): Record<string, unknown> | undefined {
    return this.#mirrors.get(channel)?.commandMeta(commandId);
  }

  /** Server-confirmed state of a channel, if loaded. */
  confirmed<S>(channel: string): S | undefined {
    return this.#mirrors.get(channel)?.confirmed as S | undefined;
  }

  pending(channel: string): readonly PendingAction[] {
    return this.#mirrors.get(channel)?.pending ?? [];
  }

  isSubscribed(channel: string): boolean {
    return this.#wanted.has(channel);
  }

  get online(): boolean {
    return this.connection === 'online';
  }

  // ---- connection ----

  connect(): void {
    this.#closed = false;
    this.#open();
  }

  /** Close for good (no reconnect). */
  close(): void {
    this.#closed = true;
    this.#o.timers.clearTimeout(this.#retryTimer);
    this.#liveness.stop();
    this.#o.timers.clearTimeout(this.#openTimer);
    this.#detachSocket(1000, 'client closed');
    this.#requests.failAll(new Error('client closed'));
    this.#setState('closed');
  }

  /**
   * Forget the current socket without waiting for its close handshake (which
   * a dead link never completes: Chromium waits up to a minute for it).
   */
  #detachSocket(code: number, reason: string): void {
    const ws = this.#ws;
    this.#ws = undefined;
    if (!ws) return;
    ws.onclose = ws.onmessage = ws.onerror = ws.onopen = null;
    try {
      ws.close(code, reason);
    } catch {
      /* ignore */
    }
  }

  /**
   * The current socket is dead or stuck (no answer to a ping, or not online
   * in time): drop it now and reconnect, at once after a working connection.
   */
  #abandon(reason: string): void {
    if (!this.#ws || this.#closed) return;
    const wasOnline = this.#handshakeDone;
    this.#generation++; // whatever the old socket's handshake still does is ignored
    this.#holding = undefined;
    this.#detachSocket(CloseCodes.clientReconnect, reason);
    this.#lost(reason);
    this.#scheduleRetry(reason, wasOnline);
  }

  /** Common to every end of a socket: calls fail, predictions go, the ping stops. */
  #lost(reason: string): void {
    this.#liveness.stop();
    this.#o.timers.clearTimeout(this.#openTimer);
    this.#handshakeDone = false;
    this.latencyMs = undefined; // a latency is shown only for a link that answers
    this.#requests.failAll(new Error(`connection closed (${reason})`));
    for (const m of this.#mirrors.values()) m.clearPending();
  }

  /**
   * Check the link now (the browser reports going offline): a ping at once,
   * with the usual deadline.
   */
  checkLiveness(): void {
    if (this.#handshakeDone) this.#liveness.ping();
  }

  /** Drop the current socket as if the network failed (used by tests and the "Reconnect" action). */
  dropConnection(): void {
    this.#closeSocket('client reconnect');
  }

  /** Close the current socket ourselves; the retry then follows the backoff. */
  #closeSocket(reason: string): void {
    if (!this.#ws) return;
    this.#selfClose = true;
    this.#ws.close(CloseCodes.clientReconnect, reason);
  }

  #setState(s: ConnectionState, detail: Omit<StateDetail, 'attempt'> = {}): void {
    this.connection = s;
    this.#emit('state', s, { attempt: this.#attempt, ...detail });
  }

  #open(): void {
    const gen = ++this.#generation;
    this.#handshakeDone = false;
    this.#selfClose = false;
    this.#setState(this.#attempt === 0 && this.lastSeenServerSeq === 0 ? 'connecting' : 'offline');
    let ws: SocketLike;
    try {
      ws = this.#o.createSocket(this.url);
    } catch (e) {
      this.#scheduleRetry(String(e));
      return;
    }
    this.#ws = ws;
    this.#liveness.received();
    this.#o.timers.clearTimeout(this.#openTimer);
    this.#openTimer = this.#o.timers.setTimeout(() => {
      if (gen === this.#generation && !this.#handshakeDone) this.#abandon('connecting timed out');
    }, this.#o.openTimeoutMs);
    ws.onopen = () => {
      if (gen !== this.#generation) return;
      void this.#handshake(gen);
    };
    ws.onmessage = (ev) => {
      if (gen !== this.#generation || this.#ws !== ws) return;
      this.#liveness.received();
      this.#onMessage(ev.data);
    };
    ws.onerror = () => {
      /* onclose follows */
    };
    ws.onclose = (ev) => {
      if (gen !== this.#generation) return;
      this.#ws = undefined;
      this.#lost(`${ev.code}${ev.reason ? ' ' + ev.reason : ''}`);
      if (this.#closed) return;
      const what = this.#selfClose ? 'backoff' : closeAction(ev.code);
      if (what === 'stop') {
        // The server withdrew our access: retrying would only be refused.
        this.#closed = true;
        this.#o.timers.clearTimeout(this.#retryTimer);
        this.endedBy = { code: ev.code, reason: ev.reason };
        this.#setState('closed', { closeCode: ev.code, error: ev.reason || `closed with code ${ev.code}` });
        return;
      }
      this.#scheduleRetry(ev.reason || `closed with code ${ev.code}`, what === 'immediate');
    };
  }

  #scheduleRetry(error: string, immediate = false): void {
    // Immediate only after a working connection (attempt 0): a second
    // failure before the next handshake completes backs off as usual.
    const delay = immediate && this.#attempt === 0 ? 0 : backoffDelay(this.#attempt, this.#o.random(), this.#o.backoff);
    this.#attempt++;
    this.#setState('offline', { nextRetryMs: delay, error });
    this.#o.timers.clearTimeout(this.#retryTimer);
    this.#retryTimer = this.#o.timers.setTimeout(() => this.#open(), delay);
  }

  /** Retry now instead of waiting for the backoff timer. */
  retryNow(): void {
    if (this.connection !== 'offline' || this.#ws) return;
    this.#o.timers.clearTimeout(this.#retryTimer);
    this.#open();
  }

  async #handshake(gen: number): Promise<void> {
    // Hold live envelopes until the handshake answer is applied, so a live
    // action can never overtake the replay (the mirrors then drop duplicates
    // by serverSeq).
    this.#holding = [];
    try {
      let reason: SnapshotReason | undefined = 'initialize';
      if (this.lastSeenServerSeq > 0) {
        reason = 'reinitialize';
        try {
          const r = (await this.#request('reconnect', {
            channel: ROOT_CHANNEL,
            clientId: this.clientId,
            lastSeenServerSeq: this.lastSeenServerSeq,
            subscriptions: [...this.#wanted].filter((c) => this.#mirrors.has(c)),
          })) as ReconnectResult;
          if (gen !== this.#generation) return;
          this.#applyReconnect(r);
          reason = undefined;
        } catch (e) {
          if (gen !== this.#generation || !(e instanceof RpcError)) throw e;
          // Unknown clientId or expired retention: start over with initialize.
        }
      }
      if (reason) await this.#initialize(gen, reason);
      if (gen !== this.#generation) return;
      this.#flushHolding();
      // Channels wanted but not loaded (asked for while offline, or dropped
      // by a re-initialize): subscribe now, each with a fresh snapshot.
      const todo = [...this.#wanted].filter((c) => !this.#mirrors.has(c));
      await Promise.all(
        todo.map(async (ch) => {
          try {
            await this.#subscribe(ch, reason ?? 'subscribe');
          } catch (e) {
            if (e instanceof RpcError) this.#drop(ch);
            else throw e;
          }
        }),
      );
      if (gen !== this.#generation) return;
      this.#handshakeDone = true;
      this.#attempt = 0;
      this.#o.timers.clearTimeout(this.#openTimer);
      this.#setState('online');
      this.#liveness.start();
    } catch (e) {
      if (gen !== this.#generation) return;
      // A failed handshake: drop the socket; onclose schedules the retry.
      console.warn('termhost: handshake failed', e);
      this.#closeSocket('handshake failed');
    } finally {
      // On failure, whatever was held may sit after a gap: discard it; the
      // next handshake recovers from the unchanged watermark.
      if (gen === this.#generation) this.#holding = undefined;
    }
  }

  #flushHolding(): void {
    const held = this.#holding;
    this.#holding = undefined;
    for (const env of held ?? []) this.#onEnvelope(env);
  }

  async #initialize(gen: number, reason: SnapshotReason): Promise<void> {
    try {
      await this.#initializeAs(gen, reason);
    } catch (e) {
      // The server binds a clientId to the credential that first used it:
      // ours belongs to another one (this tab signed in differently). Once,
      // take a fresh id instead of failing every retry the same way.
      if (!(e instanceof RpcError) || e.code !== -32602 || !this.#o.freshClientId || gen !== this.#generation) throw e;
      this.clientId = this.#o.freshClientId();
      await this.#initializeAs(gen, reason);
    }
  }

  async #initializeAs(gen: number, reason: SnapshotReason): Promise<void> {
    const r = (await this.#request('initialize', {
      channel: ROOT_CHANNEL,
      protocolVersions: [...PROTOCOL_VERSIONS],
      clientId: this.clientId,
      clientInfo: this.#o.clientInfo ?? { name: 'termhost-web' },
      initialSubscriptions: [ROOT_CHANNEL],
      capabilities: { [extCapabilities.binaryData]: {} },
    })) as InitializeResult;
    if (gen !== this.#generation) return;
    this.protocolVersion = r.protocolVersion;
    this.serverInfo = r.serverInfo;
    this.serverMeta = r._meta;
    // A new server-side session: every other channel is reloaded from a
    // fresh snapshot by the caller; forget what we had so a half-finished
    // resubscribe can never be resumed from a stale cursor.
    for (const ch of [...this.#mirrors.keys()]) if (ch !== ROOT_CHANNEL) this.#mirrors.delete(ch);
    this.lastSeenServerSeq = 0;
    this.#seen(r.serverSeq);
    for (const s of r.snapshots ?? []) this.#loadSnapshot(s, reason);
  }

  #applyReconnect(r: ReconnectResult): void {
    for (const ch of r.missing ?? []) this.#drop(ch);
    if (r.type === 'replay') {
      this.#replaying = true;
      try {
        for (const env of r.actions ?? []) this.#apply(env);
      } finally {
        this.#replaying = false;
      }
    } else {
      const got = new Set<string>();
      for (const s of r.snapshots ?? []) {
        got.add(s.resource);
        this.#loadSnapshot(s, 'reconnect');
      }
      // In the snapshot variant a subscription without a snapshot is dropped.
      for (const ch of [...this.#mirrors.keys()]) if (!got.has(ch)) this.#drop(ch);
    }
    for (const m of this.#mirrors.values()) m.clearPending();
  }

  #drop(ch: string): void {
    const had = this.#wanted.delete(ch) || this.#mirrors.has(ch);
    this.#mirrors.delete(ch);
    this.#early.delete(ch);
    if (ch === ROOT_CHANNEL) this.#wanted.add(ROOT_CHANNEL);
    if (had) this.#emit('missing', ch);
  }

  // ---- JSON-RPC ----

  #send(msg: unknown): boolean {
    const ws = this.#ws;
    if (!ws || ws.readyState !== OPEN) return false;
    ws.send(JSON.stringify(msg));
    return true;
  }

  #request(method: string, params: Record<string, unknown>, timeoutMs = this.#o.requestTimeoutMs): Promise<unknown> {
    return this.#requests.request(method, params, timeoutMs);
  }

  /** A request after the handshake; fails at once while offline. */
  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    if (!this.#handshakeDone) return Promise.reject(new Error('offline'));
    return this.#request(method, params);
  }

  #onMessage(data: unknown): void {
    let msg: Record<string, unknown> | undefined;
    try {
      // Text is JSON-RPC; binary is terminal output (extCapabilities.binaryData).
      msg = typeof data === 'string' ? JSON.parse(data) : decodeBinaryData(data as ArrayBuffer);
    } catch {
      msg = undefined;
    }
    if (typeof msg !== 'object' || msg === null) {
      console.warn('termhost: undecodable frame');
      return;
    }
    if ('method' in msg && !('id' in msg)) {
      if (msg.method === 'action') this.#onEnvelope(msg.params as ActionEnvelope);
      else if (typeof msg.method === 'string') this.#emit('notification', msg.method, msg.params);
      return;
    }
    if ('id' in msg && ('result' in msg || 'error' in msg)) this.#requests.answer(msg);
  }

  #seen(seq: number): void {
    if (typeof seq === 'number' && seq > this.lastSeenServerSeq) this.lastSeenServerSeq = seq;
  }

  #onEnvelope(env: ActionEnvelope): void {
    if (!env || typeof env.channel !== 'string' || !env.action) return;
    if (this.#holding) {
      this.#holding.push(env);
      return;
    }
    const early = this.#early.get(env.channel);
    if (early) {
      early.push(env);
      return;
    }
    this.#apply(env);
  }

  #apply(env: ActionEnvelope): void {
    const m = this.#mirrors.get(env.channel);
    if (!m) return;
    const out = m.receive(env, this.clientId);
    if (out.kind === 'rejected') {
      this.#emit('rejected', env, out.reason);
      this.#emit('view', env.channel, m.view);
      return;
    }
    this.#seen(env.serverSeq);
    if (out.kind === 'stale') return;
    this.#emit('action', env, m.confirmed, out.own, this.#replaying);
    // Output and keystrokes change only content: listeners of 'view' (tabs,
    // status bar) need not run for every chunk of a flood.
    const t = env.action.type;
    if (t !== 'terminal/data' && t !== 'terminal/input') this.#emit('view', env.channel, m.view);
  }

  #loadSnapshot(s: Snapshot, reason: SnapshotReason): void {
    this.#seen(s.fromSeq);
    let m = this.#mirrors.get(s.resource);
    if (m) m.reset(s.state, s.fromSeq, s._meta);
    else {
      m = new ChannelMirror(s.resource, s.state, s.fromSeq, this.#o.contentBudget);
      m.setSnapshotMeta(s._meta);
      this.#mirrors.set(s.resource, m);
    }
    this.#wanted.add(s.resource);
    this.#emit('snapshot', s.resource, s.state, reason);
    // Envelopes that raced ahead of the subscribe answer.
    const early = this.#early.get(s.resource);
    this.#early.delete(s.resource);
    for (const env of early ?? []) this.#apply(env);
    this.#emit('view', s.resource, m.view);
  }

  // ---- subscriptions ----

  async #subscribe(channel: string, reason: SnapshotReason): Promise<unknown> {
    this.#early.set(channel, []);
    try {
      const r = (await this.#request('subscribe', { channel })) as SubscribeResult;
      if (!r?.snapshot) throw new Error(`subscribe ${channel}: no snapshot`);
      this.#loadSnapshot(r.snapshot, reason);
      return r.snapshot.state;
    } finally {
      this.#early.delete(channel);
    }
  }

  /** Subscribe to a channel; resolves with its snapshot state. */
  async subscribe(channel: string): Promise<unknown> {
    if (this.#mirrors.has(channel)) return this.#mirrors.get(channel)!.view;
    this.#wanted.add(channel);
    if (!this.#handshakeDone) {
      // Will be subscribed by the handshake; wait for the snapshot.
      return new Promise((resolve, reject) => {
        const offS = this.on('snapshot', (ch, st) => {
          if (ch === channel) {
            offS();
            offM();
            resolve(st);
          }
        });
        const offM = this.on('missing', (ch) => {
          if (ch === channel) {
            offS();
            offM();
            reject(new Error(`${channel} not found`));
          }
        });
      });
    }
    try {
      return await this.#subscribe(channel, 'subscribe');
    } catch (e) {
      if (e instanceof RpcError) this.#wanted.delete(channel);
      throw e;
    }
  }

  unsubscribe(channel: string): void {
    if (channel === ROOT_CHANNEL) return;
    this.#wanted.delete(channel);
    this.#mirrors.delete(channel);
    this.#send({ jsonrpc: '2.0', method: 'unsubscribe', params: { channel } });
  }

  // ---- actions ----

  /**
   * Dispatch a client action. Returns the clientSeq, or undefined when
   * offline (nothing is queued: input is never replayed later).
   */
  dispatch(channel: string, action: StateAction): number | undefined {
    if (!this.#handshakeDone) return undefined;
    const m = this.#mirrors.get(channel);
    const clientSeq = ++this.#clientSeq;
    if (!this.#send({ jsonrpc: '2.0', method: 'dispatchAction', params: { channel, clientSeq, action } })) {
      this.#clientSeq--;
      return undefined;
    }
    if (m) {
      m.addPending({ clientSeq, action });
      this.#emit('view', channel, m.view);
    }
    return clientSeq;
  }

  createTerminal(p: CreateTerminalParams): Promise<unknown> {
    return this.request('createTerminal', { ...p });
  }

  disposeTerminal(channel: string): Promise<unknown> {
    return this.request('disposeTerminal', { channel });
  }
}
