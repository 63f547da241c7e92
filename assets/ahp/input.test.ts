import { test } from 'node:test';
import assert from 'node:assert/strict';
import { inputParts, MAX_INPUT_PART } from './input';

test('small input is one part', () => {
  assert.deepEqual(inputParts('ls\r'), ['ls\r']);
  assert.deepEqual(inputParts(''), ['']);
});

test('a large paste is cut into parts that join to it', () => {
  const paste = 'x'.repeat(3 * MAX_INPUT_PART + 5);
  const parts = inputParts(paste);
  assert.equal(parts.length, 4);
  assert.ok(parts.every((p) => p.length <= MAX_INPUT_PART));
  assert.equal(parts.join(''), paste);
});

test('a surrogate pair is never split', () => {
  const paste = 'ab😀cd😀😀e';
  for (let max = 2; max <= paste.length; max++) {
    const parts = inputParts(paste, max);
    assert.equal(parts.join(''), paste);
    for (const p of parts) {
      assert.ok(p.length <= max);
      assert.doesNotMatch(p, /^[\udc00-\udfff]|[\ud800-\udbff]$/, `max ${max}: part ${JSON.stringify(p)} splits a pair`);
    }
  }
});
