import { test } from 'node:test';
import assert from 'node:assert/strict';
import { folderOf, numberDuplicates, programOf, terminalName, type NameFacts } from './terminalNames';

test('terminalName', async (t) => {
  const base: NameFacts = { title: 'bash', id: 'abc' };
  const cases: { name: string; facts: NameFacts; want: string }[] = [
    { name: 'title only', facts: base, want: 'bash' },
    { name: 'cwd wins over the title', facts: { ...base, cwd: 'file:///home/u/project' }, want: 'project' },
    { name: 'running command wins over cwd', facts: { ...base, cwd: 'file:///home/u/project', runningCommand: 'vim main.go' }, want: 'vim' },
    { name: 'rename wins over everything', facts: { title: 'build box', pinned: true, cwd: 'file:///w', runningCommand: 'make', id: 'abc' }, want: 'build box' },
    { name: 'empty rename falls back', facts: { title: '', pinned: true, cwd: 'file:///w', id: 'abc' }, want: 'w' },
    { name: 'root cwd', facts: { ...base, cwd: 'file:///' }, want: '/' },
    { name: 'program title without cwd', facts: { title: 'htop', id: 'abc' }, want: 'htop' },
    { name: 'a rename after a reload (not marked as one) still wins', facts: { title: 'build box', cwd: 'file:///w', runningCommand: 'make', id: 'abc' }, want: 'build box' },
    { name: 'the shell name is a default, not a choice', facts: { title: 'zsh', cwd: 'file:///w', id: 'abc' }, want: 'w' },
    { name: 'no title: the id', facts: { title: '', id: 'abc' }, want: 'abc' },
    { name: 'blank command line: cwd', facts: { ...base, runningCommand: '  ', cwd: 'file:///srv' }, want: 'srv' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(terminalName(c.facts), c.want, `terminalName(${JSON.stringify(c.facts)})`));
  }
});

test('programOf', () => {
  const cases: [string, string][] = [
    ['make -j4', 'make'],
    ['  sleep 10', 'sleep'],
    ['FOO=1 BAR=x go test ./...', 'go'],
    ['/usr/bin/python3 x.py', 'python3'],
    ['./build.sh', 'build.sh'],
    ['', ''],
  ];
  for (const [line, want] of cases) assert.equal(programOf(line), want, `programOf(${JSON.stringify(line)})`);
});

test('folderOf', () => {
  const cases: [string | undefined, string][] = [
    ['file:///home/u/my%20dir', 'my dir'],
    ['file://host/var/log/', 'log'],
    ['file:///', '/'],
    [undefined, ''],
  ];
  for (const [cwd, want] of cases) assert.equal(folderOf(cwd), want, `folderOf(${JSON.stringify(cwd)})`);
});

test('numberDuplicates', () => {
  const cases: [string[], string[]][] = [
    [['bash', 'bash', 'vim', 'bash'], ['bash', 'bash (2)', 'vim', 'bash (3)']],
    [['a', 'b'], ['a', 'b']],
    [[], []],
  ];
  for (const [names, want] of cases) assert.deepEqual(numberDuplicates(names), want, `numberDuplicates(${JSON.stringify(names)})`);
});
