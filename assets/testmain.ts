// Test-build entry (static/dist/app-test.js): the app plus window.__termhost,
// the hook the e2e tests drive it with. The server loads this bundle only
// when its handlers.Config has TestHooks (set by the e2e harness, never by a
// flag), and serves it to nobody otherwise.

import { boot } from './boot';
import { installTestHook } from './workbench/testhook';

boot(installTestHook);
