import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandsToSkipShell } from './settings';
import { CommandRegistry } from './commands';

test('commandsToSkipShell: the defaults, plus ids, minus -ids', () => {
  const defaults = ['workbench.palette', 'terminal.new', 'terminal.open'];
  const cases: { name: string; user: string[]; want: string[] }[] = [
    { name: 'no setting', user: [], want: defaults },
    { name: 'give Ctrl+P back to the shell', user: ['-terminal.open'], want: ['workbench.palette', 'terminal.new'] },
    { name: 'take Ctrl+B too', user: ['view.toggleSidebar'], want: [...defaults, 'view.toggleSidebar'] },
    { name: 'blanks ignored', user: [' ', ' -terminal.new '], want: ['workbench.palette', 'terminal.open'] },
  ];
  for (const c of cases) assert.deepEqual([...commandsToSkipShell(defaults, c.user)].sort(), [...c.want].sort(), c.name);
});

test('the default set holds Quick Open (Ctrl+P), the palette and New Terminal', () => {
  const r = new CommandRegistry();
  const noop = () => {};
  r.register({ id: 'terminal.open', category: 'Terminal', title: 'Open Terminal…', key: 'Ctrl+P', inTerminal: true, run: noop });
  r.register({ id: 'workbench.palette', category: 'View', title: 'Show All Commands', key: 'Ctrl+Shift+P or F1', inTerminal: true, run: noop });
  r.register({ id: 'view.toggleSidebar', category: 'View', title: 'Toggle', key: 'Ctrl+B', run: noop });
  assert.deepEqual(r.defaultSkipShell(), ['terminal.open', 'workbench.palette']);
});
