// The vendor bundle: xterm.js and its addons, published on a global that the
// app bundle reads (see build.mjs, plugin "vendor-global"). Kept separate so
// an app change does not rewrite the large vendor file.
import * as xterm from '@xterm/xterm';
import * as fit from '@xterm/addon-fit';
import * as webgl from '@xterm/addon-webgl';
import * as search from '@xterm/addon-search';
import * as webLinks from '@xterm/addon-web-links';
import * as unicode11 from '@xterm/addon-unicode11';

(globalThis as unknown as { __termhostVendor: Record<string, unknown> }).__termhostVendor = {
  '@xterm/xterm': xterm,
  '@xterm/addon-fit': fit,
  '@xterm/addon-webgl': webgl,
  '@xterm/addon-search': search,
  '@xterm/addon-web-links': webLinks,
  '@xterm/addon-unicode11': unicode11,
};
