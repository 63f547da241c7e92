// Many hosts, one workbench (README "Many boxes"): the pure parts. The home
// host (the one that served the page) lists the other termhost servers the
// person can reach (GET <base>/api/hosts); the browser connects to each one
// itself. Here: reading that list, the WebSocket URL of a host, how a
// terminal of another host is named inside the page, deep links, grouping
// and the state a host's group header shows. No DOM; tested in hosts.test.ts.

import type { TerminalInfo } from './types';

export interface HostEntry {
  name: string;
  /** The base URL the browser uses for that host (https://dev.corp/box2/). */
  url: string;
}

export interface HostList {
  /** The home host's name ("" when it has none). */
  home: string;
  /** The other hosts, in the order the file lists them (never the home host). */
  hosts: HostEntry[];
}

/** A host name as the page accepts it: it goes into URLs (/h/<name>/t/<id>) and URIs. */
export function validHostName(name: unknown): name is string {
  return typeof name === 'string' && /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/.test(name);
}

/**
 * The answer of GET <base>/api/hosts (or the params of the x-termhost/hosts
 * notification). Entries with a bad name or URL, the home host and
 * duplicates are left out: the list comes from a file a person edits.
 */
export function parseHostList(raw: unknown): HostList {
  const o = (typeof raw === 'object' && raw !== null ? raw : {}) as { home?: { name?: unknown }; hosts?: unknown };
  const home = validHostName(o.home?.name) ? o.home.name : '';
  const hosts: HostEntry[] = [];
  const seen = new Set<string>([home]);
  for (const h of Array.isArray(o.hosts) ? o.hosts : []) {
    const e = (typeof h === 'object' && h !== null ? h : {}) as { name?: unknown; url?: unknown };
    if (!validHostName(e.name) || seen.has(e.name) || typeof e.url !== 'string') continue;
    let u: URL;
    try {
      u = new URL(e.url);
    } catch {
      continue;
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') continue;
    seen.add(e.name);
    hosts.push({ name: e.name, url: u.origin + u.pathname.replace(/\/*$/, '/') });
  }
  return { home, hosts };
}

/**
 * A host's AHP WebSocket endpoint, derived from its base URL as the home
 * page derives its own (access.ts wsUrl): https://dev.corp/box2/ →
 * wss://dev.corp/box2/ws.
 */
export function hostWsUrl(base: string): string {
  const u = new URL(base);
  const proto = u.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${u.host}${u.pathname.replace(/\/+$/, '')}/ws`;
}

/** A host's API URL (whoami, hosts): https://dev.corp/box2/ + api/whoami. */
export function hostApiUrl(base: string, path: string): string {
  return base.replace(/\/*$/, '/') + path.replace(/^\/+/, '');
}

/**
 * Inside the page a terminal of another host is named by wrapping its URI:
 * termhost-host://box2/ahp-terminal:/abc. The home host's terminals keep
 * their own URIs, so a page with no other hosts is exactly as before. The
 * wrapping never leaves the page: each host only sees its own URIs.
 */
export const HOST_URI_PREFIX = 'termhost-host://';

export function hostUri(host: string, uri: string): string {
  return host ? `${HOST_URI_PREFIX}${host}/${uri}` : uri;
}

/** The host ("" = home) and that host's own URI of a page URI. */
export function splitHostUri(uri: string): { host: string; uri: string } {
  if (!uri.startsWith(HOST_URI_PREFIX)) return { host: '', uri };
  const rest = uri.slice(HOST_URI_PREFIX.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return { host: '', uri };
  return { host: rest.slice(0, slash), uri: rest.slice(slash + 1) };
}

/**
 * The terminal a page path names, below the base path: /t/<id> (the home
 * host) or /h/<host>/t/<id>. undefined for the start page or anything else.
 */
export function parseDeepLink(pathname: string, basePath: string): { host: string; id: string } | undefined {
  const base = basePath.replace(/\/+$/, '');
  if (base && !pathname.startsWith(base + '/')) return undefined;
  const rest = pathname.slice(base.length);
  const m = /^\/(?:h\/([^/]+)\/)?t\/([^/]+)$/.exec(rest);
  if (!m) return undefined;
  try {
    const host = m[1] ? decodeURIComponent(m[1]) : '';
    const id = decodeURIComponent(m[2]!);
    if (host && !validHostName(host)) return undefined;
    return id ? { host, id } : undefined;
  } catch {
    return undefined;
  }
}

/** The page path of a terminal below the base path: /t/<id>, or /h/<host>/t/<id> for another host's. */
export function deepLinkPath(host: string, id: string): string {
  return host ? `/h/${encodeURIComponent(host)}/t/${encodeURIComponent(id)}` : `/t/${encodeURIComponent(id)}`;
}

/** What a host's group header says about it. */
export type HostStatus = 'connecting' | 'connected' | 'reconnecting' | 'unreachable' | 'forbidden' | 'signin';

export const hostStatusLabels: Record<HostStatus, string> = {
  connecting: 'connecting…',
  connected: 'connected',
  reconnecting: 'reconnecting…',
  unreachable: 'unreachable',
  forbidden: 'not allowed',
  signin: 'needs sign-in',
};

/** What the page learnt about a host: its link's state, or the answer of its whoami. */
export type HostEvent =
  | { kind: 'online' }
  | { kind: 'offline' }
  /** GET <base>/api/whoami: its HTTP status, or 0 when the request failed (refused, no answer, CORS). */
  | { kind: 'probe'; status: number };

/**
 * The host state machine. A link that drops is "reconnecting" if the host
 * was connected, else "unreachable" (it never answered); the whoami probe
 * that follows a failed link tells why: 401 a sign-in is missing, 403 this
 * person may not use the host, no answer at all: unreachable. While a
 * sign-in is missing or access is refused, further failed attempts do not
 * change the state: only a working link or another answer of whoami does.
 */
export function nextHostStatus(prev: HostStatus, e: HostEvent): HostStatus {
  switch (e.kind) {
    case 'online':
      return 'connected';
    case 'offline':
      if (prev === 'signin' || prev === 'forbidden' || prev === 'unreachable') return prev;
      return prev === 'connected' || prev === 'reconnecting' ? 'reconnecting' : 'unreachable';
    case 'probe':
      if (prev === 'connected') return prev;
      if (e.status === 401) return 'signin';
      if (e.status === 403) return 'forbidden';
      if (e.status === 0 || e.status >= 500) return 'unreachable';
      // The host answers and knows us: the link itself failed; keep trying.
      return prev === 'signin' || prev === 'forbidden' || prev === 'unreachable' ? 'reconnecting' : prev;
  }
}

/** A host whose terminals the page cannot use now: its rows and tabs are greyed out. */
export function hostDown(s: HostStatus): boolean {
  return s !== 'connected';
}

export interface HostGroup<T> {
  /** "" for the home host. */
  host: string;
  items: T[];
}

/**
 * The side bar's groups: the home host first, then the others in the hosts
 * file's order (each even when it lists no terminal: its header tells its
 * state). Terminals of a host not in the list (it was just removed) go last.
 */
export function groupByHost(list: readonly TerminalInfo[], hosts: readonly string[]): HostGroup<TerminalInfo>[] {
  const groups = new Map<string, TerminalInfo[]>([['', []]]);
  for (const h of hosts) groups.set(h, []);
  for (const t of list) {
    const host = splitHostUri(t.resource).host;
    let g = groups.get(host);
    if (!g) groups.set(host, (g = []));
    g.push(t);
  }
  return [...groups].map(([host, items]) => ({ host, items }));
}

/** The login URL a host's whoami names (401/403 {"login": …}), if it is an http(s) URL. */
export function loginUrlOf(body: unknown, base: string): string | undefined {
  const login = (typeof body === 'object' && body !== null ? (body as { login?: unknown }).login : undefined) as unknown;
  if (typeof login !== 'string' || !login) return undefined;
  try {
    const u = new URL(login, base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}
