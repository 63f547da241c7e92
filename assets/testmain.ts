// Test-build entry (static/dist/app-test.js): the app plus window.__termhost,
// the hook the e2e tests drive it with. The server loads this bundle only
// when its handlers.Config has TestHooks (set by the e2e harness, never by a
// flag), and serves it to nobody otherwise.

import type { ClientTimings } from './ahp/client';
import { boot } from './boot';
import { installTestHook } from './workbench/testhook';

// A test may set short client timings (liveness) before the page loads.
const timings = (window as unknown as { __termhostClientOptions?: ClientTimings }).__termhostClientOptions;
boot(installTestHook, timings);
