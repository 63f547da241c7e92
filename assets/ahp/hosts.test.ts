import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { deepLinkPath, groupByHost, hostApiUrl, hostUri, hostWsUrl, loginUrlOf, nextHostStatus, parseDeepLink, parseHostList, splitHostUri, type HostEvent, type HostStatus } from './hosts';
import type { TerminalInfo } from './types';

describe('parseHostList', () => {
  test('the home host and the others, in order', () => {
    const got = parseHostList({
      home: { name: 'box1' },
      hosts: [
        { name: 'box2', url: 'https://dev.corp/box2' },
        { name: 'box3', url: 'https://box3.tail1234.ts.net/' },
      ],
    });
    assert.deepEqual(got, {
      home: 'box1',
      hosts: [
        { name: 'box2', url: 'https://dev.corp/box2/' },
        { name: 'box3', url: 'https://box3.tail1234.ts.net/' },
      ],
    });
  });
  test('a single-host box: no other host', () => {
    assert.deepEqual(parseHostList({ home: { name: 'box1' }, hosts: [] }), { home: 'box1', hosts: [] });
    assert.deepEqual(parseHostList(undefined), { home: '', hosts: [] });
    assert.deepEqual(parseHostList('nonsense'), { home: '', hosts: [] });
  });
  test('bad entries, the home host and duplicates are left out', () => {
    const got = parseHostList({
      home: { name: 'box1' },
      hosts: [
        { name: 'box1', url: 'https://dev.corp/box1/' },
        { name: 'box2', url: 'https://dev.corp/box2/' },
        { name: 'box2', url: 'https://elsewhere/' },
        { name: '../etc', url: 'https://dev.corp/x/' },
        { name: 'js', url: 'javascript:alert(1)' },
        { name: 'rel', url: '/box4/' },
        { name: 'nourl' },
        { name: 'a b', url: 'https://dev.corp/ab/' },
        null,
        7,
      ],
    });
    assert.deepEqual(got.hosts, [{ name: 'box2', url: 'https://dev.corp/box2/' }]);
  });
  test('query and fragment of a URL are dropped', () => {
    assert.deepEqual(parseHostList({ hosts: [{ name: 'b', url: 'http://127.0.0.2:7681/x?y=1#token=secret' }] }).hosts, [{ name: 'b', url: 'http://127.0.0.2:7681/x/' }]);
  });
});

describe('hostWsUrl and hostApiUrl', () => {
  for (const [base, want] of [
    ['https://dev.corp/box2/', 'wss://dev.corp/box2/ws'],
    ['http://127.0.0.2:7681/', 'ws://127.0.0.2:7681/ws'],
    ['https://box3.tail1234.ts.net/', 'wss://box3.tail1234.ts.net/ws'],
  ] as const) {
    test(base, () => assert.equal(hostWsUrl(base), want));
  }
  test('api paths below the base', () => {
    assert.equal(hostApiUrl('https://dev.corp/box2/', 'api/whoami'), 'https://dev.corp/box2/api/whoami');
    assert.equal(hostApiUrl('https://dev.corp/box2', '/t/abc/recording.cast'), 'https://dev.corp/box2/t/abc/recording.cast');
  });
});

describe('host URIs', () => {
  test('the home host keeps its URIs', () => {
    assert.equal(hostUri('', 'ahp-terminal:/abc'), 'ahp-terminal:/abc');
    assert.deepEqual(splitHostUri('ahp-terminal:/abc'), { host: '', uri: 'ahp-terminal:/abc' });
  });
  test('another host’s round-trips', () => {
    for (const uri of ['ahp-terminal:/abc', 'agenthost-terminal:/0b1e-2c3d', 'urn:x:/y/z']) {
      const w = hostUri('box2', uri);
      assert.ok(w.startsWith('termhost-host://box2/'));
      assert.deepEqual(splitHostUri(w), { host: 'box2', uri });
    }
  });
  test('a malformed wrapping is nobody’s', () => {
    assert.deepEqual(splitHostUri('termhost-host:///x'), { host: '', uri: 'termhost-host:///x' });
  });
});

