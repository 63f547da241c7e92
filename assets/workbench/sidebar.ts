// Side bar: the TERMINALS view (root catalogue) and the COMMANDS view (shell
// integration commands of the focused terminal), as collapsible panes.

import { extMeta } from '../ahp/ext';
import { exitCodeOf, hasExited, terminalIdOf, type TerminalClaim, type TerminalInfo } from '../ahp/types';
import { h, clear, placeChildren, svg } from './dom';
import { icons } from './icons';
import { claimLabel, formatDuration } from './format';
import { commandLabel, commandStatus, type CommandRecord } from './terminal/commandTracker';
import type { TerminalView } from './terminal/terminalView';
import { recordingStateOf } from './recording';
import { attachScreenPreview, type ScreenSource } from './screenPreview';
import { attentionBadge } from './terminal/approvalBar';
import type { Attention } from './approvals';
import { groupByHost, hostDown, hostStatusLabels, type HostStatus } from '../ahp/hosts';
import type { MultiHostClient } from '../ahp/multihost';

export interface SidebarHost {
  clientId: string;
  role: string;
  openTerminal(uri: string, toSide?: boolean): void;
  newTerminal(): void;
  rename(uri: string): void;
  kill(uri: string): void;
  share(uri: string): void;
  revealCommand(view: TerminalView, commandId: string): void;
  copyCommandOutput(view: TerminalView, commandId: string): void;
  isOpen(uri: string): boolean;
  activeUri(): string | undefined;
  /** The terminal's name (terminalNames.ts): automatic or renamed, duplicates numbered. */
  nameOf(uri: string): string;
  /** Who controls a terminal, by presence label (terminal/presence.ts). */
  /** `away`: the catalogue says the claim's holder left for good (extMeta.holderAway). */
  holderLabel?(uri: string, claim: TerminalClaim, away?: boolean): string;
  /** The terminal's current screen as text (x-termhost/screen), for the hover preview. */
  screenOf?: ScreenSource;
  /** A pending approval or password prompt of a terminal: its row's badge (approvals.ts). */
  attentionOf?(uri: string): Attention | undefined;
  /**
   * With other hosts listed, one group per host, the home host first (its
   * host ""); none on a single-host page, which looks as it always did.
   */
  hostGroups?(): HostGroupInfo[];
  /** Opens a host's own sign-in page (a group's Sign In). */
  signIn?(host: string): void;
  /** New Terminal on that host (a group's + action). */
  newTerminalOn?(host: string): void;
}

/** A host group of the side bar: the host ("" the home host), its name and state. */
export interface HostGroupInfo {
  host: string;
  name: string;
  status: HostStatus;
  /** The host's own sign-in page, while it needs a sign-in. */
  login?: string;
}

/**
 * The groups of a multi-host client's hosts: the home host first (named as
 * the hosts list names it, else by this page's address), then the others in
 * the file's order; none with no other host (the side bar is as it always
 * was).
 */
export function hostGroupsOf(c: Pick<MultiHostClient, 'hosts' | 'homeName' | 'statusOf'>): HostGroupInfo[] {
  const others = c.hosts();
  if (others.length === 0) return [];
  return [{ host: '', name: c.homeName || location.host, status: c.statusOf('') }, ...others.map((x) => ({ host: x.name, name: x.name, status: x.status, login: x.login }))];
}

/** What a terminal's row shows, besides its URI: the row is drawn again when one changes. */
interface RowFacts {
  name: string;
  exited: boolean;
  code: number | null;
  holder: string;
  attention: Attention | null;
  recording: boolean;
  selected: boolean;
  open: boolean;
}

class Pane {
  readonly element: HTMLElement;
  readonly body: HTMLElement;
  readonly actions: HTMLElement;
  readonly titleEl: HTMLElement;
  #twistie: HTMLElement;
  collapsed = false;

