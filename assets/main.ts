// termhost browser app entry: reads the page config, connects the AHP client
// and starts the workbench.

import { AhpClient } from './ahp/client';
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
  };
}

/** A stable client id per browser tab (survives reloads of this tab). */
function tabClientId(): string {
  const key = 'termhost.clientId';
  let id = sessionStorage.getItem(key);
  if (!id) {
    const b = new Uint8Array(8);
    crypto.getRandomValues(b);
    id = 'web-' + Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    sessionStorage.setItem(key, id);
  }
  return id;
}

function start(): void {
  if (!document.getElementById('workbench')) return; // e.g. the not-found page
  const config = readConfig();
  const client = new AhpClient({
    // A share link's page names its terminal so the server uses that link's cookie.
    url: wsUrl(location, config.basePath, config.role, config.terminalId),
    clientId: tabClientId(),
    clientInfo: { name: 'termhost-web', version: config.version || undefined },
  });
  const wb = new Workbench(config, client);
  (window as unknown as { __termhost: unknown }).__termhost = wb.testHook();
  client.connect();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
