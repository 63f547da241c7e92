// The quick pickers: the command palette (">"), the terminal picker (the
// palette without ">", as in VS Code), Go to Command and the colour themes.

import { splitHostUri } from '../ahp/hosts';
import { hasExited, exitCodeOf, terminalIdOf, type TerminalInfo } from '../ahp/types';
import { icons } from './icons';
import { formatDuration } from './format';
import { themeLabels, type Themes, type ThemeSetting } from './theme';
import type { QuickInput } from './quickinput';
import { primaryKey, type CommandRegistry } from './commands';
import { commandLabel, commandStatus } from './terminal/commandTracker';
import { matchRank, noteCommandRun, orderCommands, paletteLabel, recentCommands } from './paletteOrder';
import type { TerminalView } from './terminal/terminalView';

export interface PaletteHost {
  readonly catalogue: TerminalInfo[];
  openTerminal(uri: string): void;
  revealCommand(view: TerminalView, commandId: string): void;
  notify(kind: 'info', message: string): void;
}

export class Palette {
  #quick: QuickInput;
  #commands: CommandRegistry;
  #host: PaletteHost;

  constructor(quick: QuickInput, commands: CommandRegistry, host: PaletteHost) {
    this.#quick = quick;
    this.#commands = commands;
    this.#host = host;
  }

  /** Show All Commands; `query` is typed after the ">". */
  showCommands(query = ''): void {
    const items = orderCommands(this.#commands.enabled(), recentCommands()).map(({ action: a, group }) => ({
      label: paletteLabel(a),
      description: a.state?.(),
      keybinding: primaryKey(a),
      group: group || undefined,
      action: a,
    }));
    void this.#quick
      .pick(items, {
        placeholder: 'Type the name of a command to run.',
        value: '>' + query,
        // Destructive commands stay last however well they match.
        rank: (it, q) => (matchRank(q, it.label) ?? 3) + (it.action.destructive ? 10 : 0),
        onValue: (val) => {
          if (val.startsWith('>')) return false;
          // Without ">" the palette becomes the terminal picker, as in VS Code.
          this.#quick.cancel();
          this.showTerminals();
          return true;
        },
      })
      .then((it) => {
        if (!it) return;
        noteCommandRun(it.action);
        void it.action.run();
      });
  }

  /** Open Terminal…: the terminals of the catalogue; ">" switches to the commands. */
  showTerminals(): void {
    const items = this.#host.catalogue.map((t) => {
      // Another host's terminal says which host it is on.
      const { host, uri } = splitHostUri(t.resource);
      return {
        label: t.title || terminalIdOf(uri),
        description: `${host ? `${host} · ` : ''}${hasExited(t) ? `exited${exitCodeOf(t) !== undefined ? ` (${exitCodeOf(t)})` : ''}` : 'running'} · ${terminalIdOf(uri)}`,
        icon: hasExited(t) ? (exitCodeOf(t) ? icons.error : icons.pass) : icons.terminal,
        uri: t.resource,
      };
    });
    const toCommands = (v: string) => {
      if (!v.startsWith('>')) return false;
      this.showCommands(v.slice(1));
      return true;
    };
    void this.#quick
      .pick(items, { placeholder: 'Type the name of a terminal to open, or > for commands', matchOnDescription: true, onValue: toCommands })
      .then((it) => it && this.#host.openTerminal(it.uri));
  }

  /** Go to Command…: the commands of a terminal, newest first. */
  showCommandsOf(v: TerminalView): void {
    const items = [...v.commands].reverse().map((c) => {
      const s = commandStatus(c);
      return {
        label: commandLabel(c.commandLine) || '(empty)',
        description: s === 'running' ? 'running' : `${c.exitCode !== undefined && c.exitCode !== 0 ? `exit ${c.exitCode} · ` : ''}${c.durationMs !== undefined ? formatDuration(c.durationMs) : ''}`,
        icon: s === 'running' ? icons.loading : s === 'failure' ? icons.error : icons.pass,
        id: c.commandId,
      };
    });
    if (!items.length) {
      this.#host.notify('info', 'No commands yet in this terminal.');
      return;
    }
    void this.#quick.pick(items, { placeholder: 'Go to a command in this terminal', matchOnDescription: true }).then((it) => it && this.#host.revealCommand(v, it.id));
  }

  showThemes(themes: Themes): void {
    const current = themes.setting;
    const items = (Object.keys(themeLabels) as ThemeSetting[]).map((k) => ({ label: themeLabels[k], description: k === current ? 'current' : undefined, key: k }));
    void this.#quick.pick(items, { placeholder: 'Select Color Theme' }).then((it) => it && themes.set(it.key));
  }
}
