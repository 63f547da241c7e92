import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { accessLost, accessProbeUrl, endedMessage, expiryLabel, linkBase, linksWorkForOthers, parseRole, revokedMessage, serverRestarted, shareExpiries, shareRoleNote, wsUrl, type Role } from './access';

describe('wsUrl', () => {
  const http = { protocol: 'http:', host: '127.0.0.1:8080' };
  const https = { protocol: 'https:', host: 'box.example' };
  const cases: { name: string; loc: typeof http; base: string; role: 'owner' | 'driver' | 'viewer'; id: string; want: string }[] = [
    { name: 'owner at /', loc: http, base: '', role: 'owner', id: '', want: 'ws://127.0.0.1:8080/ws' },
    { name: 'owner on a terminal page keeps the plain URL', loc: http, base: '', role: 'owner', id: 'abc', want: 'ws://127.0.0.1:8080/ws' },
    { name: 'owner under /term over TLS', loc: https, base: '/term', role: 'owner', id: '', want: 'wss://box.example/term/ws' },
    { name: 'trailing slash of the base path', loc: https, base: '/term/', role: 'owner', id: '', want: 'wss://box.example/term/ws' },
    { name: 'viewer names its terminal', loc: http, base: '', role: 'viewer', id: 'abc', want: 'ws://127.0.0.1:8080/ws?terminal=abc' },
    { name: 'driver under /term', loc: https, base: '/term', role: 'driver', id: 'k2x9', want: 'wss://box.example/term/ws?terminal=k2x9' },
    { name: 'terminal id is escaped', loc: http, base: '', role: 'viewer', id: 'a b&c', want: 'ws://127.0.0.1:8080/ws?terminal=a%20b%26c' },
  ];
  for (const c of cases) {
    test(c.name, () => assert.equal(wsUrl(c.loc, c.base, c.role, c.id), c.want));
  }
});

describe('parseRole', () => {
  for (const [input, want] of [
    ['owner', 'owner'],
    ['driver', 'driver'],
    ['viewer', 'viewer'],
    ['', 'owner'],
    [undefined, 'owner'],
    ['admin', 'viewer'],
  ] as const) {
    test(`${String(input)} → ${want}`, () => assert.equal(parseRole(input), want));
  }
});

describe('share expiry', () => {
  test('the dialog offers 1 h, 24 h, 7 d and never', () => {
    assert.deepEqual(
      shareExpiries.map((e) => e.seconds),
      [3600, 86400, 604800, 0],
    );
  });
  const now = 1_700_000_000_000;
  for (const [at, want] of [
    [undefined, 'never expires'],
    [now - 1, 'expired'],
    [now, 'expired'],
    [now + 30_000, 'expires in 1 min'],
    [now + 59 * 60_000, 'expires in 59 min'],
    [now + 3600_000, 'expires in 1 h'],
    [now + 90 * 60_000, 'expires in 1 h 30 min'],
    [now + 86400_000, 'expires in 1 d'],
    [now + 7 * 86400_000 - 3600_000, 'expires in 6 d 23 h'],
  ] as const) {
    test(`${at === undefined ? 'none' : at - now} ms → ${want}`, () => assert.equal(expiryLabel(at, now), want));
  }
});

test('revokedMessage: the live close reasons (handlers: disconnectShare)', () => {
  assert.equal(revokedMessage('share link revoked').title, 'This share link was revoked');
  assert.equal(revokedMessage('share link expired').title, 'This share link has expired');
  assert.match(revokedMessage('share link expired').detail, /new link/);
  assert.equal(revokedMessage('the terminal was disposed').title, 'The shared terminal was closed');
  assert.equal(revokedMessage('share link revoked or expired').title, 'This share link was revoked or has expired');
  assert.equal(revokedMessage('').title, 'This share link was revoked or has expired');
});

// Each reason the server gives (handlers/ended.go) has its own words, for each role.
describe('endedMessage', () => {
  const titles = new Set<string>();
  for (const [role, why, want] of [
    ['owner', 'token-changed', /owner token changed/],
    ['owner', 'signed-out', /signed out/],
    ['owner', 'session-expired', /expired/],
    ['owner', '', /signed out/],
    ['viewer', 'revoked', /revoked$/],
    ['viewer', 'expired', /has expired/],
    ['driver', 'terminal-closed', /terminal was closed/],
    ['viewer', 'restart', /restarted/],
    ['driver', 'token-changed', /signed everyone out/],
    ['viewer', 'nonsense', /revoked or has expired/],
  ] as const) {
    test(`${role} ${why || '(none)'}`, () => {
      const m = endedMessage(role, why);
      assert.match(m.title, want);
      assert.ok(m.detail.length > 0);
      titles.add(`${role === 'owner'}:${m.title}`);
    });
  }
  test('every reason reads differently', () => assert.equal(titles.size, 9)); // owner '' and 'signed-out' share a title
});

