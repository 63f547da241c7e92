import { test } from 'node:test';
import assert from 'node:assert/strict';
import { claimLabel, cwdLabel, formatBytes, formatDuration, newTerminalId, sentence, stripAnsi } from './format';

test('formatDuration', () => {
  const cases: [number, string][] = [
    [5, '5 ms'],
    [999, '999 ms'],
    [1234, '1.2 s'],
    [42_000, '42 s'],
    [125_000, '2m 5s'],
    [3_720_000, '1h 2m'],
  ];
  for (const [ms, want] of cases) assert.equal(formatDuration(ms), want, `formatDuration(${ms})`);
});

test('formatBytes', () => {
  const cases: [number, string][] = [
    [0, '0 B'],
    [999, '999 B'],
    [1000, '1.0 kB'],
    [65_536, '65.5 kB'],
    [99_960, '100 kB'],
    [999_960, '1.0 MB'],
    [12_345_678, '12.3 MB'],
    [123_456_789, '123 MB'],
    [4_200_000_000, '4.2 GB'],
    [-1, ''],
    [NaN, ''],
  ];
  for (const [n, want] of cases) assert.equal(formatBytes(n), want, `formatBytes(${n})`);
});

test('stripAnsi', () => {
  const cases: [string, string][] = [
    ['plain\r\ntext\r\n', 'plain\ntext\n'],
    ['\x1b[1;31merror\x1b[0m: x', 'error: x'],
    ['\x1b]0;title\x07hi', 'hi'],
    ['\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\', 'link'],
    ['50%\r100%\n', '100%\n'],
    ['abc\rX', 'Xbc'],
    ['\x1b(Bok\x1b=', 'ok'],
  ];
  for (const [inp, want] of cases) assert.equal(stripAnsi(inp), want, `stripAnsi(${JSON.stringify(inp)})`);
});

test('claimLabel', () => {
  assert.equal(claimLabel({ kind: 'client', clientId: 'me' }, 'me'), 'you');
  // Never a raw client id: presence names people.
  assert.equal(claimLabel({ kind: 'client', clientId: 'web-5da54fa59d8e7aad' }, 'me'), 'another client');
  assert.equal(claimLabel({ kind: 'session', session: 'copilot:/s', chat: 'copilot:/c' }, 'me'), 'an agent session');
});

test('cwdLabel', () => {
  assert.equal(cwdLabel('file:///home/u/src', '/home/u'), '~/src');
  assert.equal(cwdLabel('file:///tmp/a%20b'), '/tmp/a b');
  assert.equal(cwdLabel('file://host/srv'), '/srv');
  assert.equal(cwdLabel(undefined), '');
  assert.equal(cwdLabel('/plain/path'), '/plain/path');
});

test('newTerminalId is URL-safe and random', () => {
  const a = newTerminalId();
  assert.match(a, /^[a-z2-9]{10}$/);
  assert.notEqual(a, newTerminalId());
});

test('sentence', () => {
  const cases: [string, string][] = [
    ['that link is not valid (wrong, expired or revoked)\n', 'That link is not valid (wrong, expired or revoked).'],
    ['too many failed sign-ins from your address; wait a little', 'Too many failed sign-ins from your address; wait a little.'],
    ['Already fine.', 'Already fine.'],
    ['', ''],
  ];
  for (const [input, want] of cases) assert.equal(sentence(input), want, `sentence(${JSON.stringify(input)})`);
});
