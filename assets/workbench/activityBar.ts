// The activity bar (Terminals, Commands, Manage) and what its items show:
// a pane of the side bar, or the side bar hidden when the shown pane's item
// is clicked again. On a phone it is a bar across the top whose first item,
// the menu button, opens the side bar as a drawer (sidebarLayout.ts).

import { h, svg } from './dom';
import { icons } from './icons';
import type { Sidebar } from './sidebar';
import type { SidebarLayout } from './sidebarLayout';

export type Pane = 'terminals' | 'commands';

const menuIcon = `<svg width="24" height="24" viewBox="0 0 16 16" fill="none" stroke="currentColor" stroke-width="1" stroke-linecap="round"><path d="M2.5 4h11M2.5 8h11M2.5 12h11"/></svg>`;

export class ActivityBar {
  #items: Record<string, HTMLElement> = {};
  #sidebar: Sidebar;
  #layout: SidebarLayout;

  constructor(bar: HTMLElement, sidebar: Sidebar, layout: SidebarLayout, manage: () => void) {
    this.#sidebar = sidebar;
    this.#layout = layout;
    const item = (id: string, icon: string, title: string, run: () => void) => {
      const el = h('button.action-item', { type: 'button', title, 'aria-label': title, onclick: run }, svg(icon, 'codicon activity-icon'));
      this.#items[id] = el;
      return el;
    };
    const menu = h('button.action-item.drawer-toggle', { type: 'button', title: 'Toggle Side Bar', 'aria-label': 'Toggle Side Bar', onclick: () => layout.toggle() }, svg(menuIcon, 'codicon activity-icon'));
    bar.append(
      h('div.actions-top', null, menu, item('terminals', icons.terminalLarge, 'Terminals', () => this.showPane('terminals')), item('commands', icons.listLarge, 'Commands', () => this.showPane('commands'))),
      h('div.actions-bottom', null, item('manage', icons.gearLarge, 'Manage', manage)),
    );
    this.#items.terminals!.classList.add('checked');
  }

  showPane(which: Pane): void {
    const pane = which === 'terminals' ? this.#sidebar.terminals : this.#sidebar.commands;
    if (this.#layout.visible && this.#items[which]!.classList.contains('checked') && !pane.collapsed) {
      this.#layout.toggle(false);
      return;
    }
    this.#layout.toggle(true);
    pane.setCollapsed(false);
    for (const [k, el] of Object.entries(this.#items)) el.classList.toggle('checked', k === which);
    pane.element.scrollIntoView({ block: 'nearest' });
    (pane.element.querySelector('.list-row') as HTMLElement | null)?.focus();
  }
}
