// The page's connections: reads the page's config and makes the AHP
// clients (the home host's and, through MultiHostClient, every other
// host's), then connects them all at once. Used by boot.ts; apart from the
// workbench so that its tests run without a terminal emulator.

import { AhpClient, type ClientTimings } from './ahp/client';
import { MultiHostClient, type ProbeResult } from './ahp/multihost';
import { extNotifications } from './ahp/ext';
import { hostApiUrl, hostWsUrl, parseHostList, type HostEntry } from './ahp/hosts';
import type { AppConfig } from './workbench/app';
import { parseRole, wsUrl } from './workbench/access';

/**
 * GET <base>/api/hosts: the host list again, after the page's own came with
 * it (a change between serving the page and its socket's initialize, or
 * while the link was down, sent no notification to this page). A failure
 * keeps the list the page has.
 */
async function reloadHosts(basePath: string, client: MultiHostClient): Promise<void> {
  try {
    const r = await fetch(`${basePath}/api/hosts`, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    if (r.ok) client.setHosts(parseHostList(await r.json()));
  } catch (e) {
    console.warn('termhost: no host list', e);
  }
}

/**
 * GET <base>/api/whoami of another host with that host's own cookies (its
 * origin's or its path's): why its WebSocket fails. A host that does not
 * answer in 10 s counts as unreachable.
 */
async function probeHost(h: HostEntry): Promise<ProbeResult> {
  try {
    const r = await fetch(hostApiUrl(h.url, 'api/whoami'), { credentials: 'include', headers: { Accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
    let body: unknown;
    try {
      body = await r.json();
    } catch {
      body = undefined;
    }
    return { status: r.status, body };
  } catch {
    return { status: 0 };
  }
}

/** The page's config (<script id="termhost-config">, web/page.go Config). */
export function readConfig(): AppConfig {
  const el = document.getElementById('termhost-config');
  let raw: Partial<AppConfig> = {};
  try {
    raw = el?.textContent ? (JSON.parse(el.textContent) as Partial<AppConfig>) : {};
  } catch (e) {
    console.error('termhost: bad config', e);
  }
  return {
    basePath: (raw.basePath ?? '').replace(/\/+$/, ''),
    terminalId: raw.terminalId ?? '',
    version: raw.version ?? '',
    role: parseRole(raw.role),
    serverUser: raw.serverUser ?? '',
    serverHost: raw.serverHost ?? '',
    person: typeof raw.person === 'string' ? raw.person : '',
    scrollback: raw.scrollback ?? 0,
    playerScript: raw.playerScript ?? '',
    playerStyle: raw.playerStyle ?? '',
    // Only a page whose reader may list the hosts has them (never a share link's).
    ...(raw.hosts !== undefined ? { hosts: parseHostList(raw.hosts) } : {}),
  };
}

/**
 * A stable client id per browser tab and principal (survives reloads of this
 * tab). The server binds a clientId to the credential that first used it, so
 * a tab that moves from a share link to the owner's sign-in (or to another
 * link) uses another id; `fresh` replaces one the server refused anyway.
 */
function tabClientId(config: AppConfig, fresh = false, host = ''): string {
  // Each host has its own clientId: the page is a client of each one.
  const key = 'termhost.clientId.' + (config.role === 'owner' ? 'owner' : config.role + ':' + config.terminalId) + (host ? '@' + host : '');
  let id = fresh ? null : sessionStorage.getItem(key);
  if (!id) {
    const b = new Uint8Array(8);
    crypto.getRandomValues(b);
    id = 'web-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    sessionStorage.setItem(key, id);
  }
  return id;
}

/**
 * The page's client: the home host's AhpClient and, for each other host the
 * page learns of, its own (its own URL, cookies, clientId, liveness and
 * backoff). Nothing is connected yet. `timings` override the clients'
 * defaults (the test build's short liveness intervals).
 */
export function newClient(config: AppConfig, timings?: ClientTimings): MultiHostClient {
  const clientInfo = { name: 'termhost-web', version: config.version || undefined };
  const home = new AhpClient({
    // A share link's page names its terminal so the server uses that link's cookie.
    url: wsUrl(location, config.basePath, config.role, config.terminalId),
    clientId: tabClientId(config),
    freshClientId: () => tabClientId(config, true),
    clientInfo,
    ...(config.scrollback > 0 ? { contentBudget: config.scrollback } : {}),
    ...timings,
  });
  return new MultiHostClient(home, {
    // Another host: its own socket (its cookies, never this host's), clientId, liveness and backoff.
    makeClient: (h) =>
      new AhpClient({
        url: hostWsUrl(h.url),
        clientId: tabClientId(config, false, h.name),
        freshClientId: () => tabClientId(config, true, h.name),
        clientInfo,
        ...timings,
      }),
    probe: probeHost,
  });
}

/**
 * Connects the home host and every host the config lists, all in this task:
 * no host's socket waits for a fetch or for another host's answer.
 */
export function connectAll(config: AppConfig, client: MultiHostClient): void {
  client.connect();
  // Only the owner's and a signed-in person's page learns of other hosts: a
  // share link's page shows its one terminal, nothing else. The list is in
  // the page's config, so every other host's socket starts now, beside the
  // home's, each waiting for nothing but its own host; none holds up the
  // home host, whose terminals show as soon as it answers.
  if (config.role === 'owner' || config.person) {
    if (config.hosts) {
      client.setHosts(config.hosts);
      performance.mark('termhost:hosts');
    }
    client.on('notification', (method, params) => {
      if (method === extNotifications.hosts) client.setHosts(parseHostList(params));
    });
    // From its initialize on, the home link is told of every change;
    // each time it comes online, catch up on what it could not be told.
    client.on('state', (s) => {
      if (s === 'online') void reloadHosts(config.basePath, client);
    });
  }
}
