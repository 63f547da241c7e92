// The status bar: host, connection and latency, protocol, role on the left;
// the active terminal's claim, directory, size and last command, and the
// notifications bell on the right. Each item has a priority: when the bar is
// too narrow for all (a phone), the lowest go first, so none overlap.

import type { MultiHostClient } from '../ahp/multihost';
import { h, clear, svg } from './dom';
import { icons } from './icons';
import { claimLabel, cwdLabel } from './format';
import { roleDescriptions, roleLabels, type Role } from './access';
import type { TerminalView } from './terminal/terminalView';
import type { TerminalClaim } from '../ahp/types';

export interface StatusSource {
  readonly client: MultiHostClient;
  readonly role: Role;
  /** The id this page claims terminals with. */
  readonly clientId: string;
  readonly version: string;
  /** A person signed in by SSO: their name ("" otherwise). */
  readonly person?: string;
  /** Set once our access ended (see ConnectionBanner). */
  endedTitle(): string | undefined;
  activeView(): TerminalView | undefined;
  notificationsOn(): boolean;
  /** Who controls a terminal, by presence label (never a client that left). */
  holderLabel?(uri: string, claim: TerminalClaim | undefined): string;
}

/** What clicking an item does. */
export interface StatusActions {
  showCommands(): void;
  retryNow(): void;
  takeControl(): void;
  goToCommand(): void;
  toggleNotifications(): void;
}

/**
 * Higher stays longer. The host item opens the command palette, the only way
 * to every command without a keyboard; a shared role (viewer, driver) must
 * stay in sight, the owner's says little; the protocol version matters least.
 */
const priorities: Record<string, number> = { host: 100, connection: 90, sharedRole: 80, claim: 70, build: 60, notifications: 50, cwd: 40, size: 30, ownerRole: 25, protocol: 20 };

export class StatusBar {
  #src: StatusSource;
  #bar: HTMLElement;
  #items: Record<string, HTMLElement> = {};

  constructor(bar: HTMLElement, src: StatusSource, act: StatusActions) {
    this.#src = src;
    this.#bar = bar;
    const left = h('div.statusbar-left#statusbar-left');
    const right = h('div.statusbar-right#statusbar-right');
    bar.append(left, right);
    const item = (id: string, side: HTMLElement, onclick?: () => void) => {
      const el = h(onclick ? 'button.statusbar-item' : ('div.statusbar-item' as 'div'), { id: `status.${id}`, type: onclick ? 'button' : undefined, onclick });
      this.#items[id] = el;
      side.append(el);
      return el;
    };
    item('host', left, () => act.showCommands()).classList.add('remote-kind');
    item('connection', left, () => act.retryNow());
    item('protocol', left);
    item('role', left);
    item('claim', right, () => act.takeControl());
    item('cwd', right);
    item('size', right);
    item('build', right, () => act.goToCommand());
    item('notifications', right, () => act.toggleNotifications());
    new ResizeObserver(() => this.#fit()).observe(bar);
  }

  #set(id: string, icon: string | undefined, text: string, title: string, cls = ''): void {
    const el = this.#items[id];
    if (!el) return;
    clear(el);
    if (icon) el.append(svg(icon, `codicon ${cls}`));
    if (text) el.append(h('span', null, text));
    el.title = title;
    el.hidden = !icon && !text;
  }

  render(): void {
    const { client: c, role, version } = this.#src;
    this.#set('host', icons.remote, 'termhost', `termhost ${version || ''} — Show All Commands`);
    this.#renderConnection();
    this.#set('protocol', undefined, c.protocolVersion ? `AHP ${c.protocolVersion}` : '', `Agent Host Protocol version negotiated with the server${c.serverInfo ? `\nServer: ${c.serverInfo.name} ${c.serverInfo.version ?? ''}` : ''}`);
    const roleIcon = role === 'viewer' ? icons.eye : role === 'driver' ? icons.keyboard : icons.person;
    const ended = this.#src.endedTitle(); // what ended our access, in the page's words
    // A person signed in by SSO is named, with their role: "Alice Smith · Owner".
    const person = this.#src.person ? `${this.#src.person} · ` : '';
    this.#set('role', roleIcon, person + (role === 'viewer' ? 'Viewer · View Only' : roleLabels[role]), `${this.#src.person ? `Signed in as ${this.#src.person}\n` : ''}Your role: ${roleLabels[role]}\n${roleDescriptions[role]}${ended !== undefined ? `\n${ended}.` : ''}`, '');
    this.#items.role!.classList.toggle('role-shared', role !== 'owner');
    this.#renderTerminal(this.#src.activeView());
    const on = this.#src.notificationsOn();
    this.#set('notifications', icons.bell, '', on ? 'Notifications on when commands finish in the background (click to turn off)' : 'Turn on notifications when commands finish in the background', on ? 'bell-on' : '');
    this.#fit();
  }

