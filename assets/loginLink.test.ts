import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loginFragment } from './loginLink';

test('loginFragment', () => {
  const cases: [string, string | undefined][] = [
    ['http://127.0.0.1:8080/#token=abc123', 'token=abc123'],
    ['  https://host.example/term/s/x1#share=s3cr%2Bet \n', 'share=s3cr%2Bet'],
    ['abc123', 'token=abc123'],
    ['#token=abc', 'token=abc'],
    ['http://127.0.0.1:8080/', undefined],
    ['http://127.0.0.1:8080/#nothing=1', undefined],
    ['two words', undefined],
    ['', undefined],
  ];
  for (const [inp, want] of cases) assert.equal(loginFragment(inp), want, `loginFragment(${JSON.stringify(inp)})`);
});
