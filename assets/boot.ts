// Starts the browser app: reads the page config, connects the AHP client and
// starts the workbench. Shared by the production entry (main.ts) and the
// test-build entry (testmain.ts).

import { AhpClient, type ClientTimings } from './ahp/client';
import { MultiHostClient, type ProbeResult } from './ahp/multihost';
import { extNotifications } from './ahp/ext';
import { hostApiUrl, hostWsUrl, parseHostList, type HostEntry } from './ahp/hosts';
import { Workbench, type AppConfig } from './workbench/app';
import { parseRole, wsUrl } from './workbench/access';

/** GET <base>/api/hosts: the other hosts this page connects to (none: the page is single-host, as ever). */
async function loadHosts(basePath: string, client: MultiHostClient): Promise<void> {
  try {
    const r = await fetch(`${basePath}/api/hosts`, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
    // An older server has no list (404): this page is single-host.
    client.setHosts(parseHostList(r.ok ? await r.json() : {}));
    performance.mark('termhost:hosts');
  } catch (e) {
    console.warn('termhost: no host list', e);
    client.setHosts(parseHostList({}));
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

function readConfig(): AppConfig {
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
 * Starts the app once the DOM is ready; `started` runs before the client
 * connects. `timings` override the client's defaults (the test build's
 * short liveness intervals).
 */
export function boot(started?: (wb: Workbench) => void, timings?: ClientTimings): void {
  const start = () => {
    if (!document.getElementById('workbench')) return; // e.g. the not-found page
    const config = readConfig();
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
    const client = new MultiHostClient(home, {
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
    // The browser knows first when the network goes: check the link now
    // rather than at the next ping; and retry at once when it comes back.
    window.addEventListener('offline', () => client.checkLiveness());
    window.addEventListener('online', () => {
      client.retryNow();
      client.retryHosts();
    });
    // Back from another host's sign-in tab: try the hosts that needed it.
    window.addEventListener('focus', () => client.retryHosts());
    document.addEventListener('visibilitychange', () => document.visibilityState === 'visible' && client.retryHosts());
    const wb = new Workbench(config, client);
    started?.(wb);
    client.connect();
    // Only the owner's and a signed-in person's page learns of other hosts: a
    // share link's page shows its one terminal, nothing else. The list never
    // holds up the home host: its terminals show as soon as it answers.
    if (config.role === 'owner' || config.person) {
      client.on('notification', (method, params) => {
        if (method === extNotifications.hosts) client.setHosts(parseHostList(params));
      });
      void loadHosts(config.basePath, client);
    }
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}