describe('access probe after failed reconnects', () => {
  test('probe URL: the terminal page for a share link, the workbench for the owner', () => {
    assert.equal(accessProbeUrl('/term', 'viewer', 'abc'), '/term/t/abc');
    assert.equal(accessProbeUrl('', 'driver', 'a b'), '/t/a%20b');
    assert.equal(accessProbeUrl('/term/', 'owner', 'abc'), '/term/');
    assert.equal(accessProbeUrl('', 'owner', ''), '/');
  });
  const cases: [Role, number, string | undefined, string?][] = [
    ['owner', 401, 'You are signed out'],
    ['viewer', 401, 'This share link was revoked or has expired'],
    ['viewer', 401, 'termhost restarted — the shared terminal is gone', 'restart'],
    ['owner', 401, 'Signed out: the owner token changed', 'token-changed'],
    ['driver', 401, 'This share link was revoked or has expired'],
    ['viewer', 404, 'This terminal no longer exists'],
    ['owner', 404, undefined],
    ['owner', 200, undefined],
    ['viewer', 200, undefined],
    ['viewer', 502, undefined],
    ['viewer', 429, undefined],
  ];
  for (const [role, status, want, why] of cases) {
    test(`${role} ${status} ${why ?? ''} → ${want ?? 'keep retrying'}`, () => assert.equal(accessLost(role, status, why)?.title, want));
  }
});

describe('serverRestarted', () => {
  const cases: { name: string; before: number; now: number; was: string[]; is: string[]; want: boolean }[] = [
    { name: 'sequence went back (a new server)', before: 120, now: 3, was: ['a'], is: ['a'], want: true },
    { name: 'a restart with no terminal open', before: 120, now: 0, was: [], is: [], want: true },
    { name: 'every terminal gone (the new server is busier)', before: 5, now: 900, was: ['a', 'b'], is: ['c'], want: true },
    { name: 'reconnect window ran out, terminals still there', before: 5, now: 900, was: ['a', 'b'], is: ['a', 'b'], want: false },
    { name: 'one terminal closed meanwhile', before: 5, now: 900, was: ['a', 'b'], is: ['b'], want: false },
    { name: 'nothing known, sequence went on', before: 5, now: 900, was: [], is: [], want: false },
  ];
  for (const c of cases) {
    test(c.name, () => assert.equal(serverRestarted(c.before, c.now, c.was, c.is), c.want));
  }
});

describe('Share dialog role note', () => {
  for (const [user, host, want] of [
    ['alice', 'build-01', 'a shell running as alice on build-01;'],
    ['alice', '', 'a shell running as alice;'],
    ['', 'build-01', "a shell running as the server's user;"],
  ] as const) {
    test(`driver, user ${JSON.stringify(user)} host ${JSON.stringify(host)}`, () => {
      const note = shareRoleNote('driver', user, host);
      assert.ok(note.startsWith('A driver can type into this terminal: '), note);
      assert.ok(note.includes(want), `got ${note}, want it to contain ${want}`);
      assert.match(note, /anyone with the link can do anything that user can, including reading termhost’s own files/);
    });
  }
  test('viewer: no shell access, the safe choice', () => {
    const note = shareRoleNote('viewer', 'alice', 'h');
    assert.match(note, /cannot type/);
    assert.doesNotMatch(note, /shell/);
  });
});

test('Copy Link is offered only where the link works for its recipient', () => {
  const cases: [string, boolean][] = [
    ['owner', true],
    ['driver', false], // their link's secret is in a cookie: a plain /t/<id> shows the recipient a sign-in page
    ['viewer', false],
  ];
  for (const [role, want] of cases) assert.equal(linksWorkForOthers(role), want, role);
});

describe('linkBase', () => {
  test('the public URL the server states wins, path kept, trailing slash dropped', () => {
    assert.equal(linkBase('https://dev.example/term/', 'http://127.0.0.1:7681', ''), 'https://dev.example/term');
    assert.equal(linkBase('https://dev.example', 'http://127.0.0.1:7681', '/term'), 'https://dev.example');
  });
  test('without one (or with something not an http(s) URL), the page’s own origin and base path', () => {
    for (const stated of [undefined, '', 42, 'javascript:alert(1)', '/term', 'https:///x']) {
      assert.equal(linkBase(stated, 'http://127.0.0.1:7681', '/term/'), 'http://127.0.0.1:7681/term', String(stated));
    }
  });
});