  constructor(title: string, id: string) {
    this.#twistie = svg(icons.chevronDown, 'codicon twistie');
    this.actions = h('div.pane-actions');
    this.titleEl = h('h3.pane-title', null, title);
    const header = h('div.pane-header', { tabindex: 0, role: 'button', 'aria-expanded': 'true' }, this.#twistie, this.titleEl, this.actions);
    this.body = h('div.pane-body', { role: 'tree', 'aria-label': title });
    this.element = h('section.pane', { id }, header, this.body);
    const toggle = (e: Event) => {
      if ((e.target as HTMLElement).closest('.pane-actions')) return;
      this.setCollapsed(!this.collapsed);
    };
    header.addEventListener('click', toggle);
    header.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        toggle(e);
      }
    });
  }

  setCollapsed(c: boolean): void {
    this.collapsed = c;
    this.element.classList.toggle('collapsed', c);
    this.#twistie.innerHTML = c ? icons.chevronRight : icons.chevronDown;
    this.element.querySelector('.pane-header')!.setAttribute('aria-expanded', String(!c));
  }
}

export function action(icon: string, title: string, run: (e: Event) => void, cls = ''): HTMLElement {
  return h(`button.icon-button${cls ? '.' + cls : ''}` as 'button', { type: 'button', title, 'aria-label': title, onclick: (e: Event) => (e.stopPropagation(), run(e)) }, svg(icon));
}

export class Sidebar {
  readonly element: HTMLElement;
  readonly terminals: Pane;
  readonly commands: Pane;
  failedOnly = false;
  #host: SidebarHost;
  #filterBtn: HTMLElement;
  #catalogue: TerminalInfo[] = [];
  #view: TerminalView | undefined;
  /** The TERMINALS view's parts by key ("row:<uri>", "host:<host>", …), each with the facts it was drawn from (JSON). */
  #drawn = new Map<string, { facts: string; el: HTMLElement }>();

