// The empty editor area's hints (VS Code's watermark): the commands a
// newcomer needs first. With a keyboard they show their keys; on a touch
// screen (a phone, a tablet) there are no such keys, so the commands are
// buttons to tap instead.

import { h, keyLabel } from './dom';
import { primaryKey, type CommandRegistry } from './commands';

/** No mouse or trackpad at all: a phone or tablet, whatever its width. */
export const TOUCH_QUERY = '(hover: none) and (pointer: coarse)';

export function buildWatermark(role: string, commands: CommandRegistry): void {
  const w = document.querySelector('#editor-empty .watermark');
  if (!w) return;
  const touch = matchMedia(TOUCH_QUERY);
  const render = () => {
    w.querySelector('.watermark-box')?.remove();
    w.append(touch.matches ? touchBox(role, commands) : keyBox(role, commands));
  };
  render();
  touch.addEventListener('change', render);
}

function keyBox(role: string, commands: CommandRegistry): HTMLElement {
  const ids = role !== 'owner' ? ['workbench.palette', 'terminal.open'] : ['workbench.palette', 'terminal.new', 'terminal.open', 'terminal.split'];
  const entry = (id: string) => {
    const a = commands.get(id)!;
    const key = primaryKey(a);
    return h('div.watermark-entry', { onclick: () => void a.run() }, h('dt', null, a.title), h('dd', null, ...(key ? keyLabel(key).split(' ').map((k) => h('kbd', null, k)) : [])));
  };
  return h('dl.watermark-box', null, ...ids.map(entry));
}

function touchBox(role: string, commands: CommandRegistry): HTMLElement {
  const ids = role !== 'owner' ? ['terminal.open', 'workbench.palette'] : ['terminal.new', 'terminal.open', 'workbench.palette'];
  const box = h('div.watermark-box.touch');
  for (const id of ids) {
    const a = commands.get(id)!;
    box.append(h('button.button.secondary.watermark-tap', { type: 'button', onclick: () => void a.run() }, a.title));
  }
  // Viewers cannot type, and get no key row (keyRow.ts).
  if (role !== 'viewer') box.append(h('p.watermark-tip', null, 'In a terminal, the row of keys above the keyboard has Esc, Tab, Ctrl and the arrows.'));
  return box;
}
