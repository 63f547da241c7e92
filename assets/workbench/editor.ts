// Editor area: groups side by side, each with a tab strip and one visible
// terminal. Tabs can be dragged to reorder, between groups, or to the right
// edge of a group to split.

import { h, clear, patchChildren, svg } from './dom';
import { icons } from './icons';
import { hasExited } from '../ahp/types';
import type { TerminalView } from './terminal/terminalView';
import { attentionBadge } from './terminal/approvalBar';
import type { Attention } from './approvals';

const DND_TYPE = 'application/x-termhost-tab';

export interface EditorHost {
  role: string;
  shareTerminal(view: TerminalView): void;
  activated(view: TerminalView | undefined): void;
  closeTab(view: TerminalView): void;
  killTerminal(view: TerminalView): void;
  splitRight(group: EditorGroup): void;
  titleOf(view: TerminalView): string;
  /** The terminal's host is not connected (another host's, gone or reconnecting): its tab is greyed out. */
  hostDown?(view: TerminalView): boolean;
  /** The terminal's page as people open it (a dragged tab's text). */
  terminalLink(view: TerminalView): string;
  layoutChanged(): void;
  /** Who is on a terminal: avatars for its tab (terminal/presence.ts). */
  presenceOf?(view: TerminalView): HTMLElement | null;
  /** A pending approval or password prompt of a terminal: its tab's badge (approvals.ts). */
  attentionOf?(uri: string): Attention | undefined;
}

/** A tab's icon: spinning while a command runs, red after a failure. */
function tabIcon(view: TerminalView): { icon: string; cls: string; tooltip: string } {
  const s = view.status;
  switch (s.kind) {
    case 'running':
      return { icon: icons.loading, cls: 'status-running spin', tooltip: `running: ${s.label}` };
    case 'failure':
      return { icon: icons.error, cls: 'status-failure', tooltip: hasExited(view.state!) ? s.label : `last command failed (exit ${s.code})` };
    case 'exited':
      return { icon: icons.pass, cls: 'status-exited', tooltip: s.label };
    default:
      return { icon: icons.terminal, cls: '', tooltip: '' };
  }
}

export class EditorGroup {
  readonly element: HTMLElement;
  readonly tabsEl: HTMLElement;
  readonly content: HTMLElement;
  views: TerminalView[] = [];
  active: TerminalView | undefined;
  #area: EditorArea;
  #dropOverlay: HTMLElement;

