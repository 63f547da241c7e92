// termhost browser app entry: reads the page config, connects the AHP client
// and starts the workbench.

import { AhpClient } from './ahp/client';
import { Workbench, type AppConfig } from './workbench/app';

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
    role: raw.role || 'owner',
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
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const client = new AhpClient({
    url: `${proto}//${location.host}${config.basePath}/ws`,
    clientId: tabClientId(),
    clientInfo: { name: 'termhost-web', version: config.version || undefined },
  });
  const wb = new Workbench(config, client);
  (window as unknown as { __termhost: unknown }).__termhost = wb.testHook();
  client.connect();
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
else start();
