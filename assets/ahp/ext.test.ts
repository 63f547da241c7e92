// ext.ts against the Go side's schema.json (ahp/ext): the same requests,
// notifications and _meta keys, and no other module spells them out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { extMeta, extMethods, extNotifications } from './ext';

const repoRoot = process.env.TERMHOST_REPO_ROOT ?? process.cwd();

interface SchemaIndex {
  requests: Record<string, { params: string; result: string | null }>;
  notifications: Record<string, string>;
  meta: Record<string, { in: string; value: string }>;
  $defs: Record<string, unknown>;
}

const schema = JSON.parse(readFileSync(path.join(repoRoot, 'ahp', 'ext', 'schema.json'), 'utf8')) as SchemaIndex;

const sorted = (v: Iterable<string>) => [...v].sort();

test('extMethods are the requests of schema.json', () => {
  assert.deepEqual(sorted(Object.values(extMethods)), sorted(Object.keys(schema.requests)));
});

test('extNotifications are the notifications of schema.json', () => {
  assert.deepEqual(sorted(Object.values(extNotifications)), sorted(Object.keys(schema.notifications)));
});

test('extMeta are the _meta keys of schema.json', () => {
  assert.deepEqual(sorted(Object.values(extMeta)), sorted(Object.keys(schema.meta)));
});

test('every name is spelled once', () => {
  for (const [what, names] of [
    ['extMethods', Object.values(extMethods)],
    ['extNotifications', Object.values(extNotifications)],
    ['extMeta', Object.values(extMeta)],
  ] as const) {
    assert.equal(new Set<string>(names).size, names.length, `${what} has a name twice`);
  }
});

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sources(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The code of a source without its comments (block comments, and line comments after a space or at the start). */
function code(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|\s)\/\/.*$/gm, '$1');
}

test('only ext.ts spells out the extension names', () => {
  const own = path.join(repoRoot, 'assets', 'ahp', 'ext.ts');
  const literal = /['"`](x-termhost\/|x-share\/|termhost\/)[^'"`]*['"`]/g;
  const found: string[] = [];
  for (const file of sources(path.join(repoRoot, 'assets'))) {
    if (file === own) continue;
    for (const m of code(readFileSync(file, 'utf8')).matchAll(literal)) found.push(`${path.relative(repoRoot, file)}: ${m[0]}`);
  }
  assert.deepEqual(found, [], 'import the names from assets/ahp/ext.ts');
});

test('the guard sees a literal and skips comments', () => {
  const literal = /['"`](x-termhost\/|x-share\/|termhost\/)[^'"`]*['"`]/g;
  assert.equal([...code("request('x-share/list', {}); // 'x-share/list'\n/** \"termhost/runBy\" */").matchAll(literal)].length, 1);
});
