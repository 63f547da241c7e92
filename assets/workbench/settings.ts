// User settings kept in this browser's localStorage.

const osc52WriteKey = 'termhost.osc52Write';

/** "Allow programs to write the clipboard (OSC 52)": off unless the user turned it on. */
export function clipboardWriteAllowed(): boolean {
  try {
    return localStorage.getItem(osc52WriteKey) === 'on';
  } catch {
    return false; // storage blocked: keep the safe default
  }
}

export function setClipboardWriteAllowed(on: boolean): void {
  if (on) localStorage.setItem(osc52WriteKey, 'on');
  else localStorage.removeItem(osc52WriteKey);
}

const skipShellKey = 'termhost.commandsToSkipShell';
const startupKey = 'termhost.startupTerminal';

/**
 * The commands whose keys the workbench takes from a focused terminal
 * (VS Code's terminal.integrated.commandsToSkipShell): the defaults, plus
 * each "id" of the user's list, minus each "-id".
 */
export function commandsToSkipShell(defaults: readonly string[], user: readonly string[]): Set<string> {
  const out = new Set(defaults);
  for (const raw of user) {
    const id = raw.trim();
    if (id.startsWith('-')) out.delete(id.slice(1));
    else if (id) out.add(id);
  }
  return out;
}

/** The user's commandsToSkipShell list (["-terminal.open", "view.toggleSidebar"]), [] if unset. */
export function skipShellSetting(): string[] {
  try {
    const v = JSON.parse(localStorage.getItem(skipShellKey) ?? '[]') as unknown;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

export function setSkipShellSetting(ids: string[]): void {
  if (ids.length) localStorage.setItem(skipShellKey, JSON.stringify(ids));
  else localStorage.removeItem(skipShellKey);
}

/** Open a terminal, focused, when the owner's page loads and none is running (default on). */
export function startupTerminal(): boolean {
  try {
    return localStorage.getItem(startupKey) !== 'off';
  } catch {
    return true;
  }
}

export function setStartupTerminal(on: boolean): void {
  if (on) localStorage.removeItem(startupKey);
  else localStorage.setItem(startupKey, 'off');
}
