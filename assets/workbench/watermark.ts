// The empty editor area's key hints (VS Code's watermark): the commands a
// newcomer needs first, with their keys.

import { h, keyLabel } from './dom';
import { primaryKey, type CommandRegistry } from './commands';

export function buildWatermark(role: string, commands: CommandRegistry): void {
  const w = document.querySelector('#editor-empty .watermark');
  if (!w) return;
  const ids = role !== 'owner' ? ['workbench.palette', 'terminal.open'] : ['workbench.palette', 'terminal.new', 'terminal.open', 'terminal.split'];
  const entry = (id: string) => {
    const a = commands.get(id)!;
    const key = primaryKey(a);
    return h('div.watermark-entry', { onclick: () => void a.run() }, h('dt', null, a.title), h('dd', null, ...(key ? keyLabel(key).split(' ').map((k) => h('kbd', null, k)) : [])));
  };
  w.append(h('dl.watermark-box', null, ...ids.map(entry)));
}
