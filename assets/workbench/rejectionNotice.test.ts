import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RejectionNotice } from './rejectionNotice';

test('RejectionNotice shows a burst of the same refusal once', () => {
  let now = 0;
  const shown: string[] = [];
  const n = new RejectionNotice((t) => shown.push(t), () => now);
  n.show('terminal/input', 'viewers cannot type');
  now = 2999;
  n.show('terminal/input', 'viewers cannot type');
  n.show('terminal/resized', 'viewers cannot type');
  now = 5998;
  n.show('terminal/resized', 'viewers cannot type');
  now = 5999;
  n.show('terminal/resized', 'viewers cannot type');
  n.show('x/unknown', 'no');
  assert.deepEqual(shown, [
    'Input was refused by the server: viewers cannot type.',
    'Resize was refused by the server: viewers cannot type.',
    'Resize was refused by the server: viewers cannot type.',
    'x/unknown was refused by the server: no.',
  ]);
});
