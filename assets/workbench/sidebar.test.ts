// The side bar over a real MultiHostClient (real AhpClients on scripted
// sockets, wired as the workbench wires them): one host's list or state
// coming in draws that host's group only, and the rows already in the page
// stay the same elements (their keyboard focus with them).
import './testDom';
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { AhpClient, type Timers } from '../ahp/client';
import { ScriptedSocket } from '../ahp/scriptedSocket';
import { MultiHostClient } from '../ahp/multihost';
import { hostUri, type HostEntry } from '../ahp/hosts';
import { ROOT_CHANNEL, type RootState, type TerminalInfo } from '../ahp/types';
import { Control } from './terminal/presence';
import { Sidebar, hostGroupsOf } from './sidebar';

const flush = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** Timers that never fire: the tests drive every step. */
const stillTimers: Timers = {
  setTimeout: () => 0,
  clearTimeout: () => {},
  setInterval: () => 0,
  clearInterval: () => {},
  now: () => 0,
};

const info = (resource: string, title: string): TerminalInfo => ({ resource, title, claim: { kind: 'client', clientId: 'someone' } }) as TerminalInfo;
const terminals = (n: number) => Array.from({ length: n }, (_, i) => info(`ahp-terminal:/t${i + 1}`, `shell ${i + 1}`));

function setup() {
  const sockets = new Map<string, ScriptedSocket>();
  const make = (url: string, clientId: string) =>
    new AhpClient({
      url,
      clientId,
      timers: stillTimers,
      random: () => 0.5,
      createSocket: (u) => {
        const s = new ScriptedSocket(u);
        sockets.set(u, s);
        return s;
      },
    });
  const mc = new MultiHostClient(make('wss://dev.corp/box1/ws', 'web-home'), {
    makeClient: (h: HostEntry) => make(`wss://dev.corp/${h.name}/ws`, `web-${h.name}`),
    probe: async () => ({ status: 0 }),
  });
  const control = new Control(mc, 'owner', () => undefined, () => {}, () => {}, (uri) => uri);
  let catalogue: TerminalInfo[] = [];
  let active: string | undefined;
  const calls: string[] = [];
  const container = document.createElement('div');
  document.body.replaceChildren(container);
  const sidebar = new Sidebar(container, {
    clientId: mc.clientId,
    role: 'owner',
    openTerminal: (uri, toSide) => calls.push(`open ${uri}${toSide ? ' to the side' : ''}`),
    newTerminal: () => calls.push('new'),
    rename: (uri) => calls.push(`rename ${uri}`),
    kill: (uri) => calls.push(`kill ${uri}`),
    share: (uri) => calls.push(`share ${uri}`),
    revealCommand: () => {},
    copyCommandOutput: () => {},
    isOpen: (uri) => uri === active,
    activeUri: () => active,
    nameOf: (uri) => catalogue.find((t) => t.resource === uri)?.title ?? 'Terminal',
    holderLabel: (uri, claim, away) => control.holderLabel(uri, claim, away),
    hostGroups: () => hostGroupsOf(mc),
    newTerminalOn: (host) => calls.push(`new on ${host}`),
  });
  // As the workbench does (app.ts): the catalogue on every root snapshot and action, the groups on every host change.
  let draws = 0;
  mc.on('snapshot', (ch, st) => {
    if (ch !== ROOT_CHANNEL) return;
    catalogue = (st as RootState).terminals ?? [];
    sidebar.renderTerminals(catalogue);
    draws++;
  });
  mc.on('hosts', () => sidebar.refreshSelection());
  /** Opens a host's socket and answers its initialize with these terminals. */
  const answer = async (host: string, list: TerminalInfo[]) => {
    const s = sockets.get(`wss://dev.corp/${host}/ws`)!;
    s.open();
    await flush();
    s.reply(s.last('initialize')!.id!, { protocolVersion: '1.0.0', serverSeq: 1, snapshots: [{ resource: ROOT_CHANNEL, state: { agents: [], terminals: list }, fromSeq: 1 }] });
    await flush();
  };
  const body = sidebar.terminals.body;
  const rows = (host: string) => [...body.querySelectorAll<HTMLElement>(`.host-terminals[data-host="${host}"] .terminal-item`)];
  const header = (host: string) => body.querySelector<HTMLElement>(`.host-group[data-host="${host}"]`)!;
  return {
    mc,
    sidebar,
    body,
    rows,
    header,
    answer,
    calls,
    sock: (host: string) => sockets.get(`wss://dev.corp/${host}/ws`)!,
    draws: () => draws,
    setActive: (uri: string | undefined) => (active = uri),
    start: async () => {
      mc.connect();
      mc.setHosts({ home: 'box1', hosts: ['box2', 'box3', 'box4'].map((name) => ({ name, url: `https://dev.corp/${name}/` })) });
      await flush();
    },
  };
}

