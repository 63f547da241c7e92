// Front-end build for termhost. The bundles are committed (README.md,
// "Development") so that Go alone builds and installs termhost; exact
// versions and `npm ci` make a rebuild byte-for-byte the same.
//
//   node build.mjs           one-shot production build into static/dist/
//   node build.mjs --watch   rebuild on change
//   node build.mjs --test    compile assets/**/*.test.ts and run them with node --test
//
// Output (all minified, byte-for-byte reproducible for a given lockfile):
//   static/dist/vendor.js         xterm.js + addons, exposed on globalThis.__termhostVendor
//   static/dist/app.js(.map)      our code; @xterm/* imports resolve to the vendor global
//   static/dist/app-test.js       the same app plus the e2e test hook (window.__termhost);
//                                 served only by a server configured with TestHooks
//   static/dist/login.js(.map)    the sign-in page's script (pages have no inline script)
//   static/dist/player.js, .css   asciinema-player (replays of recordings), loaded by
//                                 workbench/player.ts only when a replay opens, so it is
//                                 not part of a first visit
//   static/dist/vendor.css        xterm.css
//   static/dist/app.css           the workbench styles
//   static/dist/*.js.gz, *.js.br, *.css.gz, *.css.br
//                                 precompressed copies (gzip -9, brotli 11), served by
//                                 static/static.go per Accept-Encoding: a first visit
//                                 transfers about a fifth of the bundles' size
// Keeping vendor and app apart keeps most diffs of the committed bundles small.
import * as esbuild from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import zlib from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.dirname(fileURLToPath(import.meta.url));
const outdir = path.join(root, 'static', 'dist');
const args = new Set(process.argv.slice(2));

// Every @xterm package the app may import. vendor.ts registers exactly these.
const vendorPackages = [
  '@xterm/xterm',
  '@xterm/addon-fit',
  '@xterm/addon-webgl',
  '@xterm/addon-search',
  '@xterm/addon-web-links',
  '@xterm/addon-unicode11',
];

/** Resolves @xterm/* imports in the app bundle to the vendor bundle's global. */
const vendorGlobal = {
  name: 'vendor-global',
  setup(build) {
    build.onResolve({ filter: /^@xterm\// }, (a) => {
      if (!vendorPackages.includes(a.path)) {
        return { errors: [{ text: `${a.path} is not in the vendor bundle (build.mjs vendorPackages)` }] };
      }
      return { path: a.path, namespace: 'vendor-global' };
    });
    build.onLoad({ filter: /.*/, namespace: 'vendor-global' }, (a) => ({
      contents: `module.exports = globalThis.__termhostVendor[${JSON.stringify(a.path)}];`,
      loader: 'js',
    }));
  },
};

const common = {
  bundle: true,
  minify: true,
  sourcemap: 'linked',
  target: ['es2022', 'chrome110', 'firefox115', 'safari16'],
  logLevel: 'warning',
  absWorkingDir: root,
  legalComments: 'eof',
  charset: 'utf8',
};

const builds = [
  {
    ...common,
    entryPoints: { vendor: 'assets/vendor.ts' },
    outdir,
    format: 'iife',
    // The xterm packages ship minified code whose own maps point at sources
    // we do not ship; a vendor map would be 700 KB of dead weight.
    sourcemap: false,
  },
  {
    ...common,
    entryPoints: { app: 'assets/main.ts' },
    outdir,
    format: 'iife',
    plugins: [vendorGlobal],
  },
  {
    ...common,
    // Test build only (see assets/testmain.ts): no map, it is never served in production.
    sourcemap: false,
    entryPoints: { 'app-test': 'assets/testmain.ts' },
    outdir,
    format: 'iife',
    plugins: [vendorGlobal],
  },
  {
    ...common,
    entryPoints: { login: 'assets/login.ts' },
    outdir,
    format: 'iife',
  },
  {
    ...common,
    // Library code only, like vendor: no map.
    sourcemap: false,
    entryPoints: { player: 'assets/playerBundle.ts' },
    outdir,
    format: 'iife',
  },
  {
    ...common,
    sourcemap: false,
    entryPoints: { player: 'node_modules/asciinema-player/dist/bundle/asciinema-player.css' },
    outdir,
    loader: { '.css': 'css' },
  },
  {
    ...common,
    sourcemap: false,
    entryPoints: { vendor: 'node_modules/@xterm/xterm/css/xterm.css' },
    outdir,
    loader: { '.css': 'css' },
  },
  {
    ...common,
    sourcemap: false,
    entryPoints: { app: 'assets/styles/app.css' },
    outdir,
    loader: { '.css': 'css' },
  },
];

