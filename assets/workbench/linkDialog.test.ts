import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isOpenableUrl } from './linkDialog';

test('isOpenableUrl: only http(s) targets open', () => {
  const cases: [string, boolean][] = [
    ['https://example.com/a?b=c', true],
    ['http://localhost:8080/', true],
    ['javascript:alert(1)', false],
    ['file:///etc/passwd', false],
    ['data:text/html,<b>x</b>', false],
    ['not a url', false],
  ];
  for (const [target, want] of cases) assert.equal(isOpenableUrl(target), want, `isOpenableUrl(${JSON.stringify(target)})`);
});
