import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downloadUrl, recordingStateOf } from './recording';
import type { TerminalInfo } from '../ahp/types';

test('recordingStateOf', () => {
  const info = (meta?: Record<string, unknown>): TerminalInfo => ({ resource: 'ahp-terminal:/a', title: 'a', claim: { kind: 'client', clientId: 'c' }, _meta: meta });
  const cases: [TerminalInfo | undefined, string | undefined][] = [
    [undefined, undefined],
    [info(), undefined],
    [info({ 'termhost/recording': 'recording' }), 'recording'],
    [info({ 'termhost/recording': 'paused' }), 'paused'],
    [info({ 'termhost/recording': 'stopped' }), 'stopped'],
    [info({ 'termhost/recording': true }), undefined],
  ];
  for (const [i, want] of cases) assert.equal(recordingStateOf(i), want, JSON.stringify(i?._meta));
});

test('downloadUrl', () => {
  assert.equal(downloadUrl('/term', 'ahp-terminal:/abc', 'recording.cast'), '/term/t/abc/recording.cast');
  assert.equal(downloadUrl('', 'agenthost-terminal:/x', 'output.txt'), '/t/agenthost-terminal%3A%2Fx/output.txt');
});
