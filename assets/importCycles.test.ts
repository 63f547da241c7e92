// Fails on any import cycle among assets/**/*.ts, type-only imports
// included: a cycle makes module order matter and ties modules that should
// not know each other. madge and dpdm, the usual tools, need TypeScript's
// JavaScript API, which typescript 7 (the Go port this repo pins) lacks, so
// the few lines below read the import statements themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repoRoot = process.env.TERMHOST_REPO_ROOT ?? process.cwd();
const assets = path.join(repoRoot, 'assets');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Relative imports and re-exports of a file, resolved to files. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s*['"](\.[^'"]+)['"]|^\s*import\s*['"](\.[^'"]+)['"]/gm)) {
    const spec = path.resolve(path.dirname(file), m[1] ?? m[2]);
    const hit = [spec + '.ts', path.join(spec, 'index.ts'), spec].find((p) => existsSync(p) && statSync(p).isFile());
    if (hit) out.push(hit);
  }
  return out;
}

/** Every cycle's files, found by a depth-first walk (each reported once per back edge). */
function cycles(files: string[]): string[][] {
  const graph = new Map(files.map((f) => [f, imports(f)]));
  const done = new Set<string>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (f: string) => {
    const at = stack.indexOf(f);
    if (at >= 0) {
      found.push([...stack.slice(at), f]);
      return;
    }
    if (done.has(f)) return;
    stack.push(f);
    for (const g of graph.get(f) ?? []) visit(g);
    stack.pop();
    done.add(f);
  };
  for (const f of files) visit(f);
  return found;
}

test('a cycle through a type-only, multi-line import is found', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cycles-'));
  writeFileSync(path.join(dir, 'a.ts'), "import {\n  b,\n} from './b';\nexport const a = 1;\n");
  writeFileSync(path.join(dir, 'b.ts'), "import type { A } from './a';\nexport const b = 2;\n");
  writeFileSync(path.join(dir, 'c.ts'), "import { a } from './a';\n");
  const at = (n: string) => path.join(dir, n);
  assert.deepEqual(cycles([at('c.ts'), at('a.ts'), at('b.ts')]), [[at('a.ts'), at('b.ts'), at('a.ts')]]);
  rmSync(dir, { recursive: true });
});

test('assets/ has no import cycle', () => {
  const rel = (f: string) => path.relative(assets, f);
  assert.deepEqual(cycles(sources(assets)).map((c) => c.map(rel).join(' → ')), []);
});
