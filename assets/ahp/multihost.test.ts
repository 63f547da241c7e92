// MultiHostClient with real AhpClients on scripted fake sockets: each host
// its own socket, clientId and state; the catalogue of every host; calls
// routed with each host's own URIs; one host down leaves the others alone.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { AhpClient, type Timers } from './client';
import { ScriptedSocket as FakeSocket } from './scriptedSocket';
import { MultiHostClient, type ProbeResult } from './multihost';
import { hostUri, type HostEntry } from './hosts';
import { ROOT_CHANNEL, type RootState, type TerminalInfo } from './types';
import { Control } from '../workbench/terminal/presence';

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** Timers that never fire unless told: the tests drive every step. */
class StillTimers implements Timers {
  #fns = new Map<number, () => void>();
  #next = 1;
  setTimeout(fn: () => void) {
    const id = this.#next++;
    this.#fns.set(id, fn);
    return id;
  }
  clearTimeout(h: unknown) {
    this.#fns.delete(h as number);
  }
  setInterval() {
    return 0;
  }
  clearInterval() {}
  now() {
    return 0;
  }
}

const info = (resource: string): TerminalInfo => ({ resource, title: resource.slice(-3), claim: { kind: 'client', clientId: 'someone' } }) as TerminalInfo;

function setup() {
  const sockets = new Map<string, FakeSocket[]>();
  const probes: string[] = [];
  let probeAnswer: ProbeResult = { status: 0 };
  const make = (url: string, clientId: string) =>
    new AhpClient({
      url,
      clientId,
      timers: new StillTimers(),
      random: () => 0.5,
      createSocket: (u) => {
        const s = new FakeSocket(u);
        sockets.set(u, [...(sockets.get(u) ?? []), s]);
        return s;
      },
    });
  const home = make('wss://dev.corp/box1/ws', 'web-home');
  const mc = new MultiHostClient(home, {
    makeClient: (h: HostEntry) => make(`wss://dev.corp/${h.name}/ws`, `web-${h.name}`),
    probe: async (h) => {
      probes.push(h.name);
      return probeAnswer;
    },
  });
  const sock = (host: string) => sockets.get(`wss://dev.corp/${host}/ws`)!.at(-1)!;
  /** Opens a host's socket and answers its initialize with these terminals. */
  const answer = async (host: string, terminals: TerminalInfo[]) => {
    const s = sock(host);
    s.open();
    await flush();
    const init = s.last('initialize')!;
    // Each host gives this page a presence id of its own.
    s.reply(init.id!, { protocolVersion: '1.0.0', serverSeq: 1, _meta: { 'termhost/presenceId': `p-${host}` }, snapshots: [{ resource: ROOT_CHANNEL, state: { agents: [], terminals }, fromSeq: 1 }] });
    await flush();
  };
  const roots: string[][] = [];
  mc.on('snapshot', (ch, st) => {
    if (ch === ROOT_CHANNEL) roots.push(((st as RootState).terminals ?? []).map((t) => t.resource));
  });
  const list = { home: 'box1', hosts: [{ name: 'box2', url: 'https://dev.corp/box2/' }] };
  return { mc, home, sock, answer, roots, list, probes, setProbe: (p: ProbeResult) => (probeAnswer = p) };
}

const B = hostUri('box2', 'ahp-terminal:/b1');

