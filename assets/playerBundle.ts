// The replay player bundle (static/dist/player.js): asciinema-player,
// published on a global that workbench/player.ts reads once it has loaded
// this script on demand. Kept out of app.js so a first visit does not
// download it (see build.mjs).
import { create } from 'asciinema-player';

(globalThis as unknown as { __termhostPlayer: unknown }).__termhostPlayer = { create };
