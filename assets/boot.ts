// Starts the browser app: reads the page config, connects the AHP client and
// starts the workbench. Shared by the production entry (main.ts) and the
// test-build entry (testmain.ts).

import { AhpClient, type ClientTimings } from './ahp/client';
import { Workbench, type AppConfig } from './workbench/app';
import { parseRole, wsUrl } from './workbench/access';

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
function tabClientId(config: AppConfig, fresh = false): string {
  const key = 'termhost.clientId.' + (config.role === 'owner' ? 'owner' : config.role + ':' + config.terminalId);
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
    const client = new AhpClient({
      // A share link's page names its terminal so the server uses that link's cookie.
      url: wsUrl(location, config.basePath, config.role, config.terminalId),
      clientId: tabClientId(config),
      freshClientId: () => tabClientId(config, true),
      clientInfo: { name: 'termhost-web', version: config.version || undefined },
      ...(config.scrollback > 0 ? { contentBudget: config.scrollback } : {}),
      ...timings,
    });
    // The browser knows first when the network goes: check the link now
    // rather than at the next ping; and retry at once when it comes back.
    window.addEventListener('offline', () => client.checkLiveness());
    window.addEventListener('online', () => client.retryNow());
    const wb = new Workbench(config, client);
    started?.(wb);
    client.connect();
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}
