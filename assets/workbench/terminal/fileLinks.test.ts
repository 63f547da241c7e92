import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findFileLinks, type FileLink } from './fileLinks';

test('findFileLinks', async (t) => {
  const cases: { name: string; text: string; want: Omit<FileLink, 'start' | 'end'>[] }[] = [
    { name: 'file and line', text: 'main.go:3', want: [{ path: 'main.go', line: 3 }] },
    { name: 'relative path, line and column', text: './src/app.ts:10:5: error TS2322', want: [{ path: './src/app.ts', line: 10, column: 5 }] },
    { name: 'absolute path', text: 'grep: /etc/hosts:1:127.0.0.1 localhost', want: [{ path: '/etc/hosts', line: 1, column: 127 }] },
    { name: 'parent and home', text: '../a/b.c:7 and ~/x/y.py:8', want: [{ path: '../a/b.c', line: 7 }, { path: '~/x/y.py', line: 8 }] },
    { name: 'go test output', text: '    foo_test.go:42: got 1, want 2', want: [{ path: 'foo_test.go', line: 42 }] },
    { name: 'folder path without extension', text: 'src/Makefile:12', want: [{ path: 'src/Makefile', line: 12 }] },
    { name: 'host and port is not a path', text: 'listening on localhost:8080', want: [] },
    { name: 'URL is not a path', text: 'see http://example.com:80/x and https://a.b/c.go:3', want: [] },
    { name: 'time is not a path', text: 'at 12:30:45', want: [] },
    { name: 'no line number', text: 'main.go: no such file', want: [] },
    { name: 'line zero', text: 'main.go:0', want: [] },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = findFileLinks(c.text).map(({ start: _s, end: _e, ...rest }) => rest);
      assert.deepEqual(got, c.want, `findFileLinks(${JSON.stringify(c.text)})`);
    });
  }
});

test('findFileLinks offsets cover the path and its numbers', () => {
  const text = 'x ./src/app.ts:10:5: y';
  const [got] = findFileLinks(text);
  assert.equal(text.slice(got!.start, got!.end), './src/app.ts:10:5', `range of ${JSON.stringify(text)}`);
});
