// The browser as a multi-host AHP client (README "Many boxes"): one AhpClient
// per host, each with its own WebSocket, liveness, reconnect with backoff,
// clientId and mirrors, put together behind the one client the workbench
// talks to. The home host (the page's own server) is the client the page
// always had; another host's channels are named in the page by wrapping
// their URIs (hosts.ts hostUri), and every call on such a channel goes to
// that host's client with the host's own URI. So the parts of the workbench
// (tabs, palette, Commands, previews, Share, presence, control) work on any
// host's terminal without knowing about hosts.
//
// A host going down changes only its own state: its terminals stay listed
// (greyed out by the workbench) until it answers again. A request or action
// on another host's channel while that host is offline is refused at once,
// exactly as the home client refuses them (client.ts `request`, `dispatch`).

import type { AhpClient, ClientEvents, ConnectionState } from './client';
import { extMeta, extMethods, extNotifications, type Approval } from './ext';
import { hostUri, loginUrlOf, nextHostStatus, splitHostUri, type HostEntry, type HostEvent, type HostList, type HostStatus } from './hosts';
import { ROOT_CHANNEL, type ActionEnvelope, type CreateTerminalParams, type RootState, type StateAction, type TerminalInfo } from './types';

export interface MultiHostEvents extends ClientEvents {
  /** The host list, or a host's state, changed. */
  hosts: () => void;
}

/** What a host's whoami answered: its HTTP status (0: no answer) and body. */
export interface ProbeResult {
  status: number;
  body?: unknown;
}

export interface MultiHostOptions {
  /** A client for another host (not connected yet), from its name and base URL. */
  makeClient: (host: HostEntry) => AhpClient;
  /** GET <base>/api/whoami of a host, with its own cookies. */
  probe: (host: HostEntry) => Promise<ProbeResult>;
}

export interface HostInfo {
  name: string;
  url: string;
  status: HostStatus;
  /** The host's own sign-in page (its whoami's "login"), while it needs a sign-in. */
  login?: string;
}

interface Remote {
  entry: HostEntry;
  client: AhpClient;
  status: HostStatus;
  login?: string;
  probing: boolean;
  offs: (() => void)[];
}

/** Keys whose string values name a channel or terminal in requests, results and notifications. */
const URI_KEYS = new Set(['channel', 'terminal', 'resource']);

/** A copy of v with every channel/terminal/resource string mapped by fn (params out, results in). */
export function mapUris(v: unknown, fn: (uri: string) => string): unknown {
  if (Array.isArray(v)) return v.map((x) => mapUris(x, fn));
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = URI_KEYS.has(k) && typeof x === 'string' && x !== ROOT_CHANNEL ? fn(x) : mapUris(x, fn);
  return out;
}

type Listener = (...a: unknown[]) => void;

export class MultiHostClient {
  readonly home: AhpClient;
  readonly #o: MultiHostOptions;
  #remotes = new Map<string, Remote>();
  /** The hosts in the file's order. */
  #order: string[] = [];
  #homeName = '';
  /** The host list has come (setHosts): a host not in it is not one the page can reach. */
  #listed = false;
  #listeners = new Map<string, Set<Listener>>();
  #merged: RootState | undefined;
  /** Approvals per host ("" home): the approvals notification carries a host's whole list. */
  #approvals = new Map<string, Approval[]>();

