// The command registry (VS Code's CommandsRegistry + KeybindingsRegistry in
// one): every workbench action with its palette title, its key bindings, when
// it applies, and the document-level key handler that runs them.

import { primary, isMac } from './dom';

export interface Action {
  id: string;
  category: string;
  title: string;
  /** "Ctrl+Shift+P or F1": Ctrl means Cmd on macOS. */
  key?: string;
  /**
   * In the default set of commands whose keys are taken from a focused
   * terminal (VS Code's commandsToSkipShell); the user's setting adds and
   * removes commands (settings.ts, CommandRegistry.skipShell).
   */
  inTerminal?: boolean;
  when?: () => boolean;
  /** Its key pressed while `when` is false: say why nothing happens (absent: the key goes on as if unbound). */
  refused?: () => void;
  /** Current state of a setting, shown next to it in the palette. */
  state?: () => string;
  /** Loses something (Sign Out, Kill): last in the palette, never among the recently used. */
  destructive?: boolean;
  run: () => void | Promise<void>;
}

interface Keybinding {
  primary?: boolean;
  shift?: boolean;
  alt?: boolean;
  code: string;
}

export function parseKey(k: string): Keybinding {
  const parts = k.split('+');
  const code = parts.pop()!;
  const map: Record<string, string> = { '`': 'Backquote', ',': 'Comma', Up: 'ArrowUp', Down: 'ArrowDown', '\\': 'Backslash', F1: 'F1', PageUp: 'PageUp', PageDown: 'PageDown' };
  return {
    primary: parts.includes('Ctrl'),
    shift: parts.includes('Shift'),
    alt: parts.includes('Alt'),
    code: map[code] ?? (/^\d$/.test(code) ? 'Digit' + code : 'Key' + code.toUpperCase()),
  };
}

export function matches(e: KeyboardEvent, b: Keybinding): boolean {
  if (e.code !== b.code) return false;
  if (!!b.primary !== primary(e) || !!b.shift !== e.shiftKey || !!b.alt !== e.altKey) return false;
  // The other modifier must not be down (Ctrl on macOS, Meta elsewhere).
  return isMac() ? !e.ctrlKey : !e.metaKey;
}

/** The first binding of an action, for labels ("Ctrl+Shift+P"). */
export function primaryKey(a: Action): string | undefined {
  return a.key?.split(' or ')[0];
}

const enabled = (a: Action) => !a.when || a.when();

export class CommandRegistry {
  #actions: Action[] = [];
  #bindings: { action: Action; key: Keybinding }[] = [];
  /** Which commands win over the shell (default: those marked inTerminal). */
  skipShell: (a: Action) => boolean = (a) => !!a.inTerminal;

  register(a: Action): void {
    this.#actions.push(a);
    if (a.key) for (const k of a.key.split(' or ')) this.#bindings.push({ action: a, key: parseKey(k) });
  }

  get(id: string): Action | undefined {
    return this.#actions.find((a) => a.id === id);
  }

  run(id: string): void | Promise<void> {
    return this.get(id)?.run();
  }

  /** The ids of the commands marked inTerminal: the default commandsToSkipShell. */
  defaultSkipShell(): string[] {
    return this.#actions.filter((a) => a.inTerminal && a.key).map((a) => a.id);
  }

  /** The actions that apply now, in registration order. */
  enabled(): Action[] {
    return this.#actions.filter(enabled);
  }

  /** Keys the workbench takes from a focused terminal (xterm must ignore them). */
  isWorkbenchKey(e: KeyboardEvent): boolean {
    return this.#bindings.some((b) => (this.skipShell(b.action) || isMac()) && matches(e, b.key) && (enabled(b.action) || !!b.action.refused));
  }

  /** Run bound actions from keydown on the document; none while `paused` (a picker or dialog is open). */
  listen(doc: Document, paused: () => boolean): void {
    doc.addEventListener('keydown', (e) => this.#onKey(e, paused), true);
  }

  #onKey(e: KeyboardEvent, paused: () => boolean): void {
    if (paused()) return;
    const target = e.target as HTMLElement | null;
    const inTerminal = !!target?.closest?.('.xterm');
    const inInput = !inTerminal && /^(INPUT|TEXTAREA)$/.test(target?.tagName ?? '');
    for (const b of this.#bindings) {
      if (!matches(e, b.key)) continue;
      if (inTerminal && !this.skipShell(b.action) && !isMac()) continue;
      if (inInput && b.action.id !== 'workbench.palette' && b.action.id !== 'terminal.new') continue;
      const refused = !enabled(b.action) && b.action.refused;
      if (!enabled(b.action) && !refused) continue;
      e.preventDefault();
      e.stopPropagation();
      if (refused) refused();
      else void b.action.run();
      return;
    }
  }
}