  constructor(area: EditorArea) {
    this.#area = area;
    this.tabsEl = h('div.tabs-container', { role: 'tablist' });
    // Share, split and kill are the owner's; a share link's page has none.
    const owner = area.host.role === 'owner';
    const actions = h(
      'div.editor-actions',
      null,
      owner ? h('button.icon-button.share-action', { type: 'button', title: 'Share Terminal…', 'aria-label': 'Share Terminal', onclick: () => this.active && area.host.shareTerminal(this.active) }, svg(icons.share)) : null,
      owner ? h('button.icon-button', { type: 'button', title: 'Split Terminal (New Terminal to the Right)', 'aria-label': 'Split Terminal', onclick: () => area.host.splitRight(this) }, svg(icons.split)) : null,
      owner ? h('button.icon-button', { type: 'button', title: 'Kill Terminal', 'aria-label': 'Kill Terminal', onclick: () => this.active && area.host.killTerminal(this.active) }, svg(icons.trash)) : null,
    );
    this.content = h('div.editor-container');
    this.#dropOverlay = h('div.editor-drop-overlay', { hidden: true });
    this.element = h('div.editor-group', null, h('div.title', null, this.tabsEl, actions), h('div.editor-group-body', null, this.content, this.#dropOverlay));
    this.element.addEventListener('mousedown', () => area.setActiveGroup(this), true);
    this.#wireDnd();
  }

  add(view: TerminalView, index = this.views.length): void {
    this.views.splice(index, 0, view);
    this.content.append(view.element);
    view.hide();
    this.renderTabs();
  }

  remove(view: TerminalView): void {
    const i = this.views.indexOf(view);
    if (i < 0) return;
    this.views.splice(i, 1);
    if (this.active === view) {
      this.active = undefined;
      const next = this.views[Math.min(i, this.views.length - 1)];
      if (next) this.activate(next, false);
    }
    this.renderTabs();
  }

  activate(view: TerminalView, focus = true): void {
    if (this.active !== view) {
      this.active?.hide();
      this.active = view;
    }
    view.show();
    this.renderTabs();
    if (focus) view.focus();
  }

  renderTabs(): void {
    const drawn = h('div');
    this.#drawTabs(drawn);
    patchChildren(this.tabsEl, drawn);
  }

  #drawTabs(tabsEl: HTMLElement): void {
    const host = this.#area.host;
    // Same-named terminals (several "bash") get their id as a description.
    const titles = this.#area.views.map((v) => host.titleOf(v));
    this.views.forEach((v, i) => {
      const st = tabIcon(v);
      const title = host.titleOf(v);
      const dup = titles.filter((t) => t === title).length > 1;
      const tab = h(
        'div.tab',
        {
          role: 'tab',
          tabindex: 0, // keyboard: Tab reaches every tab, Enter or Space shows it
          draggable: 'true',
          'aria-selected': String(v === this.active),
          title: `${title}${st.tooltip ? ' — ' + st.tooltip : ''}`,
          'data-terminal': v.id,
        },
        svg(st.icon, `codicon tab-icon ${st.cls}`),
        h('span.tab-label', null, title, dup ? h('span.tab-description', null, v.id) : null),
        // An agent's session claim holds the terminal: say so on the tab.
        v.state?.claim?.kind === 'session' ? h('span.agent-badge.tab-agent', { title: 'An agent controls this terminal (Take Control to type)' }, 'agent') : null,
        attentionBadge(host.attentionOf?.(v.uri)),
        host.presenceOf?.(v) ?? null,
        h('button.icon-button.tab-close', { type: 'button', title: 'Close Tab (the terminal keeps running)', 'aria-label': `Close ${title}`, onclick: (e: Event) => (e.stopPropagation(), host.closeTab(v)) }, svg(icons.close)),
      );
      if (v === this.active) tab.classList.add('active');
      if (host.hostDown?.(v)) tab.classList.add('host-down');
      tab.addEventListener('click', () => {
        this.#area.setActiveGroup(this);
        this.activate(v);
      });
      tab.addEventListener('keydown', (e) => {
        if (e.target !== tab || (e.key !== 'Enter' && e.key !== ' ')) return;
        e.preventDefault();
        tab.click();
      });
      tab.addEventListener('auxclick', (e) => {
        if (e.button === 1) host.closeTab(v);
      });
      tab.addEventListener('dragstart', (e) => {
        e.dataTransfer!.setData(DND_TYPE, v.uri);
        e.dataTransfer!.setData('text/plain', host.terminalLink(v));
        e.dataTransfer!.effectAllowed = 'move';
        this.#area.dragging = v;
        tab.classList.add('dragging');
      });
      tab.addEventListener('dragend', () => {
        this.#area.dragging = undefined;
        tab.classList.remove('dragging');
        this.#area.clearDropHints();
      });
      tab.addEventListener('dragover', (e) => {
        if (!this.#area.dragging) return;
        e.preventDefault();
        const r = tab.getBoundingClientRect();
        const after = e.clientX > r.left + r.width / 2;
        this.#area.clearDropHints();
        tab.classList.add(after ? 'drop-after' : 'drop-before');
      });
      tab.addEventListener('drop', (e) => {
        const dragged = this.#area.dragging;
        if (!dragged) return;
        e.preventDefault();
        e.stopPropagation();
        const r = tab.getBoundingClientRect();
        const after = e.clientX > r.left + r.width / 2;
        this.#area.move(dragged, this, i + (after ? 1 : 0));
      });
      tabsEl.append(tab);
    });
  }

  #wireDnd(): void {
    // Drop on the empty part of the tab strip: append.
    this.tabsEl.addEventListener('dragover', (e) => {
      if (!this.#area.dragging) return;
      e.preventDefault();
    });
    this.tabsEl.addEventListener('drop', (e) => {
      const v = this.#area.dragging;
      if (!v) return;
      e.preventDefault();
      this.#area.move(v, this, this.views.length);
    });
    // Drop on the body: right third splits, elsewhere moves into this group.
    const body = this.element.querySelector('.editor-group-body') as HTMLElement;
    body.addEventListener('dragover', (e) => {
      if (!this.#area.dragging) return;
      e.preventDefault();
      const r = body.getBoundingClientRect();
      const split = e.clientX > r.left + (r.width * 2) / 3;
      this.#dropOverlay.hidden = false;
      this.#dropOverlay.classList.toggle('split', split);
    });
    body.addEventListener('dragleave', (e) => {
      if (!body.contains(e.relatedTarget as Node)) this.#dropOverlay.hidden = true;
    });
    body.addEventListener('drop', (e) => {
      const v = this.#area.dragging;
      this.#dropOverlay.hidden = true;
      if (!v) return;
      e.preventDefault();
      const r = body.getBoundingClientRect();
      if (e.clientX > r.left + (r.width * 2) / 3) this.#area.moveToNewGroup(v, this);
      else this.#area.move(v, this, this.views.length);
    });
  }

  hideDropHints(): void {
    this.#dropOverlay.hidden = true;
    for (const t of this.tabsEl.querySelectorAll('.drop-before, .drop-after')) t.classList.remove('drop-before', 'drop-after');
  }
}

export class EditorArea {
  readonly host: EditorHost;
  readonly element: HTMLElement;
  groups: EditorGroup[] = [];
  activeGroup: EditorGroup;
  dragging: TerminalView | undefined;
  #empty: HTMLElement;

  constructor(container: HTMLElement, empty: HTMLElement, host: EditorHost) {
    this.host = host;
    this.#empty = empty;
    this.element = h('div.editor-groups');
    container.append(this.element);
    this.activeGroup = this.#newGroup();
    this.#update();
  }

  #newGroup(after?: EditorGroup): EditorGroup {
    const g = new EditorGroup(this);
    const i = after ? this.groups.indexOf(after) + 1 : this.groups.length;
    this.groups.splice(i, 0, g);
    this.#renderGroups();
    return g;
  }

  #renderGroups(): void {
    clear(this.element);
    this.groups.forEach((g, i) => {
      if (i > 0) this.element.append(h('div.editor-sash'));
      this.element.append(g.element);
    });
  }

  get views(): TerminalView[] {
    return this.groups.flatMap((g) => g.views);
  }

  get activeView(): TerminalView | undefined {
    return this.activeGroup.active;
  }

  groupOf(v: TerminalView): EditorGroup | undefined {
    return this.groups.find((g) => g.views.includes(v));
  }

  setActiveGroup(g: EditorGroup): void {
    if (this.activeGroup === g) return;
    this.activeGroup = g;
    for (const x of this.groups) x.element.classList.toggle('active', x === g);
    this.host.activated(g.active);
  }

  open(v: TerminalView, group: EditorGroup = this.activeGroup, focus = true): void {
    if (!this.groupOf(v)) group.add(v);
    const g = this.groupOf(v)!;
    this.setActiveGroup(g);
    for (const x of this.groups) x.element.classList.toggle('active', x === g);
    g.activate(v, focus);
    this.#update();
    this.host.activated(v);
  }

  /** A new empty group right of `g` (for a new terminal). */
  splitGroup(g: EditorGroup = this.activeGroup): EditorGroup {
    const n = this.#newGroup(g);
    this.#update();
    return n;
  }

  close(v: TerminalView): void {
    const g = this.groupOf(v);
    if (!g) return;
    g.remove(v);
    this.#pruneGroups();
    this.#update();
    this.host.activated(this.activeView);
  }

  move(v: TerminalView, to: EditorGroup, index: number): void {
    const from = this.groupOf(v);
    if (!from) return;
    const oldIndex = from.views.indexOf(v);
    if (from === to) {
      if (index > oldIndex) index--;
      from.views.splice(oldIndex, 1);
      from.views.splice(index, 0, v);
      from.renderTabs();
    } else {
      from.remove(v);
      to.add(v, Math.min(index, to.views.length));
      to.content.append(v.element);
    }
    this.clearDropHints();
    this.open(v, to);
    this.#pruneGroups();
    this.#update();
  }

  moveToNewGroup(v: TerminalView, right: EditorGroup): void {
    const from = this.groupOf(v);
    if (from === right && right.views.length === 1) return;
    const g = this.#newGroup(right);
    this.move(v, g, 0);
  }

  clearDropHints(): void {
    for (const g of this.groups) g.hideDropHints();
  }

  #pruneGroups(): void {
    if (this.groups.length <= 1) return;
    const keep = this.groups.filter((g) => g.views.length > 0);
    if (keep.length === this.groups.length) return;
    if (keep.length === 0) keep.push(this.groups[0]!);
    this.groups = keep;
    if (!keep.includes(this.activeGroup)) this.activeGroup = keep[keep.length - 1]!;
    this.#renderGroups();
  }

  focusNext(dir: 1 | -1): void {
    const all = this.views;
    const cur = this.activeView;
    if (!all.length) return;
    const i = cur ? all.indexOf(cur) : -1;
    const next = all[(i + dir + all.length) % all.length]!;
    this.open(next, this.groupOf(next));
  }

  #update(): void {
    const empty = this.views.length === 0;
    this.#empty.hidden = !empty;
    this.element.hidden = empty;
    for (const g of this.groups) g.element.classList.toggle('active', g === this.activeGroup);
    this.element.classList.toggle('multiple', this.groups.length > 1);
    for (const v of this.views) if (v.visible) v.scheduleLayout();
    this.host.layoutChanged();
  }

  renderTabs(): void {
    for (const g of this.groups) g.renderTabs();
  }

  /** Layout for sessionStorage: terminal URIs per group. */
  serialize(): { groups: string[][]; active?: string } {
    return { groups: this.groups.map((g) => g.views.map((v) => v.uri)).filter((g) => g.length), active: this.activeView?.uri };
  }
}