  constructor(home: AhpClient, o: MultiHostOptions) {
    this.home = home;
    this.#o = o;
    home.on('state', (s, d) => {
      this.#emit('state', s, d);
      // The home host's own group shows its link's state: it goes online
      // after its list came (initialize first), and must not wait for
      // another host's answer to say so.
      if (this.#order.length > 0) this.#emit('hosts');
    });
    home.on('latency', (ms) => this.#emit('latency', ms));
    home.on('snapshot', (ch, st, reason) => {
      if (ch !== ROOT_CHANNEL) return this.#emit('snapshot', ch, st, reason);
      if (reason === 'initialize' && typeof performance !== 'undefined') performance.mark('termhost:root');
      this.#merged = undefined;
      this.#emit('snapshot', ch, this.state(ROOT_CHANNEL), reason);
      this.#emit('hosts');
    });
    home.on('action', (env, st, own, replayed) => {
      if (env.channel !== ROOT_CHANNEL) return this.#emit('action', env, st, own, replayed);
      this.#merged = undefined;
      this.#emit('action', env, this.state(ROOT_CHANNEL), own, replayed);
    });
    home.on('rejected', (env, reason) => this.#emit('rejected', env, reason));
    home.on('missing', (ch) => this.#emit('missing', ch));
    home.on('view', (ch, st) => this.#emit('view', ch, ch === ROOT_CHANNEL ? this.state(ROOT_CHANNEL) : st));
    home.on('notification', (method, params) => this.#notification('', method, params));
  }

  // ---- the home client's face (the status bar, banners and tests use it) ----

  get clientId(): string {
    return this.home.clientId;
  }
  get url(): string {
    return this.home.url;
  }
  get protocolVersion(): string {
    return this.home.protocolVersion;
  }
  get serverInfo(): AhpClient['serverInfo'] {
    return this.home.serverInfo;
  }
  get serverMeta(): AhpClient['serverMeta'] {
    return this.home.serverMeta;
  }
  get connection(): ConnectionState {
    return this.home.connection;
  }
  get lastSeenServerSeq(): number {
    return this.home.lastSeenServerSeq;
  }
  get latencyMs(): number | undefined {
    return this.home.latencyMs;
  }
  get online(): boolean {
    return this.home.online;
  }
  get endedBy(): AhpClient['endedBy'] {
    return this.home.endedBy;
  }
  connect(): void {
    this.home.connect();
  }
  close(): void {
    this.home.close();
    for (const r of this.#remotes.values()) this.#dropRemote(r);
    this.#remotes.clear();
  }
  retryNow(): void {
    this.home.retryNow();
  }
  dropConnection(): void {
    this.home.dropConnection();
  }
  checkLiveness(): void {
    this.home.checkLiveness();
    for (const r of this.#remotes.values()) r.client.checkLiveness();
  }

  // ---- events ----

  on<K extends keyof MultiHostEvents>(ev: K, fn: MultiHostEvents[K]): () => void {
    let set = this.#listeners.get(ev);
    if (!set) this.#listeners.set(ev, (set = new Set()));
    set.add(fn as Listener);
    return () => set!.delete(fn as Listener);
  }

  #emit<K extends keyof MultiHostEvents>(ev: K, ...args: Parameters<MultiHostEvents[K]>): void {
    for (const fn of [...(this.#listeners.get(ev) ?? [])]) {
      try {
        fn(...args);
      } catch (e) {
        console.error(`termhost: ${ev} listener failed`, e);
      }
    }
  }

  // ---- hosts ----

  /** The home host's name: the hosts list's, else what its initialize said. */
  get homeName(): string {
    if (this.#homeName) return this.#homeName;
    const n = this.home.serverMeta?.[extMeta.hostName];
    return typeof n === 'string' ? n : '';
  }

  /** The other hosts and their states, in the file's order. */
  hosts(): HostInfo[] {
    return this.#order.map((name) => {
      const r = this.#remotes.get(name)!;
      return { name, url: r.entry.url, status: r.status, ...(r.status === 'signin' && r.login ? { login: r.login } : {}) };
    });
  }

  /**
   * Connect to the listed hosts, drop the ones no longer listed. Never waits
   * for any. The same list again changes nothing (the page checks it again
   * each time its home link comes online).
   */
  setHosts(list: HostList): void {
    const same =
      this.#listed &&
      list.home === this.#homeName &&
      list.hosts.length === this.#order.length &&
      list.hosts.every((h, i) => h.name === this.#order[i] && this.#remotes.get(h.name)?.entry.url === h.url);
    if (same) return;
    this.#listed = true;
    this.#homeName = list.home;
    const want = new Map(list.hosts.map((h) => [h.name, h]));
    for (const [name, r] of this.#remotes) {
      const w = want.get(name);
      if (w && w.url === r.entry.url) continue;
      this.#dropRemote(r);
      this.#remotes.delete(name);
    }
    for (const h of list.hosts) if (!this.#remotes.has(h.name)) this.#addRemote(h);
    this.#order = list.hosts.map((h) => h.name);
    this.#rootChanged();
    this.#emit('hosts');
  }

  #addRemote(entry: HostEntry): void {
    const client = this.#o.makeClient(entry);
    const r: Remote = { entry, client, status: 'connecting', probing: false, offs: [] };
    this.#remotes.set(entry.name, r);
    const name = entry.name;
    const wrap = (ch: string) => (ch === ROOT_CHANNEL ? ch : hostUri(name, ch));
    const wrapEnv = (env: ActionEnvelope): ActionEnvelope => ({ ...env, channel: wrap(env.channel) });
    r.offs.push(
      client.on('state', (s) => {
        if (s === 'online') this.#hostEvent(r, { kind: 'online' });
        else if (s === 'offline' || s === 'closed') {
          this.#hostEvent(r, { kind: 'offline' });
          void this.#probe(r);
        }
      }),
      client.on('snapshot', (ch, st, reason) => {
        if (ch === ROOT_CHANNEL) {
          if (reason === 'initialize' && typeof performance !== 'undefined') performance.mark(`termhost:root:${name}`);
          return this.#rootChanged();
        }
        this.#emit('snapshot', wrap(ch), st, reason);
      }),
      client.on('action', (env, st, own, replayed) => {
        if (env.channel === ROOT_CHANNEL) return this.#rootChanged();
        this.#emit('action', wrapEnv(env), st, own, replayed);
      }),
      client.on('rejected', (env, reason) => this.#emit('rejected', wrapEnv(env), reason)),
      client.on('missing', (ch) => (ch === ROOT_CHANNEL ? undefined : this.#emit('missing', wrap(ch)))),
      client.on('view', (ch, st) => (ch === ROOT_CHANNEL ? undefined : this.#emit('view', wrap(ch), st))),
      client.on('notification', (method, params) => this.#notification(name, method, params)),
    );
    client.connect();
  }

  #dropRemote(r: Remote): void {
    for (const off of r.offs) off();
    r.client.close();
    this.#approvals.delete(r.entry.name);
  }

  #hostEvent(r: Remote, e: HostEvent): void {
    const next = nextHostStatus(r.status, e);
    if (next === r.status) return;
    r.status = next;
    this.#emit('hosts');
  }

  /** Ask a host's whoami why its link fails (one question at a time). */
  async #probe(r: Remote): Promise<void> {
    if (r.probing) return;
    r.probing = true;
    let res: ProbeResult;
    try {
      res = await this.#o.probe(r.entry);
    } catch {
      res = { status: 0 };
    } finally {
      r.probing = false;
    }
    if (this.#remotes.get(r.entry.name) !== r) return;
    if (res.status === 401 || res.status === 403) r.login = loginUrlOf(res.body, r.entry.url) ?? r.login;
    this.#hostEvent(r, { kind: 'probe', status: res.status });
  }

  /**
   * Try the hosts that are not connected again now (the person came back
   * from another host's sign-in tab, or the network is back).
   */
  retryHosts(): void {
    for (const r of this.#remotes.values()) {
      if (r.status === 'connected') continue;
      r.client.retryNow();
      void this.#probe(r);
    }
  }

  /** The host's state ("" = home: from its link). */
  statusOf(host: string): HostStatus {
    if (!host) return this.home.online ? 'connected' : 'reconnecting';
    return this.#remotes.get(host)?.status ?? 'unreachable';
  }

  #clientOf(uri: string): { client: AhpClient | undefined; uri: string; host: string } {
    const s = splitHostUri(uri);
    if (!s.host) return { client: this.home, ...s };
    return { client: this.#remotes.get(s.host)?.client, ...s };
  }

  /** The clientId this page uses on the host of a terminal (each host has its own). */
  clientIdOf(uri: string): string {
    return this.#clientOf(uri).client?.clientId ?? this.home.clientId;
  }

  /** Whether the host of a terminal is connected. */
  onlineFor(uri: string): boolean {
    return this.#clientOf(uri).client?.online ?? false;
  }

  /** The initialize _meta of a terminal's host. */
  serverMetaOf(uri: string): AhpClient['serverMeta'] {
    return this.#clientOf(uri).client?.serverMeta;
  }

  // ---- the root catalogue: every host's terminals ----

  #rootChanged(): void {
    this.#merged = undefined;
    // Nothing is shown before the home host's own list: the page decides its
    // startup terminal on it. Hosts that answered earlier are in it then.
    if (!this.home.state(ROOT_CHANNEL)) return;
    this.#emit('snapshot', ROOT_CHANNEL, this.state(ROOT_CHANNEL), 'subscribe');
  }

  #mergedRoot(): RootState | undefined {
    const home = this.home.state<RootState>(ROOT_CHANNEL);
    if (!home) return undefined;
    if (this.#merged) return this.#merged;
    const terminals: TerminalInfo[] = [...(home.terminals ?? [])];
    for (const name of this.#order) {
      const st = this.#remotes.get(name)?.client.state<RootState>(ROOT_CHANNEL);
      for (const t of st?.terminals ?? []) terminals.push({ ...t, resource: hostUri(name, t.resource) });
    }
    this.#merged = { ...home, terminals };
    return this.#merged;
  }

  // ---- channels ----

  state<S>(channel: string): S | undefined {
    if (channel === ROOT_CHANNEL) return this.#mergedRoot() as S | undefined;
    const c = this.#clientOf(channel);
    return c.client?.state<S>(c.uri);
  }

  confirmed<S>(channel: string): S | undefined {
    if (channel === ROOT_CHANNEL) return this.home.confirmed<S>(channel);
    const c = this.#clientOf(channel);
    return c.client?.confirmed<S>(c.uri);
  }

  pending(channel: string): ReturnType<AhpClient['pending']> {
    const c = this.#clientOf(channel);
    return c.client?.pending(c.uri) ?? [];
  }

  commandMeta(channel: string, commandId: string): Record<string, unknown> | undefined {
    const c = this.#clientOf(channel);
    return c.client?.commandMeta(c.uri, commandId);
  }

  isSubscribed(channel: string): boolean {
    const c = this.#clientOf(channel);
    return c.client?.isSubscribed(c.uri) ?? false;
  }

  /**
   * Subscribe to a channel of any host. One of a host the page has not heard
   * of yet (a deep link or a restored tab, before the host list came) waits
   * for the list; of a host the list does not have, it is not found.
   */
  async subscribe(channel: string): Promise<unknown> {
    let c = this.#clientOf(channel);
    if (!c.client && c.host && !this.#listed) {
      await new Promise<void>((resolve) => {
        const off = this.on('hosts', () => {
          if (!this.#listed) return;
          off();
          resolve();
        });
      });
      c = this.#clientOf(channel);
    }
    if (!c.client) throw new Error(`${channel} not found: its host ${c.host} is not listed`);
    return c.client.subscribe(c.uri);
  }

  unsubscribe(channel: string): void {
    const c = this.#clientOf(channel);
    c.client?.unsubscribe(c.uri);
  }

  dispatch(channel: string, action: StateAction): number | undefined {
    const c = this.#clientOf(channel);
    if (!c.client) return undefined;
    if (c.host && action.type === 'terminal/claimed' && action.claim.kind === 'client' && action.claim.clientId === this.home.clientId) {
      // Our claim on that host is made with our clientId there.
      action = { ...action, claim: { ...action.claim, clientId: c.client.clientId } };
    }
    return c.client.dispatch(c.uri, action);
  }

  /**
   * A request goes to the host of the channel or terminal it names (a
   * ROOT_CHANNEL request about a terminal, like x-share/create, to the
   * terminal's host), with that host's own URIs; the answer's URIs come back
   * named as the page names them.
   */
  request(method: string, params: Record<string, unknown>): Promise<unknown> {
    let named = [params.channel, params.terminal].find((x): x is string => typeof x === 'string' && splitHostUri(x).host !== '');
    // An approval is answered on the host that asked (its id names no terminal).
    const approvalHost = method === extMethods.approvalAnswer && typeof params.id === 'string' ? this.#approvalHost(params.id) : '';
    if (!named && approvalHost) named = hostUri(approvalHost, ROOT_CHANNEL);
    if (!named) return this.home.request(method, params);
    const { host, client } = this.#clientOf(named);
    if (!client) return Promise.reject(new Error('offline'));
    const out = mapUris(params, (u) => splitHostUri(u).uri) as Record<string, unknown>;
    return client.request(method, out).then((r) => mapUris(r, (u) => hostUri(host, u)));
  }

  createTerminal(p: CreateTerminalParams): Promise<unknown> {
    const c = this.#clientOf(p.channel);
    if (!c.client) return Promise.reject(new Error('offline'));
    const claim = c.host && p.claim.kind === 'client' ? { ...p.claim, clientId: c.client.clientId } : p.claim;
    return c.client.createTerminal({ ...p, channel: c.uri, claim });
  }

  disposeTerminal(channel: string): Promise<unknown> {
    const c = this.#clientOf(channel);
    if (!c.client) return Promise.reject(new Error('offline'));
    return c.client.disposeTerminal(c.uri);
  }

  // ---- notifications ----

  /** The host whose approvals list has this approval ("" the home host, or none). */
  #approvalHost(id: string): string {
    for (const [host, list] of this.#approvals) if (list.some((a) => a.id === id)) return host;
    return '';
  }

  #notification(host: string, method: string, params: unknown): void {
    const p = host ? mapUris(params, (u) => hostUri(host, u)) : params;
    if (method === extNotifications.approvals) {
      // Each host sends its whole list: the page shows all of them.
      const list = (p as { approvals?: unknown })?.approvals;
      this.#approvals.set(host, Array.isArray(list) ? (list as Approval[]) : []);
      this.#emit('notification', method, { approvals: [...this.#approvals.values()].flat() });
      return;
    }
    this.#emit('notification', method, p);
  }
}

