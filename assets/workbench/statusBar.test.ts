import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlStatus } from './statusBar';

// The status bar says what the server enforces: whoever
// has control types and sizes; others watch and ask (a driver) or take it
// (the owner).
test('controlStatus', async (t) => {
  const cases: { name: string; args: Parameters<typeof controlStatus>; text: string; title: RegExp }[] = [
    { name: 'the holder', args: [true, true, 'you', 'driver'], text: 'Controlled by you', title: /you type into and size/ },
    { name: 'a driver without control asks', args: [false, false, 'Owner (Chrome on Linux)', 'driver'], text: 'Controlled by Owner (Chrome on Linux)', title: /only they type .* Click to request control/ },
    { name: 'the owner without control takes', args: [false, false, 'alice', 'owner'], text: 'Controlled by alice', title: /Alice has control: only they type .* Click to take control/ },
    { name: 'a viewer watches', args: [false, false, 'alice', 'viewer'], text: 'Controlled by alice', title: /you watch/ },
    { name: 'nobody here has it', args: [false, true, 'nobody', 'driver'], text: 'Nobody in control', title: /first to type takes it/ },
  ];
  for (const c of cases) {
    await t.test(c.name, () => {
      const got = controlStatus(...c.args);
      assert.equal(got.text, c.text);
      assert.match(got.title, c.title);
    });
  }
});