  /** Drop the lowest-priority items until the rest fit in the bar. */
  #fit(): void {
    const items = Object.entries(this.#items);
    for (const [, el] of items) el.classList.remove('dropped');
    const width = this.#bar.clientWidth;
    if (width === 0) return;
    const [left, right] = [this.#bar.children[0] as HTMLElement, this.#bar.children[1] as HTMLElement];
    const priority = (id: string) => priorities[id === 'role' ? (this.#src.role === 'owner' ? 'ownerRole' : 'sharedRole') : id] ?? 0;
    const byPriority = items.sort(([a], [b]) => priority(a) - priority(b));
    for (const [, el] of byPriority) {
      if (left.scrollWidth + right.scrollWidth <= width) return;
      if (!el.hidden) el.classList.add('dropped');
    }
  }

  #renderConnection(): void {
    const c = this.#src.client;
    const lat = c.latencyMs;
    const ended = this.#src.endedTitle();
    switch (c.connection) {
      case 'online':
        this.#set('connection', icons.plug, lat !== undefined ? `Connected · ${lat < 10 ? lat.toFixed(1) : Math.round(lat)} ms` : 'Connected', `Connected to ${c.url}${lat !== undefined ? `\nRound trip (protocol ping): ${lat} ms` : ''}`);
        break;
      case 'connecting':
        this.#set('connection', icons.loading, 'Connecting…', `Connecting to ${c.url}`, 'spin');
        break;
      case 'offline':
        // Also a link that went silent (an unanswered ping): never "Connected" over a dead link.
        this.#set('connection', icons.disconnect, 'Reconnecting…', 'Connection lost. Click to retry now.', 'status-failure');
        break;
      default:
        this.#set('connection', icons.disconnect, ended !== undefined ? (this.#src.role === 'owner' ? 'Signed out' : 'Link ended') : 'Disconnected', ended !== undefined ? `${ended}: no reconnect.` : 'Closed');
    }
    this.#items.connection!.classList.toggle('offline', c.connection === 'offline');
  }

  #renderTerminal(v: TerminalView | undefined): void {
    const st = v?.state;
    if (!v || !st) {
      for (const id of ['claim', 'cwd', 'size', 'build']) this.#set(id, undefined, '', '');
      return;
    }
    const holder = this.#src.holderLabel?.(v.uri, st.claim) ?? claimLabel(st.claim, this.#src.clientId);
    const c = controlStatus(v.isHolder, v.hasControl, holder, this.#src.role);
    this.#set('claim', c.mine ? icons.key : icons.eye, c.text, c.title);
    this.#set('cwd', undefined, cwdLabel(st.cwd), st.cwd ? `Current directory: ${cwdLabel(st.cwd)}` : '');
    this.#set('size', undefined, st.cols && st.rows ? `${st.cols}×${st.rows}` : '', `Terminal size (columns × rows)${v.isHolder ? '' : ', set by whoever has control'}\nRenderer: ${v.rendererLabel}`);
    const s = v.status;
    const icon = s.kind === 'running' ? icons.loading : s.kind === 'failure' ? icons.error : s.kind === 'success' || s.kind === 'exited' ? icons.pass : undefined;
    const text = s.kind === 'running' ? 'Running' : s.kind === 'failure' ? `Exit ${s.code ?? ''}`.trim() : s.kind === 'success' ? 'Succeeded' : s.kind === 'exited' ? 'Exited' : '';
    this.#set('build', icon, text, s.label ? `${s.kind === 'running' ? 'Running' : 'Last'}: ${s.label}\nClick to go to a command` : '', s.kind === 'running' ? 'spin' : `status-${s.kind}`);
  }
}

/**
 * The status bar's control item (docs/protocol.md, "Control"): whoever has
 * control types into and sizes the terminal; everyone else watches, and a
 * driver asks for it while the owner takes it. The same words as the claim
 * bar, the CLI and the README.
 */
export function controlStatus(isHolder: boolean, hasControl: boolean, holder: string, role: Role): { mine: boolean; text: string; title: string } {
  if (isHolder) return { mine: true, text: 'Controlled by you', title: 'You have control: you type into and size this terminal' };
  if (role !== 'viewer' && hasControl && holder === 'nobody') {
    return { mine: true, text: 'Nobody in control', title: 'Nobody here has control: the first to type takes it' };
  }
  const watch = `${holder[0]!.toUpperCase()}${holder.slice(1)} has control: only they type into and size this terminal`;
  if (role === 'viewer') return { mine: false, text: `Controlled by ${holder}`, title: `${watch}; you watch.` };
  if (hasControl) return { mine: false, text: `Controlled by ${holder}`, title: `${holder[0]!.toUpperCase()}${holder.slice(1)} has control; you, the owner, may type too. Click to take control.` };
  return { mine: false, text: `Controlled by ${holder}`, title: `${watch}. Click to ${role === 'owner' ? 'take' : 'request'} control.` };
}
