// AhpClient against a scripted fake server: handshake, pending queue and
// echoes, rejection, reconnect (replay / snapshot / missing / error →
// initialize), no duplicated output, ping latency, backoff.
// (Over 400 lines: one scripted fake server and clock shared by every case.)
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { AhpClient, CloseCodes, closeAction, type ClientOptions, type ConnectionState, type Timers } from './client';
import { backoffDelay } from './backoff';
import { ScriptedSocket } from './scriptedSocket';
import { contentText } from './reducers';
import type { ActionEnvelope, TerminalState } from './types';

class FakeTimers implements Timers {
  t = 0;
  #next = 1;
  #tasks = new Map<number, { at: number; fn: () => void; every?: number }>();
  setTimeout(fn: () => void, ms: number) {
    const id = this.#next++;
    this.#tasks.set(id, { at: this.t + ms, fn });
    return id;
  }
  clearTimeout(h: unknown) {
    this.#tasks.delete(h as number);
  }
  setInterval(fn: () => void, ms: number) {
    const id = this.#next++;
    this.#tasks.set(id, { at: this.t + ms, fn, every: ms });
    return id;
  }
  clearInterval(h: unknown) {
    this.#tasks.delete(h as number);
  }
  now() {
    return this.t;
  }
  /** Advance the clock, running due tasks in time order. */
  async advance(ms: number) {
    const end = this.t + ms;
    for (;;) {
      let best: [number, { at: number; fn: () => void; every?: number }] | undefined;
      for (const e of this.#tasks) if (e[1].at <= end && (!best || e[1].at < best[1].at)) best = e;
      if (!best) break;
      const [id, task] = best;
      this.t = task.at;
      if (task.every) task.at += task.every;
      else this.#tasks.delete(id);
      task.fn();
      await flush();
    }
    this.t = end;
  }
}

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

class FakeSocket extends ScriptedSocket {
  /** Sends terminal output as the server does to a client that asked for binary data messages. */
  deliverBinary(env: ActionEnvelope, data: Uint8Array) {
    const header = new TextEncoder().encode(
      JSON.stringify({ jsonrpc: '2.0', method: 'action', params: { ...env, action: { ...env.action, data: '' } } }),
    );
    const msg = new Uint8Array(4 + header.length + data.length);
    new DataView(msg.buffer).setUint32(0, header.length);
    msg.set(header, 4);
    msg.set(data, 4 + header.length);
    this.onmessage?.({ data: msg.buffer });
  }
  fail(id: number, code: number, message: string) {
    this.deliver({ jsonrpc: '2.0', id, error: { code, message } });
  }
  action(env: ActionEnvelope) {
    this.deliver({ jsonrpc: '2.0', method: 'action', params: env });
  }
  requests(method: string) {
    return this.sent.filter((m) => m.method === method && m.id !== undefined);
  }
}

const T = 'ahp-terminal:/abc';
const termState = (content = ''): TerminalState => ({
  title: 'bash',
  content: content ? [{ type: 'unclassified', value: content }] : [],
  lifecycle: { status: 'running' },
  claim: { kind: 'client', clientId: 'me' },
  cols: 80,
  rows: 24,
});

function setup(options: Partial<ClientOptions> = {}) {
  const timers = new FakeTimers();
  const sockets: FakeSocket[] = [];
  const c = new AhpClient({
    url: 'ws://x/ws',
    clientId: 'me',
    ...options,
    timers,
    random: () => 0.5,
    createSocket: (u) => {
      const s = new FakeSocket(u);
      sockets.push(s);
      return s;
    },
  });
  // The terminal as a view would render it: snapshots reset, data appends.
  const screens = new Map<string, string>();
  c.on('snapshot', (ch, st) => {
    if (ch === T) screens.set(ch, contentText((st as TerminalState).content));
  });
  c.on('action', (env) => {
    if (env.action.type === 'terminal/data') screens.set(env.channel, (screens.get(env.channel) ?? '') + (env.action as { data: string }).data);
  });
  const sock = () => sockets[sockets.length - 1]!;
  return { c, timers, sockets, sock, screens };
}

/** Bring a client online with root + terminal T subscribed at seq 5. */
async function online() {
  const x = setup();
  x.c.connect();
  x.sock().open();
  await flush();
  const init = x.sock().requests('initialize')[0]!;
  assert.deepEqual(init.params!.protocolVersions, ['1.0.0']);
  assert.equal(init.params!.clientId, 'me');
  assert.deepEqual(init.params!.initialSubscriptions, ['ahp-root://']);
  x.sock().reply(init.id!, {
    protocolVersion: '1.0.0',
    serverSeq: 4,
    snapshots: [{ resource: 'ahp-root://', state: { agents: [], terminals: [] }, fromSeq: 4 }],
  });
  await flush();
  assert.equal(x.c.connection, 'online');
  const sub = x.c.subscribe(T);
  await flush();
  const req = x.sock().requests('subscribe')[0]!;
  assert.equal(req.params!.channel, T);
  x.sock().reply(req.id!, { snapshot: { resource: T, state: termState('$ '), fromSeq: 5 } });
  await sub;
  return x;
}

describe('AhpClient', () => {
  test('initialize, subscribe and live data', async () => {
    const x = await online();
    assert.equal(x.c.protocolVersion, '1.0.0');
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'hi\r\n' }, serverSeq: 6 });
    assert.equal(x.screens.get(T), '$ hi\r\n');
    assert.equal(x.c.lastSeenServerSeq, 6);
    // a duplicate (same seq) is ignored
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'hi\r\n' }, serverSeq: 6 });
    assert.equal(x.screens.get(T), '$ hi\r\n');
  });

  test('asks for binary data messages and applies them like JSON output', async () => {
    const x = await online();
    assert.deepEqual(x.sock().requests('initialize')[0]!.params!.capabilities, { 'x-termhost/binaryData': {} });
    x.sock().deliverBinary({ channel: T, action: { type: 'terminal/data', data: '' }, serverSeq: 6 }, new TextEncoder().encode('\x1b[31mré\x1b[0m 世界\r\n'));
    assert.equal(x.screens.get(T), '$ \x1b[31mré\x1b[0m 世界\r\n');
    assert.equal(x.c.lastSeenServerSeq, 6);
    // Bad binary messages are dropped and change nothing.
    const warn = console.warn;
    const warned: unknown[] = [];
    console.warn = (...a: unknown[]) => warned.push(a);
    try {
      const deliver = (b: Uint8Array) => x.sock().onmessage?.({ data: b.buffer });
      deliver(new Uint8Array([0, 0]));
      deliver(new Uint8Array([0, 0, 0, 200, 123]));
      deliver(new Uint8Array([0, 0, 0, 2, 123, 125, 65]));
      x.sock().deliverBinary({ channel: T, action: { type: 'terminal/input', data: '' }, serverSeq: 7 }, new Uint8Array([65]));
    } finally {
      console.warn = warn;
    }
    assert.equal(warned.length, 4);
    assert.equal(x.screens.get(T), '$ \x1b[31mré\x1b[0m 世界\r\n');
    assert.equal(x.c.lastSeenServerSeq, 6);
  });

  test('envelopes racing ahead of the subscribe answer are applied after the snapshot', async () => {
    const x = setup();
    x.c.connect();
    x.sock().open();
    await flush();
    x.sock().reply(x.sock().requests('initialize')[0]!.id!, {
      protocolVersion: '1.0.0',
      serverSeq: 1,
      snapshots: [{ resource: 'ahp-root://', state: { agents: [] }, fromSeq: 1 }],
    });
    await flush();
    const p = x.c.subscribe(T);
    await flush();
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'old' }, serverSeq: 2 });
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'new' }, serverSeq: 4 });
    x.sock().reply(x.sock().requests('subscribe')[0]!.id!, { snapshot: { resource: T, state: termState('old'), fromSeq: 3 } });
    await p;
    assert.equal(x.screens.get(T), 'oldnew');
  });

  test('dispatch: pending queue, own echo pops, rename predicted, input not predicted', async () => {
    const x = await online();
    const s1 = x.c.dispatch(T, { type: 'terminal/input', data: 'ls\r' });
    const s2 = x.c.dispatch(T, { type: 'terminal/titleChanged', title: 'build' });
    assert.equal(s1, 1);
    assert.equal(s2, 2);
    const d = x.sock().last('dispatchAction')!;
    assert.deepEqual(d.params, { channel: T, clientSeq: 2, action: { type: 'terminal/titleChanged', title: 'build' } });
    assert.equal('id' in d, false, 'dispatchAction is a notification');
    assert.equal(x.c.pending(T).length, 2);
    assert.equal(x.c.state<TerminalState>(T)!.title, 'build', 'rename is predicted');
    assert.equal(x.c.confirmed<TerminalState>(T)!.title, 'bash');
    x.sock().action({ channel: T, action: { type: 'terminal/input', data: 'ls\r' }, serverSeq: 6, origin: { clientId: 'me', clientSeq: 1 } });
    assert.equal(x.c.pending(T).length, 1);
    // a foreign action rebases the pending rename
    x.sock().action({ channel: T, action: { type: 'terminal/resized', cols: 100, rows: 30 }, serverSeq: 7 });
    assert.equal(x.c.state<TerminalState>(T)!.cols, 100);
    assert.equal(x.c.state<TerminalState>(T)!.title, 'build');
    x.sock().action({ channel: T, action: { type: 'terminal/titleChanged', title: 'build' }, serverSeq: 8, origin: { clientId: 'me', clientSeq: 2 } });
    assert.equal(x.c.pending(T).length, 0);
    assert.equal(x.c.confirmed<TerminalState>(T)!.title, 'build');
  });

  test('rejection drops the pending action and reports the reason', async () => {
    const x = await online();
    const reasons: string[] = [];
    x.c.on('rejected', (_e, r) => reasons.push(r));
    const seq = x.c.dispatch(T, { type: 'terminal/claimed', claim: { kind: 'client', clientId: 'me2' } })!;
    x.sock().action({
      channel: T,
      action: { type: 'terminal/claimed', claim: { kind: 'client', clientId: 'me2' } },
      serverSeq: 6,
      origin: { clientId: 'me', clientSeq: seq },
      rejectionReason: 'terminal is claimed by another client',
    });
    assert.deepEqual(reasons, ['terminal is claimed by another client']);
    assert.equal(x.c.pending(T).length, 0);
    assert.deepEqual(x.c.state<TerminalState>(T)!.claim, { kind: 'client', clientId: 'me' });
    // a rejection does not move the watermark
    assert.equal(x.c.lastSeenServerSeq, 5);
  });

  test('offline: dispatch refused, reconnect with replay, no duplicates', async () => {
    const x = await online();
    const states: string[] = [];
    x.c.on('state', (s) => states.push(s));
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'a' }, serverSeq: 6 });
    x.c.dispatch(T, { type: 'terminal/input', data: 'x' });
    x.sock().close(1006, '');
    await flush();
    assert.equal(x.c.connection, 'offline');
    assert.equal(x.c.dispatch(T, { type: 'terminal/input', data: 'y' }), undefined, 'input blocked while offline');
    assert.equal(x.c.pending(T).length, 0, 'pending cleared on disconnect');
    assert.equal(x.sockets.length, 1);
    await x.timers.advance(backoffDelay(0, 0.5));
    assert.equal(x.sockets.length, 2);
    x.sock().open();
    await flush();
    const rc = x.sock().requests('reconnect')[0]!;
    assert.deepEqual(rc.params, { channel: 'ahp-root://', clientId: 'me', lastSeenServerSeq: 6, subscriptions: ['ahp-root://', T] });
    // a live action overtaking the reconnect answer must wait for the replay
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'd' }, serverSeq: 9 });
    x.sock().reply(rc.id!, {
      type: 'replay',
      actions: [
        { channel: T, action: { type: 'terminal/data', data: 'a' }, serverSeq: 6 },
        { channel: T, action: { type: 'terminal/data', data: 'b' }, serverSeq: 7 },
        { channel: T, action: { type: 'terminal/data', data: 'c' }, serverSeq: 8 },
      ],
      missing: [],
    });
    await flush();
    assert.equal(x.c.connection, 'online');
    assert.equal(x.screens.get(T), '$ abcd');
    assert.equal(x.c.lastSeenServerSeq, 9);
    assert.deepEqual(states.slice(0, 1), ['offline']);
    assert.equal(states[states.length - 1], 'online');
    assert.equal(x.sock().requests('initialize').length, 0);
  });

  test('actions from a reconnect replay are marked replayed, live ones are not', async () => {
    const x = await online();
    const seen: string[] = [];
    x.c.on('action', (env, _st, _own, replayed) => seen.push(`${(env.action as { data?: string }).data}:${replayed ? 'replay' : 'live'}`));
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'a' }, serverSeq: 6 });
    x.sock().close(1006, '');
    await flush();
    await x.timers.advance(backoffDelay(0, 0.5));
    x.sock().open();
    await flush();
    const rc = x.sock().requests('reconnect')[0]!;
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'd' }, serverSeq: 9 });
    x.sock().reply(rc.id!, {
      type: 'replay',
      actions: [
        { channel: T, action: { type: 'terminal/data', data: 'b' }, serverSeq: 7 },
        { channel: T, action: { type: 'terminal/data', data: 'c' }, serverSeq: 8 },
      ],
      missing: [],
    });
    await flush();
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'e' }, serverSeq: 10 });
    assert.deepEqual(seen, ['a:live', 'b:replay', 'c:replay', 'd:live', 'e:live']);
  });

  test('reconnect snapshot result rewrites the terminal and reports missing channels', async () => {
    const x = await online();
    const gone: string[] = [];
    const reasons: string[] = [];
    x.c.on('missing', (c) => gone.push(c));
    x.c.on('snapshot', (_c, _s, r) => reasons.push(r));
    const other = 'ahp-terminal:/dead';
    const p = x.c.subscribe(other);
    await flush();
    x.sock().reply(x.sock().requests('subscribe')[1]!.id!, { snapshot: { resource: other, state: termState(), fromSeq: 5 } });
    await p;
    x.sock().close(1006);
    await flush();
    await x.timers.advance(10_000);
    x.sock().open();
    await flush();
    const rc = x.sock().requests('reconnect')[0]!;
    x.sock().reply(rc.id!, {
      type: 'snapshot',
      snapshots: [
        { resource: 'ahp-root://', state: { agents: [], terminals: [] }, fromSeq: 40 },
        { resource: T, state: termState('$ hi\r\n$ '), fromSeq: 40 },
      ],
      missing: [other],
    });
    await flush();
    assert.deepEqual(gone, [other]);
    assert.equal(x.screens.get(T), '$ hi\r\n$ ');
    assert.ok(reasons.includes('reconnect'));
    assert.equal(x.c.isSubscribed(other), false);
    assert.equal(x.c.lastSeenServerSeq, 40);
  });

  test('reconnect error → fresh initialize and resubscribe from a snapshot', async () => {
    const x = await online();
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'hi' }, serverSeq: 6 });
    x.sock().close(1001);
    await flush();
    await x.timers.advance(10_000);
    x.sock().open();
    await flush();
    x.sock().fail(x.sock().requests('reconnect')[0]!.id!, -32602, 'unknown client');
    await flush();
    const init = x.sock().requests('initialize')[0]!;
    assert.equal(init.params!.clientId, 'me');
    // the server restarted: its counter is lower than our watermark
    x.sock().reply(init.id!, { protocolVersion: '1.0.0', serverSeq: 2, snapshots: [{ resource: 'ahp-root://', state: { agents: [] }, fromSeq: 2 }] });
    await flush();
    const sub = x.sock().requests('subscribe')[0]!;
    assert.equal(sub.params!.channel, T);
    x.sock().reply(sub.id!, { snapshot: { resource: T, state: termState('$ hi'), fromSeq: 2 } });
    await flush();
    assert.equal(x.c.connection, 'online');
    assert.equal(x.screens.get(T), '$ hi', 'content rewritten from the snapshot, not appended');
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: '!' }, serverSeq: 3 });
    assert.equal(x.screens.get(T), '$ hi!', 'live data after the restart is applied');
  });

  test('a clientId the server binds to another credential is replaced once by a fresh one', async () => {
    let fresh = 0;
    const { c, sockets } = setup({ clientId: 'taken', freshClientId: () => `fresh-${++fresh}` });
    c.connect();
    const sock = sockets[0]!;
    sock.open();
    await flush();
    sock.fail(sock.requests('initialize')[0]!.id!, -32602, 'clientId "taken" belongs to another user or share link');
    await flush();
    const again = sock.requests('initialize');
    assert.equal(again.length, 2, 'a second initialize on the same socket');
    assert.equal(again[1]!.params!.clientId, 'fresh-1');
    assert.equal(c.clientId, 'fresh-1');
    sock.reply(again[1]!.id!, { protocolVersion: '1.0.0', serverSeq: 0, snapshots: [{ resource: 'ahp-root://', state: { agents: [] }, fromSeq: 0 }] });
    await flush();
    assert.equal(c.connection, 'online');
    assert.equal(fresh, 1, 'asked for exactly one fresh id');
  });

  test('contentBudget bounds what a terminal mirror keeps', async () => {
    const { c, sockets } = setup({ contentBudget: 4096 });
    c.connect();
    const sock = sockets[0]!;
    sock.open();
    await flush();
    sock.reply(sock.requests('initialize')[0]!.id!, { protocolVersion: '1.0.0', serverSeq: 0, snapshots: [{ resource: 'ahp-root://', state: { agents: [] }, fromSeq: 0 }] });
    await flush();
    const sub = c.subscribe(T);
    await flush();
    sock.reply(sock.requests('subscribe')[0]!.id!, { snapshot: { resource: T, state: termState('$ '), fromSeq: 0 } });
    await sub;
    for (let i = 1; i <= 200; i++) sock.action({ channel: T, action: { type: 'terminal/data', data: `line ${i} ${'x'.repeat(40)}\r\n` }, serverSeq: i });
    const kept = contentText(c.confirmed<TerminalState>(T)!.content);
    assert.ok(kept.length <= 4096, `kept ${kept.length} bytes, want ≤ 4096`);
    assert.ok(kept.endsWith(`line 200 ${'x'.repeat(40)}\r\n`), 'the newest output is kept');
  });

  test('resubscribe failure drops the channel', async () => {
    const x = await online();
    const gone: string[] = [];
    x.c.on('missing', (c) => gone.push(c));
    x.sock().close(1001);
    await flush();
    await x.timers.advance(10_000);
    x.sock().open();
    await flush();
    x.sock().fail(x.sock().requests('reconnect')[0]!.id!, -32602, 'unknown client');
    await flush();
    x.sock().reply(x.sock().requests('initialize')[0]!.id!, { protocolVersion: '1.0.0', serverSeq: 0, snapshots: [{ resource: 'ahp-root://', state: { agents: [] }, fromSeq: 0 }] });
    await flush();
    x.sock().fail(x.sock().requests('subscribe')[0]!.id!, -32008, 'not found');
    await flush();
    assert.deepEqual(gone, [T]);
    assert.equal(x.c.connection, 'online');
  });

  test('ping every 5 s measures latency: the last answered one, none over a lost link', async () => {
    const x = await online();
    const lat: number[] = [];
    x.c.on('latency', (ms) => lat.push(ms));
    const p1 = x.sock().requests('ping')[0]!;
    assert.deepEqual(p1.params, { channel: 'ahp-root://' });
    await x.timers.advance(12);
    x.sock().reply(p1.id!, null);
    await flush();
    assert.deepEqual(lat, [12]);
    await x.timers.advance(5_000);
    assert.equal(x.sock().requests('ping').length, 2);
    assert.equal(x.c.latencyMs, 12, 'while the second ping is out, the latency shown is the last answered one');
    x.sock().close(1006, '');
    await flush();
    assert.equal(x.c.latencyMs, undefined, 'no latency for a link that is gone');
  });

  // A link that silently stops forwarding (frozen proxy,
  // lost Wi-Fi) never closes by itself; the client must notice.
  test('a silent link is dropped within ping interval + timeout, then resumed at once by replay', async () => {
    const x = await online();
    const states: ConnectionState[] = [];
    x.c.on('state', (s) => states.push(s));
    x.sock().reply(x.sock().requests('ping')[0]!.id!, null);
    await flush();
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'a' }, serverSeq: 6 });
    const dead = x.sock();
    // From now on nothing arrives: the next ping (t=5 s) is never answered.
    await x.timers.advance(5_000 + 4_999);
    assert.equal(x.c.connection, 'online', 'not yet overdue');
    assert.equal(x.sockets.length, 1);
    await x.timers.advance(1);
    assert.equal(x.c.connection, 'offline', 'dropped when the ping is overdue');
    assert.equal(dead.readyState, 3, 'the silent socket was closed');
    assert.equal(x.sockets.length, 2, 'a new socket at once (no backoff after a working link)');
    assert.equal(x.c.dispatch(T, { type: 'terminal/input', data: 'x' }), undefined, 'input blocked while reconnecting');
    // The dead socket's late events change nothing.
    dead.action({ channel: T, action: { type: 'terminal/data', data: 'late' }, serverSeq: 7 });
    dead.onclose?.({ code: 1006, reason: '' });
    x.sock().open();
    await flush();
    const rc = x.sock().requests('reconnect')[0]!;
    assert.equal(rc.params!.lastSeenServerSeq, 6);
    x.sock().reply(rc.id!, {
      type: 'replay',
      actions: [
        { channel: T, action: { type: 'terminal/data', data: 'b' }, serverSeq: 7 },
        { channel: T, action: { type: 'terminal/data', data: 'c' }, serverSeq: 8 },
      ],
      missing: [],
    });
    await flush();
    assert.equal(x.c.connection, 'online');
    assert.equal(x.screens.get(T), '$ abc');
    assert.deepEqual(states, ['offline', 'offline', 'online']);
  });

  test('output counts as life: a ping answer queued behind a flood does not drop the link', async () => {
    const x = await online();
    x.sock().reply(x.sock().requests('ping')[0]!.id!, null);
    await flush();
    await x.timers.advance(5_000); // ping 2 out, never answered
    for (let i = 0; i < 4; i++) {
      await x.timers.advance(4_000);
      x.sock().action({ channel: T, action: { type: 'terminal/data', data: String(i) }, serverSeq: 6 + i });
    }
    assert.equal(x.c.connection, 'online', '16 s without a pong but output all along');
    assert.equal(x.sock().requests('ping').length, 2, 'one ping outstanding at a time');
    await x.timers.advance(5_000);
    assert.equal(x.c.connection, 'offline', 'then 5 s of silence');
  });

  test('a socket that never gets online is dropped after openTimeoutMs and retried with backoff', async () => {
    const x = setup();
    x.c.connect();
    await x.timers.advance(9_999); // the upgrade hangs (a frozen path)
    assert.equal(x.sockets.length, 1);
    await x.timers.advance(1);
    assert.equal(x.sockets[0]!.readyState, 3);
    assert.equal(x.c.connection, 'offline');
    await x.timers.advance(backoffDelay(0, 0.5) - 1);
    assert.equal(x.sockets.length, 1, 'backoff, not at once: it never worked');
    await x.timers.advance(1);
    assert.equal(x.sockets.length, 2);
  });

  test('checkLiveness pings at once and keeps the deadline', async () => {
    const x = await online();
    x.sock().reply(x.sock().requests('ping')[0]!.id!, null);
    await flush();
    await x.timers.advance(1_000);
    x.c.checkLiveness();
    assert.equal(x.sock().requests('ping').length, 2);
    await x.timers.advance(5_000);
    assert.equal(x.c.connection, 'offline');
  });

  test('backoff grows exponentially with bounded jitter', () => {
    assert.equal(backoffDelay(0, 0), 125);
    assert.equal(backoffDelay(0, 1), 250);
    assert.equal(backoffDelay(3, 0.5), 1500);
    for (let i = 0; i < 40; i++) {
      const d = backoffDelay(i, Math.random());
      assert.ok(d >= 0 && d <= 10_000, `attempt ${i}: ${d}`);
    }
    assert.ok(backoffDelay(20, 0) >= 5000);
  });

  test('retries keep backing off while the server is down', async () => {
    const x = setup();
    x.c.connect();
    for (let i = 0; i < 4; i++) {
      x.sock().close(1006);
      await flush();
      await x.timers.advance(backoffDelay(i, 0.5) - 1);
      assert.equal(x.sockets.length, i + 1, `attempt ${i} waited`);
      await x.timers.advance(1);
      assert.equal(x.sockets.length, i + 2);
    }
  });
  test('close codes: what the client does on each', () => {
    assert.equal(closeAction(4003), 'stop', 'revoked share link');
    assert.equal(closeAction(4004), 'stop', 'role lowered: the page loads again instead');
    assert.equal(closeAction(4001), 'immediate', 'evicted slow client');
    assert.equal(closeAction(1012), 'immediate', 'service restart (upgrade hand-over)');
    for (const c of [1000, 1001, 1006, 1008, 1011, 4000, 4002]) assert.equal(closeAction(c), 'backoff', `code ${c}`);
    assert.equal(CloseCodes.revoked, 4003);
    assert.equal(CloseCodes.slowConsumer, 4001);
  });

  test('4003 (share link revoked) stops reconnecting for good', async () => {
    const x = await online();
    const states: [ConnectionState, number | undefined][] = [];
    x.c.on('state', (s, d) => states.push([s, d.closeCode]));
    x.sock().close(4003, 'share link revoked');
    await flush();
    assert.equal(x.c.connection, 'closed');
    assert.deepEqual(states, [['closed', 4003]]);
    assert.deepEqual(x.c.endedBy, { code: 4003, reason: 'share link revoked' });
    assert.equal(x.c.dispatch(T, { type: 'terminal/input', data: 'x' }), undefined, 'no input after revocation');
    await x.timers.advance(120_000);
    assert.equal(x.sockets.length, 1, 'no reconnect attempt after 4003');
    x.c.retryNow();
    assert.equal(x.sockets.length, 1, 'Retry Now does nothing either');
    // Live data that might still arrive on the dead socket is ignored.
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'late' }, serverSeq: 6 });
    assert.equal(x.screens.get(T), '$ ');
  });

  test('4003 during the handshake (revoked before we got in) also stops', async () => {
    const x = setup();
    x.c.connect();
    x.sock().open();
    await flush();
    x.sock().close(4003, 'share link expired');
    await flush();
    assert.equal(x.c.connection, 'closed');
    await x.timers.advance(60_000);
    assert.equal(x.sockets.length, 1);
  });

  test('4001 (evicted as too slow) reconnects at once and resumes by replay', async () => {
    const x = await online();
    x.sock().action({ channel: T, action: { type: 'terminal/data', data: 'a' }, serverSeq: 6 });
    x.sock().close(4001, 'too slow: reconnect to resume');
    await flush();
    assert.equal(x.c.connection, 'offline');
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 2, 'a new socket without waiting for the backoff');
    x.sock().open();
    await flush();
    const rc = x.sock().requests('reconnect')[0]!;
    assert.equal(rc.params!.lastSeenServerSeq, 6);
    x.sock().reply(rc.id!, { type: 'replay', actions: [{ channel: T, action: { type: 'terminal/data', data: 'b' }, serverSeq: 7 }], missing: [] });
    await flush();
    assert.equal(x.c.connection, 'online');
    assert.equal(x.screens.get(T), '$ ab');
    // Evicted again later: again at once (the last handshake worked).
    x.sock().close(4001, 'too slow');
    await flush();
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 3);
  });

  test('4001 again before the handshake completes falls back to the backoff', async () => {
    const x = await online();
    x.sock().close(4001, 'too slow');
    await flush();
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 2);
    x.sock().close(4001, 'too slow');
    await flush();
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 2, 'no tight reconnect loop');
    await x.timers.advance(backoffDelay(1, 0.5));
    assert.equal(x.sockets.length, 3);
  });

  test('a socket the client closes itself follows the backoff whatever code comes back', async () => {
    const x = await online();
    x.c.dropConnection();
    await flush();
    assert.equal(x.sockets[0]!.readyState, 3);
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 1, 'not immediate');
    await x.timers.advance(backoffDelay(0, 0.5));
    assert.equal(x.sockets.length, 2);
    // A handshake that fails (bad answer) is closed by the client: backoff.
    x.sock().open();
    await flush();
    x.sock().reply(x.sock().requests('reconnect')[0]!.id!, null);
    await flush();
    assert.equal(x.sock().readyState, 3);
    assert.equal(x.c.connection, 'offline');
    await x.timers.advance(0);
    assert.equal(x.sockets.length, 2);
  });
});