/**
 * Writes name.gz and name.br next to every bundle and stylesheet. Both are
 * byte-for-byte reproducible: zlib's gzip header carries no name and a zero
 * mtime, and neither encoder is randomised. Source maps stay uncompressed
 * (owner-only, rarely fetched).
 */
function precompress(dir) {
  for (const name of readdirSync(dir).sort()) {
    if (!/\.(js|css)$/.test(name)) continue;
    const src = readFileSync(path.join(dir, name));
    writeFileSync(path.join(dir, name + '.gz'), zlib.gzipSync(src, { level: 9 }));
    writeFileSync(
      path.join(dir, name + '.br'),
      zlib.brotliCompressSync(src, {
        params: {
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
          [zlib.constants.BROTLI_PARAM_QUALITY]: zlib.constants.BROTLI_MAX_QUALITY,
          [zlib.constants.BROTLI_PARAM_SIZE_HINT]: src.length,
        },
      }),
    );
  }
}

function findTests(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...findTests(p));
    else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

async function runTests() {
  const testOut = path.join(root, 'node_modules', '.cache', 'termhost-test');
  rmSync(testOut, { recursive: true, force: true });
  mkdirSync(testOut, { recursive: true });
  const entries = findTests(path.join(root, 'assets'));
  if (entries.length === 0) throw new Error('no *.test.ts files under assets/');
  await esbuild.build({
    entryPoints: entries,
    outdir: testOut,
    outbase: path.join(root, 'assets'),
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'inline',
    packages: 'external',
    logLevel: 'warning',
  });
  const files = entries.map((e) =>
    path.join(testOut, path.relative(path.join(root, 'assets'), e)).replace(/\.ts$/, '.mjs'),
  );
  const r = spawnSync(process.execPath, ['--enable-source-maps', '--test', ...files], {
    stdio: 'inherit',
    cwd: root,
    env: { ...process.env, TERMHOST_REPO_ROOT: root },
  });
  process.exit(r.status ?? 1);
}

async function main() {
  if (args.has('--test')) return runTests();
  if (args.has('--watch')) {
    const ctxs = await Promise.all(builds.map((b) => esbuild.context({ ...b, logLevel: 'info' })));
    await Promise.all(ctxs.map((c) => c.watch()));
    console.log('watching assets/ …');
    return;
  }
  rmSync(outdir, { recursive: true, force: true });
  mkdirSync(outdir, { recursive: true });
  // Sequential: the machines have 2 cores and the builds are small.
  const bundled = new Set();
  for (const b of builds) {
    const { metafile } = await esbuild.build({ ...b, metafile: true });
    for (const input of Object.keys(metafile.inputs)) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
      if (m) bundled.add(m[1]);
    }
  }
  writeLicenses(withDependencies(bundled), path.join(outdir, 'THIRD-PARTY-LICENSES.txt'));
  precompress(outdir);
}

/**
 * The packages and, transitively, their dependencies: a package may ship a
 * bundle of its own that contains them (asciinema-player has solid-js).
 */
function withDependencies(names) {
  const all = new Set();
  const visit = (name) => {
    if (all.has(name)) return;
    all.add(name);
    const meta = JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8'));
    for (const dep of Object.keys(meta.dependencies ?? {})) visit(dep);
  };
  for (const name of names) visit(name);
  return [...all].sort();
}

/**
 * Writes the license of every npm package the bundles contain (most ship no
 * license comment for legalComments to keep), so that what termhost serves
 * carries them: static/dist/THIRD-PARTY-LICENSES.txt.
 */
function writeLicenses(packages, file) {
  const parts = packages.map((name) => {
    const dir = path.join(root, 'node_modules', name);
    const meta = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
    const licenseFile = readdirSync(dir).sort().find((f) => /^(licen[cs]e|copying)(\.|$)/i.test(f));
    const text = licenseFile ? readFileSync(path.join(dir, licenseFile), 'utf8').trim() : `(no license file; package.json says ${meta.license})`;
    return `${name} ${meta.version} (${meta.license})\n${'-'.repeat(72)}\n${text}\n`;
  });
  writeFileSync(file, `Third-party code in termhost's web bundles (static/dist), with its licenses.\n\n${parts.join('\n')}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
