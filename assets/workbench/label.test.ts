import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { cleanLabel } from './label';

test('cleanLabel: the cases the server passes too (internal/label/testdata/clean.json)', () => {
  const repoRoot = process.env.TERMHOST_REPO_ROOT ?? process.cwd();
  const cases = JSON.parse(readFileSync(path.resolve(repoRoot, 'internal/label/testdata/clean.json'), 'utf8')) as [string, string][];
  assert.ok(cases.length > 5);
  for (const [input, want] of cases) assert.equal(cleanLabel(input), want, JSON.stringify(input));
});