  constructor(container: HTMLElement, host: SidebarHost) {
    this.#host = host;
    this.terminals = new Pane('Terminals', 'terminals-view');
    this.commands = new Pane('Commands', 'commands-view');
    if (host.role === 'owner') this.terminals.actions.append(action(icons.add, 'New Terminal', () => host.newTerminal()));
    this.#filterBtn = action(icons.filter, 'Show Failed Commands Only', () => this.toggleFailedOnly(), 'filter-toggle');
    this.commands.actions.append(this.#filterBtn);
    this.element = h(
      'div.sidebar-content',
      null,
      h('div.sidebar-title', null, h('h2', null, 'Terminal Explorer'), h('div.sidebar-title-actions')),
      h('div.panes', null, this.terminals.element, this.commands.element),
    );
    container.append(this.element);
    this.renderTerminals([]);
    this.renderCommands(undefined);
  }

  toggleFailedOnly(v = !this.failedOnly): void {
    this.failedOnly = v;
    this.#filterBtn.classList.toggle('checked', v);
    this.#filterBtn.setAttribute('aria-pressed', String(v));
    this.#filterBtn.title = v ? 'Show All Commands' : 'Show Failed Commands Only';
    this.#filterBtn.innerHTML = '';
    this.#filterBtn.append(svg(v ? icons.filterFilled : icons.filter));
    this.renderCommands(this.#view);
  }

  /**
   * Draws the TERMINALS view. Only what changed is drawn again: each row,
   * group header and group is kept, keyed by terminal and by host, with the
   * facts it was drawn from, and used again while they stay the same. So one
   * host's list or state coming in draws that host's group and leaves every
   * other row in the page as it was (its keyboard focus, hover preview and a
   * click in progress with it), and a redraw that changes nothing touches
   * nothing.
   */
  renderTerminals(list: TerminalInfo[]): void {
    this.#catalogue = list;
    const used = new Set<string>();
    placeChildren(this.terminals.body, this.#drawTerminals(list, used));
    for (const k of this.#drawn.keys()) if (!used.has(k)) this.#drawn.delete(k);
  }

  /** The part of that key drawn from these facts: the one drawn before if they are the same. */
  #part(used: Set<string>, key: string, facts: unknown, draw: () => HTMLElement): HTMLElement {
    used.add(key);
    const f = JSON.stringify(facts);
    const had = this.#drawn.get(key);
    if (had && had.facts === f) return had.el;
    const el = draw();
    this.#drawn.set(key, { facts: f, el });
    return el;
  }

  #drawTerminals(list: TerminalInfo[], used: Set<string>): HTMLElement[] {
    const groups = this.#host.hostGroups?.() ?? [];
    if (groups.length === 0) return this.#drawHostTerminals(list, used);
    const out: HTMLElement[] = [];
    const byHost = new Map(groupByHost(list, groups.map((g) => g.host).filter(Boolean)).map((g) => [g.host, g.items]));
    for (const g of groups) {
      const items = byHost.get(g.host) ?? [];
      const down = hostDown(g.status);
      const signIn = g.status === 'signin' && g.login && this.#host.signIn;
      const newHere = this.#host.role === 'owner' && g.status === 'connected' && !!this.#host.newTerminalOn;
      out.push(
        this.#part(used, `host:${g.host}`, [g.name, g.status, signIn ? g.login : '', newHere], () =>
          h(
            'div.host-group',
            { role: 'heading', 'aria-level': 3, 'data-host': g.host || '', 'data-status': g.status, title: `${g.name}: ${hostStatusLabels[g.status]}` },
            svg(down ? icons.disconnect : icons.screen, 'codicon row-icon'),
            h('span.host-name', null, g.name),
            h('span.host-status', null, hostStatusLabels[g.status]),
            signIn ? h('button.button.host-sign-in', { type: 'button', onclick: (e: Event) => (e.stopPropagation(), this.#host.signIn!(g.host)) }, 'Sign In') : null,
            newHere ? h('div.row-actions.host-actions', null, action(icons.add, `New Terminal on ${g.name}`, () => this.#host.newTerminalOn!(g.host), 'host-new')) : null,
          ),
        ),
      );
      if (items.length === 0) {
        if (g.status === 'connected') out.push(this.#part(used, `empty:${g.host}`, [], () => h('div.host-empty', null, 'No terminals')));
        continue;
      }
      const group = this.#part(used, `group:${g.host}`, [], () => h('div.host-terminals', { 'data-host': g.host || '' }));
      group.classList.toggle('host-down', down);
      placeChildren(group, this.#drawRows(items, used));
      out.push(group);
    }
    return out;
  }

  #drawHostTerminals(list: TerminalInfo[], used: Set<string>): HTMLElement[] {
    if (list.length === 0) {
      return [
        this.#part(used, 'welcome', [], () =>
          h(
            'div.welcome-view',
            null,
            h('p', null, this.#host.role !== 'owner' ? 'No terminals are shared with you.' : 'No terminals are running on this server.'),
            this.#host.role === 'owner' ? h('button.button.primary.wide', { type: 'button', onclick: () => this.#host.newTerminal() }, 'New Terminal') : null,
          ),
        ),
      ];
    }
    return this.#drawRows(list, used);
  }

  #drawRows(list: TerminalInfo[], used: Set<string>): HTMLElement[] {
    const active = this.#host.activeUri();
    return list.map((t) => {
      const name = this.#host.nameOf(t.resource);
      const exited = hasExited(t);
      const code = exitCodeOf(t);
      const holder = this.#holderOf(t);
      const attention = this.#host.attentionOf?.(t.resource);
      const recording = recordingStateOf(t) === 'recording';
      const selected = t.resource === active;
      const open = this.#host.isOpen(t.resource);
      const facts: RowFacts = { name, exited, code: code ?? null, holder, attention: attention ?? null, recording, selected, open };
      return this.#part(used, `row:${t.resource}`, facts, () => {
        const row = this.#drawRow(t, name, exited, code, holder, attention, recording, selected);
        if (open) row.classList.add('open');
        return row;
      });
    });
  }

  #drawRow(t: TerminalInfo, name: string, exited: boolean, code: number | undefined, holder: string, attention: Attention | undefined, recording: boolean, selected: boolean): HTMLElement {
    const failed = exited && code !== undefined && code !== 0;
    const icon = exited ? (failed ? icons.error : icons.pass) : icons.terminal;
    const state = exited ? (code === undefined ? 'exited' : `exited (${code})`) : 'running';
    const row = h(
      'div.list-row.terminal-item',
      {
        role: 'treeitem',
        tabindex: 0,
        'data-terminal': terminalIdOf(t.resource),
        'aria-selected': String(selected),
        title: rowTitle(name, state, holder, t.resource),
        'data-state': state,
      },
      svg(icon, `codicon row-icon ${exited ? (failed ? 'status-failure' : 'status-exited') : ''}`),
      h('span.row-label', null, name),
      attentionBadge(attention),
      recording ? h('span.recording-dot', { title: 'Recording', role: 'img', 'aria-label': 'Recording' }) : null,
      h('span.row-description', null, h('span.terminal-state', { class: failed ? 'failed' : exited ? 'exited' : 'running' }, state), h('span.terminal-holder', null, ` · ${holder}`)),
      h('div.row-actions', null,
        this.#host.role === 'owner' ? action(icons.share, 'Share Terminal…', () => this.#host.share(t.resource), 'share-action') : null,
        action(icons.split, 'Open to the Side', () => this.#host.openTerminal(t.resource, true)),
        this.#host.role !== 'viewer' ? action(icons.edit, 'Rename…', () => this.#host.rename(t.resource)) : null,
        this.#host.role === 'owner' ? action(icons.trash, 'Kill Terminal', () => this.#host.kill(t.resource)) : null,
      ),
    );
    if (selected) row.classList.add('selected');
    row.addEventListener('click', () => this.#host.openTerminal(t.resource));
    if (this.#host.screenOf) attachScreenPreview(row, t.resource, this.#host.screenOf);
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.#host.openTerminal(t.resource);
      else if (e.key === 'F2' && this.#host.role !== 'viewer') this.#host.rename(t.resource);
      else if (e.key === 'Delete' && this.#host.role === 'owner') this.#host.kill(t.resource);
      else if (e.key === 'ArrowDown') (row.nextElementSibling as HTMLElement | null)?.focus();
      else if (e.key === 'ArrowUp') (row.previousElementSibling as HTMLElement | null)?.focus();
      else return;
      e.preventDefault();
    });
    return row;
  }

  refreshSelection(): void {
    this.renderTerminals(this.#catalogue);
  }

  /**
   * Names again who controls each listed terminal, in place (presence
   * arrived or changed): a redraw would take the keyboard and the hover
   * preview from the rows.
   */
  refreshHolders(): void {
    for (const t of this.#catalogue) {
      const drawn = this.#drawn.get(`row:${t.resource}`);
      const row = drawn?.el;
      const span = row?.querySelector('.terminal-holder');
      if (!drawn || !row || !span) continue;
      const holder = this.#holderOf(t);
      span.textContent = ` · ${holder}`;
      row.title = rowTitle(this.#host.nameOf(t.resource), row.dataset.state ?? '', holder, t.resource);
      // The row now shows this holder: the next redraw keeps it unless something else changed.
      drawn.facts = JSON.stringify({ ...(JSON.parse(drawn.facts) as RowFacts), holder });
    }
  }

  #holderOf(t: TerminalInfo): string {
    const away = t._meta?.[extMeta.holderAway] === true;
    return this.#host.holderLabel?.(t.resource, t.claim, away) ?? (away ? 'nobody' : claimLabel(t.claim, this.#host.clientId));
  }

  renderCommands(view: TerminalView | undefined): void {
    this.#view = view;
    const body = this.commands.body;
    clear(body);
    if (!view) {
      body.append(h('div.welcome-view', null, h('p', null, 'Open a terminal to see the commands it ran.')));
      return;
    }
    const all = view.commands;
    if (all.length === 0) {
      const detected = view.state?.supportsCommandDetection;
      // termhost run -- CMD: no shell, so no command lines; not a failure of shell integration.
      const runsCommand = this.#catalogue.find((t) => t.resource === view.uri)?._meta?.[extMeta.runsCommand] === true;
      const note = runsCommand
        ? 'This terminal runs a program directly (termhost run), not an interactive shell, so there are no command lines to list: its output and exit code are in the terminal.'
        : detected
          ? 'No commands have run in this terminal yet.'
          : 'Shell integration has not reported any command in this terminal (bash, zsh and fish are supported).';
      body.append(h('div.welcome-view', null, h('p', null, note)));
      return;
    }
    const shown = this.failedOnly ? all.filter((c) => commandStatus(c) === 'failure') : all;
    const failedCount = all.filter((c) => commandStatus(c) === 'failure').length;
    body.append(
      h('div.commands-summary', null, `${this.#host.nameOf(view.uri)} · ${all.length} command${all.length === 1 ? '' : 's'}${failedCount ? `, ${failedCount} failed` : ''}`),
    );
    if (shown.length === 0) {
      body.append(h('div.welcome-view', null, h('p', null, 'No failed commands.')));
      return;
    }
    for (const c of [...shown].reverse()) body.append(this.#commandRow(view, c));
  }

  #commandRow(view: TerminalView, c: CommandRecord): HTMLElement {
    const s = commandStatus(c);
    const icon = s === 'running' ? icons.loading : s === 'failure' ? icons.error : icons.pass;
    const desc =
      s === 'running' ? 'running' : [c.exitCode !== undefined && c.exitCode !== 0 ? `exit ${c.exitCode}` : null, c.durationMs !== undefined ? formatDuration(c.durationMs) : null].filter(Boolean).join(' · ');
    const row = h(
      'div.list-row.command-item',
      {
        role: 'treeitem',
        tabindex: 0,
        'data-command': c.commandId,
        'data-status': s,
        'data-exit-code': c.exitCode !== undefined ? String(c.exitCode) : undefined,
        'data-run-by': c.runBy ?? c.runByPerson,
        title: `${c.runBy || c.runByPerson ? `Run by ${c.runBy ?? c.runByPerson}: ` : ''}${c.commandLine}\n${s === 'running' ? 'Running' : c.exitCode === undefined ? 'Finished' : `Exit code ${c.exitCode}`}${c.durationMs !== undefined ? ` · ${formatDuration(c.durationMs)}` : ''} · ${new Date(c.timestamp).toLocaleString()}`,
      },
      svg(icon, `codicon row-icon status-${s}`),
      h('span.row-label.mono', null, commandLabel(c.commandLine) || '(empty)'),
      c.runBy ? h('span.agent-badge', { title: `Run by ${c.runBy}` }, 'agent') : null,
      h('span.row-description', null, desc),
      h('div.row-actions', null, action(icons.copy, 'Copy Output', () => this.#host.copyCommandOutput(view, c.commandId))),
    );
    row.addEventListener('click', () => this.#host.revealCommand(view, c.commandId));
    row.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') this.#host.revealCommand(view, c.commandId);
      else if (e.key === 'ArrowDown') (row.nextElementSibling as HTMLElement | null)?.focus();
      else if (e.key === 'ArrowUp') (row.previousElementSibling as HTMLElement | null)?.focus();
      else return;
      e.preventDefault();
    });
    return row;
  }
}

function rowTitle(name: string, state: string, holder: string, uri: string): string {
  return `${name} — ${state} — controlled by ${holder}\n${uri}`;
}
