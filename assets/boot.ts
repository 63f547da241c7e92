// Starts the browser app: reads the page config, makes the AHP clients,
// starts the workbench and connects them (connect.ts). Shared by the
// production entry (main.ts) and the test-build entry (testmain.ts).

import type { ClientTimings } from './ahp/client';
import { connectAll, newClient, readConfig } from './connect';
import { Workbench } from './workbench/app';

/**
 * Starts the app once the DOM is ready; `started` runs before the client
 * connects. `timings` override the client's defaults (the test build's
 * short liveness intervals).
 */
export function boot(started?: (wb: Workbench) => void, timings?: ClientTimings): void {
  const start = () => {
    if (!document.getElementById('workbench')) return; // e.g. the not-found page
    const config = readConfig();
    const client = newClient(config, timings);
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
    connectAll(config, client);
  };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
}
