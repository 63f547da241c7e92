import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NameMemory, terminalName, unknownName } from './terminalNames';

// One name everywhere: the server's title, the one
// termhost ls shows, not a name made up from the cwd or the running
// program, which the tab had while the side bar and ls said "bash".
test('terminalName', async (t) => {
  const cases: { name: string; facts: Parameters<typeof terminalName>[0]; want: string }[] = [
    { name: "the server's title", facts: { title: 'bash' }, want: 'bash' },
    { name: 'a rename', facts: { title: 'build box', lastKnown: 'bash' }, want: 'build box' },
    { name: 'gone from the server: the title it had', facts: { title: '', lastKnown: 'htop' }, want: 'htop' },
    { name: 'never the id', facts: {}, want: unknownName },
    { name: 'blank title', facts: { title: '  ', lastKnown: 'zsh' }, want: 'zsh' },
  ];
  for (const c of cases) {
    await t.test(c.name, () => assert.equal(terminalName(c.facts), c.want, `terminalName(${JSON.stringify(c.facts)})`));
  }
});

test('NameMemory keeps a closed terminal named', () => {
  const m = new NameMemory();
  const uri = 'ahp-terminal:/86u4jmzjb6';
  assert.equal(m.name(uri, 'bash'), 'bash');
  m.note(uri, 'deploy');
  assert.equal(m.name(uri, undefined), 'deploy', 'after a restart the toast names the terminal as it was called');
  assert.ok(!m.name('ahp-terminal:/x1', undefined).includes('x1'), 'never the raw id');
});

test('terminalName: a title without direction or control characters', () => {
  assert.equal(terminalName({ title: 'build\u202e\u001b]0;x\u0007' }), 'build]0;x');
  assert.equal(terminalName({ title: '\u202e', lastKnown: 'old\u2066' }), 'old');
});
