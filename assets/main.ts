// termhost browser app entry (static/dist/app.js). It exposes nothing on
// window: the test hook lives only in the test build (testmain.ts).

import { boot } from './boot';

boot();