describe('deep links', () => {
  const cases: { path: string; base: string; want: { host: string; id: string } | undefined }[] = [
    { path: '/t/abc', base: '', want: { host: '', id: 'abc' } },
    { path: '/h/box2/t/abc', base: '', want: { host: 'box2', id: 'abc' } },
    { path: '/box1/h/box2/t/k2x9', base: '/box1', want: { host: 'box2', id: 'k2x9' } },
    { path: '/box1/t/k2x9', base: '/box1/', want: { host: '', id: 'k2x9' } },
    { path: '/h/box2/t/agenthost-terminal%3A%2F0b1e', base: '', want: { host: 'box2', id: 'agenthost-terminal:/0b1e' } },
    { path: '/', base: '', want: undefined },
    { path: '/box1/', base: '/box1', want: undefined },
    { path: '/h/box2', base: '', want: undefined },
    { path: '/h/-bad/t/abc', base: '', want: undefined },
    { path: '/h/box2/t/abc/recording.cast', base: '', want: undefined },
    { path: '/t/%E0%A4%A', base: '', want: undefined },
    { path: '/other/t/abc', base: '/box1', want: undefined },
  ];
  for (const c of cases) test(`${c.base}|${c.path}`, () => assert.deepEqual(parseDeepLink(c.path, c.base), c.want));
  test('paths round-trip', () => {
    for (const [host, id] of [
      ['', 'abc'],
      ['box2', 'abc'],
      ['box2', 'agenthost-terminal:/0b1e'],
    ] as const) {
      assert.deepEqual(parseDeepLink('/box1' + deepLinkPath(host, id), '/box1'), { host, id });
    }
    assert.equal(deepLinkPath('box2', 'k2x9'), '/h/box2/t/k2x9');
    assert.equal(deepLinkPath('', 'k2x9'), '/t/k2x9');
  });
});

describe('nextHostStatus', () => {
  const on: HostEvent = { kind: 'online' };
  const off: HostEvent = { kind: 'offline' };
  const probe = (status: number): HostEvent => ({ kind: 'probe', status });
  const run = (events: HostEvent[], from: HostStatus = 'connecting') => events.reduce(nextHostStatus, from);
  const cases: { name: string; events: HostEvent[]; want: HostStatus; from?: HostStatus }[] = [
    { name: 'connects', events: [on], want: 'connected' },
    { name: 'never answered: unreachable', events: [off], want: 'unreachable' },
    { name: 'refused and whoami does not answer', events: [off, probe(0)], want: 'unreachable' },
    { name: 'was connected, link drops', events: [on, off], want: 'reconnecting' },
    { name: 'was connected, host gone', events: [on, off, probe(0)], want: 'unreachable' },
    { name: 'comes back', events: [on, off, probe(0), off, on], want: 'connected' },
    { name: 'no sign-in', events: [off, probe(401)], want: 'signin' },
    { name: 'sign-in stays while attempts fail', events: [off, probe(401), off, off], want: 'signin' },
    { name: 'signed in on its page: whoami 200, then the link', events: [off, probe(401), probe(200)], want: 'reconnecting' },
    { name: 'signed in, link up', events: [off, probe(401), probe(200), on], want: 'connected' },
    { name: 'not allowed', events: [off, probe(403)], want: 'forbidden' },
    { name: 'not allowed stays', events: [off, probe(403), off], want: 'forbidden' },
    { name: 'a late probe does not undo a working link', events: [off, on, probe(0)], want: 'connected' },
    { name: 'server error: unreachable', events: [on, off, probe(502)], want: 'unreachable' },
  ];
  for (const c of cases) test(c.name, () => assert.equal(run(c.events, c.from), c.want));
});

describe('groupByHost', () => {
  const t = (resource: string): TerminalInfo => ({ resource, title: resource, claim: { kind: 'client', clientId: 'x' } }) as TerminalInfo;
  test('home first, then the file’s order; empty hosts kept; unknown last', () => {
    const list = [t(hostUri('box3', 'ahp-terminal:/c')), t('ahp-terminal:/a'), t(hostUri('gone', 'ahp-terminal:/g')), t(hostUri('box2', 'ahp-terminal:/b')), t('ahp-terminal:/a2')];
    const got = groupByHost(list, ['box2', 'box3', 'box4']).map((g) => [g.host, g.items.map((i) => splitHostUri(i.resource).uri)]);
    assert.deepEqual(got, [
      ['', ['ahp-terminal:/a', 'ahp-terminal:/a2']],
      ['box2', ['ahp-terminal:/b']],
      ['box3', ['ahp-terminal:/c']],
      ['box4', []],
      ['gone', ['ahp-terminal:/g']],
    ]);
  });
});

describe('loginUrlOf', () => {
  test('absolute, relative to the host, and refused schemes', () => {
    assert.equal(loginUrlOf({ login: 'https://box2.ts.net/login' }, 'https://box2.ts.net/'), 'https://box2.ts.net/login');
    assert.equal(loginUrlOf({ login: '/box2/' }, 'https://dev.corp/box2/'), 'https://dev.corp/box2/');
    assert.equal(loginUrlOf({ login: 'javascript:alert(1)' }, 'https://dev.corp/box2/'), undefined);
    assert.equal(loginUrlOf({}, 'https://dev.corp/box2/'), undefined);
    assert.equal(loginUrlOf(null, 'https://dev.corp/box2/'), undefined);
  });
});
