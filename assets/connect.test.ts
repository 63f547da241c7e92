// The page's start (connect.ts, as boot.ts runs it) in a page as the server
// serves it: the host list comes in the page's config, so every host's
// WebSocket is made as the page starts, in the same task as the home host's,
// none waiting for a fetch or for another host's answer. The sockets are
// scripted from the server's side (ScriptedSocket in the place of the
// browser's WebSocket) and fetch is recorded, answered only when a test says
// so.
import './workbench/testDom';
import { test, describe, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { ScriptedSocket } from './ahp/scriptedSocket';
import { ROOT_CHANNEL } from './ahp/types';
import type { MultiHostClient } from './ahp/multihost';
import { connectAll, newClient, readConfig } from './connect';

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A page with this config, as web/page.go writes it (JSON with "<" escaped). */
function page(config: Record<string, unknown>): void {
  const json = JSON.stringify(config).replace(/</g, '\\u003c');
  document.head.innerHTML = `<script id="termhost-config" type="application/json">${json}</script>`;
  document.body.innerHTML = '<div id="workbench"></div>';
}

interface Started {
  client: MultiHostClient;
  /** Every socket the page made, in order. */
  sockets: ScriptedSocket[];
  /** The URLs the page fetched, in order. */
  fetched: string[];
  /** Answers the fetches of a URL from now on. */
  answer: (path: string, body: unknown) => void;
}

const running: MultiHostClient[] = [];
const realWebSocket = globalThis.WebSocket;
const realFetch = globalThis.fetch;

afterEach(() => {
  for (const c of running.splice(0)) c.close();
  globalThis.WebSocket = realWebSocket;
  globalThis.fetch = realFetch;
});

/** Boots the app in a page with this config and returns what it did in that one task. */
function start(served: Record<string, unknown>): Started {
  page(served);
  const sockets: ScriptedSocket[] = [];
  const fetched: string[] = [];
  const answers = new Map<string, unknown>();
  globalThis.WebSocket = class extends ScriptedSocket {
    constructor(url: string) {
      super(url);
      sockets.push(this);
    }
  } as unknown as typeof WebSocket;
  globalThis.fetch = ((input: RequestInfo | URL) => {
    const url = String(input instanceof Request ? input.url : input);
    fetched.push(url);
    const path = new URL(url, location.href).pathname;
    if (!answers.has(path)) return new Promise<Response>(() => {}); // a server that has not answered yet
    return Promise.resolve(new Response(JSON.stringify(answers.get(path)), { status: 200, headers: { 'Content-Type': 'application/json' } }));
  }) as typeof fetch;
  // As boot.ts does, with the workbench made between the two.
  const config = readConfig();
  const client = newClient(config);
  running.push(client);
  connectAll(config, client);
  return { client, sockets, fetched, answer: (path, body) => answers.set(path, body) };
}

/** The list as the server writes it (GET /api/hosts, the page's config). */
const hosts = {
  home: { name: 'box1' },
  hosts: [
    { name: 'box2', url: 'https://box2.corp.test/' },
    { name: 'box3', url: 'http://127.0.0.1:7682/term/' },
    { name: 'box4', url: 'https://dev.corp.test/box4/' },
  ],
};

const base = { basePath: '', terminalId: '', version: '1.2.3', role: 'owner', scrollback: 0 };

describe('connectAll', () => {
  test('the owner’s page opens every host’s socket as it starts, with the home host’s, from its config', () => {
    const x = start({ ...base, hosts });
    // All in the task that started the page: no fetch answered, no socket open yet.
    assert.deepEqual(
      x.sockets.map((s) => s.url),
      ['ws://box1.test:8080/ws', 'wss://box2.corp.test/ws', 'ws://127.0.0.1:7682/term/ws', 'wss://dev.corp.test/box4/ws'],
    );
    assert.deepEqual(x.fetched, [], 'nothing fetched before the sockets');
    assert.deepEqual(
      x.client.hosts().map((h) => `${h.name} ${h.status}`),
      ['box2 connecting', 'box3 connecting', 'box4 connecting'],
    );
    assert.equal(x.client.homeName, 'box1');
    assert.equal(performance.getEntriesByName('termhost:hosts').length > 0, true, 'the host list is marked at boot');
  });

  test('a share link’s page, with no list in its config, opens its own socket only and asks for no list', async () => {
    const x = start({ ...base, role: 'viewer', terminalId: 'abc' });
    await flush();
    assert.deepEqual(
      x.sockets.map((s) => s.url),
      ['ws://box1.test:8080/ws?terminal=abc'],
    );
    assert.deepEqual(x.fetched, []);
    assert.deepEqual(x.client.hosts(), []);
  });

  test('once the home link is up, the page checks the list again and follows a change it was not told of', async () => {
    const x = start({ ...base, hosts });
    const changed = { home: { name: 'box1' }, hosts: [hosts.hosts[0]!, { name: 'box5', url: 'https://box5.corp.test/' }] };
    x.answer('/api/hosts', changed);
    const home = x.sockets[0]!;
    home.open();
    await flush();
    home.reply(home.last('initialize')!.id!, { protocolVersion: '1.0.0', serverSeq: 1, snapshots: [{ resource: ROOT_CHANNEL, state: { agents: [], terminals: [] }, fromSeq: 1 }] });
    await flush();
    assert.deepEqual(x.fetched, ['/api/hosts']);
    assert.deepEqual(
      x.client.hosts().map((h) => h.name),
      ['box2', 'box5'],
    );
    const box2 = x.sockets.filter((s) => s.url === 'wss://box2.corp.test/ws');
    assert.equal(box2.length, 1, 'a host still listed keeps its socket');
    assert.equal(x.sockets.at(-1)!.url, 'wss://box5.corp.test/ws');
  });
});