describe('Sidebar across hosts', () => {
  test('another host’s list leaves the other groups’ rows and headers as they were (same elements)', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(20));
    await x.answer('box2', terminals(20));
    const home = x.rows('');
    const box2 = x.rows('box2');
    const headers = ['', 'box2', 'box3', 'box4'].map((host) => x.header(host));
    assert.equal(home.length, 20);
    assert.equal(box2.length, 20);
    assert.equal(x.header('box3').dataset.status, 'connecting');

    await x.answer('box3', terminals(20));
    assert.equal(x.rows('box3').length, 20, 'box3 filled in');
    assert.equal(x.header('box3').dataset.status, 'connected');
    x.rows('').forEach((r, i) => assert.equal(r, home[i], `home row ${i + 1} is the element it was`));
    x.rows('box2').forEach((r, i) => assert.equal(r, box2[i], `box2 row ${i + 1} is the element it was`));
    assert.equal(x.header(''), headers[0], 'the home header is the element it was');
    assert.equal(x.header('box2'), headers[1]);
    assert.equal(x.header('box4'), headers[3], 'a host still connecting keeps its header');
    assert.notEqual(x.header('box3'), headers[2], 'box3’s header says connected now');
  });

  test('a host’s rows are drawn once: its going online after its list redraws only its header', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(3));
    // box2's list, before its link says online: catch the rows drawn with the list.
    const s = x.sock('box2');
    s.open();
    await flush();
    let atList: HTMLElement[] = [];
    let headerAtList: HTMLElement | undefined;
    const off = x.mc.on('snapshot', (ch) => {
      if (ch !== ROOT_CHANNEL) return;
      atList = x.rows('box2');
      headerAtList = x.header('box2');
    });
    const draws = x.draws();
    s.reply(s.last('initialize')!.id!, { protocolVersion: '1.0.0', serverSeq: 1, snapshots: [{ resource: ROOT_CHANNEL, state: { agents: [], terminals: terminals(3) }, fromSeq: 1 }] });
    await flush();
    off();
    assert.equal(x.draws(), draws + 1, 'one list, one draw');
    assert.equal(atList.length, 3);
    assert.equal(headerAtList?.dataset.status, 'connecting');
    assert.equal(x.header('box2').dataset.status, 'connected');
    x.rows('box2').forEach((r, i) => assert.equal(r, atList[i], `box2 row ${i + 1} was not drawn again when box2 went online`));
  });

  test('the row with the keyboard keeps it while other hosts answer and go down', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(5));
    const row = x.rows('')[2]!;
    row.focus();
    assert.equal(document.activeElement, row);
    await x.answer('box2', terminals(5));
    await x.answer('box3', terminals(5));
    x.sock('box2').close(1006, '');
    await flush();
    assert.equal(x.header('box2').dataset.status, 'unreachable');
    assert.ok(x.body.querySelector('.host-terminals[data-host="box2"]')!.classList.contains('host-down'), 'box2’s rows are greyed out');
    assert.equal(x.rows('box2').length, 5, 'and still listed');
    assert.equal(document.activeElement, row, 'the focused row is still the element in the page');
  });

  test('selecting a terminal redraws its row and the one it leaves, no other', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(4));
    await x.answer('box2', terminals(4));
    const before = [...x.rows(''), ...x.rows('box2')];
    const b2 = hostUri('box2', 'ahp-terminal:/t2');
    x.setActive(b2);
    x.sidebar.refreshSelection();
    let after = [...x.rows(''), ...x.rows('box2')];
    assert.deepEqual(
      after.map((r, i) => r === before[i]),
      [true, true, true, true, true, false, true, true],
    );
    const sel = x.rows('box2')[1]!;
    assert.ok(sel.classList.contains('selected') && sel.classList.contains('open'));
    assert.equal(sel.getAttribute('aria-selected'), 'true');
    x.setActive('ahp-terminal:/t1');
    x.sidebar.refreshSelection();
    after = [...x.rows(''), ...x.rows('box2')];
    assert.deepEqual(
      after.map((r, i) => r === before[i]),
      [false, true, true, true, true, false, true, true],
    );
    assert.equal(x.rows('box2')[1]!.getAttribute('aria-selected'), 'false');
    assert.equal(x.body.querySelectorAll('.selected').length, 1);
  });

  test('a terminal gone from a host leaves that group, its neighbours stay', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(3));
    await x.answer('box2', terminals(3));
    const home = x.rows('');
    const box2 = x.rows('box2');
    // box2 disposes its terminal 2.
    x.sock('box2').deliver({ jsonrpc: '2.0', method: 'action', params: { channel: ROOT_CHANNEL, serverSeq: 2, action: { type: 'root/terminalsChanged', terminals: [terminals(3)[0], terminals(3)[2]] } } });
    await flush();
    assert.deepEqual(x.rows('box2'), [box2[0], box2[2]]);
    assert.deepEqual(x.rows(''), home);
  });

  test('keys and row actions do what they did', async () => {
    const x = setup();
    await x.start();
    await x.answer('box1', terminals(3));
    await x.answer('box2', terminals(3));
    const [r1, r2] = x.rows('box2');
    const key = (el: HTMLElement, k: string) => el.dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true, cancelable: true }));
    r1!.focus();
    key(r1!, 'ArrowDown');
    assert.equal(document.activeElement, r2);
    key(r2!, 'ArrowUp');
    assert.equal(document.activeElement, r1);
    const uri = hostUri('box2', 'ahp-terminal:/t1');
    key(r1!, 'Enter');
    key(r1!, 'F2');
    key(r1!, 'Delete');
    r1!.click();
    (r1!.querySelector('button[title="Open to the Side"]') as HTMLElement).click();
    (r1!.querySelector('button[title="Rename…"]') as HTMLElement).click();
    (r1!.querySelector('button[title="Share Terminal…"]') as HTMLElement).click();
    (x.header('box2').querySelector('button.host-new') as HTMLElement).click();
    assert.deepEqual(x.calls, [`open ${uri}`, `rename ${uri}`, `kill ${uri}`, `open ${uri}`, `open ${uri} to the side`, `rename ${uri}`, `share ${uri}`, 'new on box2']);
  });
});