describe('MultiHostClient', () => {
  test('a page with no other host is the home client', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts({ home: 'box1', hosts: [] });
    await x.answer('box1', [info('ahp-terminal:/a1')]);
    assert.deepEqual(x.roots, [['ahp-terminal:/a1']]);
    assert.deepEqual(x.mc.hosts(), []);
    assert.equal(x.mc.clientId, 'web-home');
    assert.equal(x.mc.homeName, 'box1');
  });

  test('the home list shows at once; another host fills in when it answers', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', [info('ahp-terminal:/a1')]);
    // box2 has not even opened its socket: the home list is out already.
    assert.deepEqual(x.roots, [['ahp-terminal:/a1']]);
    assert.equal(x.mc.hosts()[0]!.status, 'connecting');
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    assert.deepEqual(x.roots.at(-1), ['ahp-terminal:/a1', B]);
    assert.equal(x.mc.hosts()[0]!.status, 'connected');
  });

  test('the same list again (the page checks it each time its home link is up) changes nothing', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', [info('ahp-terminal:/a1')]);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    const box2 = x.sock('box2');
    let events = 0;
    x.mc.on('hosts', () => events++);
    x.mc.on('snapshot', () => events++);
    x.mc.setHosts({ home: 'box1', hosts: [{ name: 'box2', url: 'https://dev.corp/box2/' }] });
    await flush();
    assert.equal(events, 0, 'no redraw');
    assert.equal(x.sock('box2'), box2, 'the same socket');
    assert.equal(x.mc.hosts()[0]!.status, 'connected');
    x.mc.setHosts({ home: 'box1', hosts: [{ name: 'box2', url: 'https://dev.corp/other/' }] });
    assert.ok(events > 0, 'a host whose URL changed is a change');
    assert.equal(x.mc.hosts()[0]!.status, 'connecting');
  });

  test('the home host going online is a host change: its group never waits for another host to say so', async () => {
    const x = setup();
    const seen: string[] = [];
    x.mc.on('hosts', () => seen.push(x.mc.statusOf('')));
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', [info('ahp-terminal:/a1')]);
    // box2 never answers: the last word the side bar got says the home host is connected.
    assert.equal(x.mc.hosts()[0]!.status, 'connecting');
    assert.equal(x.mc.statusOf(''), 'connected');
    assert.equal(seen.at(-1), 'connected');
  });

  test('another host answering first waits for the home list, then is in it', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    assert.deepEqual(x.roots, []);
    await x.answer('box1', []);
    assert.deepEqual(x.roots.at(-1), [B]);
  });

  test('calls go to the terminal’s host with its own URI and clientId', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', []);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    const b = x.sock('box2');
    assert.equal(x.mc.clientIdOf(B), 'web-box2');
    assert.equal(x.mc.clientIdOf('ahp-terminal:/a1'), 'web-home');
    // initialize on box2 names box2's clientId, never the home one.
    assert.equal(b.last('initialize')!.params!.clientId, 'web-box2');

    const created = x.mc.createTerminal({ channel: hostUri('box2', 'ahp-terminal:/new'), claim: { kind: 'client', clientId: 'web-home' }, cols: 80, rows: 24 });
    const c = b.last('createTerminal')!;
    assert.deepEqual(c.params, { channel: 'ahp-terminal:/new', claim: { kind: 'client', clientId: 'web-box2' }, cols: 80, rows: 24 });
    assert.equal(x.sock('box1').last('createTerminal'), undefined);
    b.reply(c.id!, null);
    await created;

    const snaps: string[] = [];
    x.mc.on('snapshot', (ch) => snaps.push(ch));
    const sub = x.mc.subscribe(B);
    await flush();
    const s = b.last('subscribe')!;
    assert.equal(s.params!.channel, 'ahp-terminal:/b1');
    b.reply(s.id!, { snapshot: { resource: 'ahp-terminal:/b1', state: { title: 'zsh', content: [], claim: { kind: 'client', clientId: 'web-box2' }, cols: 80, rows: 24 }, fromSeq: 2 } });
    await sub;
    assert.deepEqual(snaps, [B]);
    assert.equal(x.mc.state<{ title: string }>(B)?.title, 'zsh');
    assert.equal(x.mc.state('ahp-terminal:/b1'), undefined, 'the home host has no such terminal');

    x.mc.dispatch(B, { type: 'terminal/input', data: 'ls\r' });
    assert.deepEqual(b.last('dispatchAction')!.params, { channel: 'ahp-terminal:/b1', clientSeq: 1, action: { type: 'terminal/input', data: 'ls\r' } });
    x.mc.dispatch(B, { type: 'terminal/claimed', claim: { kind: 'client', clientId: 'web-home' } });
    assert.deepEqual((b.last('dispatchAction')!.params!.action as { claim: unknown }).claim, { kind: 'client', clientId: 'web-box2' });

    // A root request about a terminal (x-share/create) goes to that terminal's host; its answer names the page's URIs.
    const share = x.mc.request('x-share/create', { channel: ROOT_CHANNEL, terminal: B, role: 'viewer' });
    const r = b.last('x-share/create')!;
    assert.deepEqual(r.params, { channel: ROOT_CHANNEL, terminal: 'ahp-terminal:/b1', role: 'viewer' });
    b.reply(r.id!, { id: 's1', terminal: 'ahp-terminal:/b1', url: 'https://dev.corp/box2/t/b1#share=x' });
    assert.deepEqual(await share, { id: 's1', terminal: B, url: 'https://dev.corp/box2/t/b1#share=x' });

    // Notifications name the page's URIs too.
    const notes: unknown[] = [];
    x.mc.on('notification', (_m, p) => notes.push(p));
    b.deliver({ jsonrpc: '2.0', method: 'x-termhost/presence', params: { channel: 'ahp-terminal:/b1', members: [] } });
    assert.deepEqual(notes, [{ channel: B, members: [] }]);
  });

  test('one host going down greys only itself; a handle from before its reconnect is refused', async () => {
    const x = setup();
    const states: string[] = [];
    x.mc.on('state', (s) => states.push(s));
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', [info('ahp-terminal:/a1')]);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    const homeStates = states.length;
    x.setProbe({ status: 0 });
    x.sock('box2').close(1006, '');
    await flush();
    assert.equal(x.mc.hosts()[0]!.status, 'unreachable');
    assert.deepEqual(x.probes, ['box2']);
    assert.equal(states.length, homeStates, 'the home link saw nothing');
    assert.equal(x.mc.onlineFor(B), false);
    assert.equal(x.mc.onlineFor('ahp-terminal:/a1'), true);
    assert.equal(x.mc.dispatch(B, { type: 'terminal/input', data: 'x' }), undefined);
    await assert.rejects(x.mc.request('x-termhost/screen', { channel: B }), /offline/);
    assert.notEqual(x.mc.dispatch('ahp-terminal:/a1', { type: 'terminal/input', data: 'x' }), undefined);
    // Its terminals stay listed, to come back with it.
    assert.deepEqual(x.mc.state<RootState>(ROOT_CHANNEL)!.terminals!.map((t) => t.resource), ['ahp-terminal:/a1', B]);
  });

  test('a host without our sign-in says so and names its own login page', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', []);
    x.setProbe({ status: 401, body: { login: 'https://dev.corp/box2/' } });
    x.sock('box2').close(1006, '');
    await flush();
    assert.deepEqual(x.mc.hosts(), [{ name: 'box2', url: 'https://dev.corp/box2/', status: 'signin', login: 'https://dev.corp/box2/' }]);
    x.setProbe({ status: 403, body: { login: 'https://dev.corp/box2/' } });
    x.mc.retryHosts();
    await flush();
    assert.equal(x.mc.hosts()[0]!.status, 'forbidden');
    assert.equal(x.mc.hosts()[0]!.login, undefined);
  });

  test('a terminal of a host not listed yet waits for the list; one not listed is not found', async () => {
    const x = setup();
    x.mc.connect();
    await x.answer('box1', []);
    let settled = false;
    const sub = x.mc.subscribe(B).finally(() => (settled = true));
    await flush();
    assert.equal(settled, false);
    x.mc.setHosts(x.list);
    await flush();
    const b = x.sock('box2');
    b.open();
    await flush();
    const init = b.last('initialize')!;
    b.reply(init.id!, { protocolVersion: '1.0.0', serverSeq: 1, snapshots: [{ resource: ROOT_CHANNEL, state: { agents: [], terminals: [] }, fromSeq: 1 }] });
    await flush();
    // Subscribed on box2, with box2's URI, once box2 is up.
    const s = b.last('subscribe')!;
    assert.equal(s.params!.channel, 'ahp-terminal:/b1');
    b.reply(s.id!, { snapshot: { resource: 'ahp-terminal:/b1', state: { title: 't', content: [], cols: 80, rows: 24 }, fromSeq: 1 } });
    await sub;
    await assert.rejects(x.mc.subscribe(hostUri('box9', 'ahp-terminal:/z')), /not found/);
  });

  test('hosts removed from the list are dropped with their terminals', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', []);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    assert.deepEqual(x.roots.at(-1), [B]);
    x.mc.setHosts({ home: 'box1', hosts: [] });
    assert.deepEqual(x.roots.at(-1), []);
    assert.equal(x.sock('box2').readyState, 3);
  });

  test('approvals of every host are listed together', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', []);
    await x.answer('box2', []);
    const lists: unknown[] = [];
    x.mc.on('notification', (m, p) => m === 'x-termhost/approvals' && lists.push((p as { approvals: { id: string; terminal: string }[] }).approvals.map((a) => `${a.id}@${a.terminal}`)));
    x.sock('box1').deliver({ jsonrpc: '2.0', method: 'x-termhost/approvals', params: { approvals: [{ id: 'h1', terminal: 'ahp-terminal:/a1' }] } });
    x.sock('box2').deliver({ jsonrpc: '2.0', method: 'x-termhost/approvals', params: { approvals: [{ id: 'r1', terminal: 'ahp-terminal:/b1' }] } });
    assert.deepEqual(lists, [['h1@ahp-terminal:/a1'], ['h1@ahp-terminal:/a1', `r1@${B}`]]);
    // Each is answered on the host that asked.
    void x.mc.request('x-termhost/approval/answer', { id: 'r1', decision: 'approve' }).catch(() => {});
    void x.mc.request('x-termhost/approval/answer', { id: 'h1', decision: 'deny' }).catch(() => {});
    assert.deepEqual(x.sock('box2').last('x-termhost/approval/answer')!.params, { id: 'r1', decision: 'approve' });
    assert.deepEqual(x.sock('box1').last('x-termhost/approval/answer')!.params, { id: 'h1', decision: 'deny' });
  });

  test('control on another host: our own request there is ours, a request to us names the asker', async () => {
    const x = setup();
    x.mc.connect();
    x.mc.setHosts(x.list);
    await x.answer('box1', []);
    await x.answer('box2', [info('ahp-terminal:/b1')]);
    const notices: string[] = [];
    const control = new Control(x.mc, 'owner', (_kind, message) => notices.push(message), () => {}, () => {}, () => 'b1');
    const b = x.sock('box2');
    // Our own request on box2 (box2's presence id for us), granted.
    b.deliver({ jsonrpc: '2.0', method: 'x-termhost/controlRequest', params: { terminal: 'ahp-terminal:/b1', requestId: 'r1', status: 'granted', from: { id: 'p-box2', name: 'Alice', kind: 'owner' } } });
    assert.deepEqual(notices, ['You have control of “b1”.']);
    // Someone else there asks us.
    b.deliver({ jsonrpc: '2.0', method: 'x-termhost/controlRequest', params: { terminal: 'ahp-terminal:/b1', requestId: 'r2', status: 'pending', from: { id: 'p-bob', name: 'Bob', kind: 'driver' } } });
    assert.equal(notices.length, 2);
    assert.match(notices[1]!, /asks for control of “b1”/);
    // Presence on box2: we are "You" by box2's id, not the home host's.
    assert.equal(control.label({ id: 'p-box2', name: 'Alice', kind: 'owner' }, B), 'You (this tab)');
    assert.notEqual(control.label({ id: 'p-box1', name: 'Alice', kind: 'owner' }, B), 'You (this tab)');
  });
});
