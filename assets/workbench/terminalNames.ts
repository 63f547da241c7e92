// Default terminal names, the way VS Code titles its terminal tabs: a chosen
// title wins (a rename, `termhost run --name`, a title a program set — any
// title that is not just the shell's name, so a rename survives a reload,
// where the state does not say it was one); else the program running now
// (shell integration's commandExecuted without a finish), else the cwd's
// last folder, else the title. Same names are numbered: "bash", "bash (2)".

import { cwdLabel } from './format';

export interface NameFacts {
  /** The terminal's title (the program's, the server's default, or a rename). */
  title: string;
  /** A client renamed the terminal (a client terminal/titleChanged): its title wins. */
  pinned?: boolean;
  /** The command line of the command running now, if any. */
  runningCommand?: string;
  /** The cwd shell integration reported (a file URI). */
  cwd?: string;
  /** Last resort: the terminal id. */
  id: string;
}

/** A terminal's name before duplicates are numbered. */
export function terminalName(f: NameFacts): string {
  if (f.title && (f.pinned || !isShellName(f.title))) return f.title;
  return programOf(f.runningCommand) || folderOf(f.cwd) || f.title || f.id;
}

/** The names the server gives a terminal by default: its shell's. */
const shellNames = new Set(['bash', 'zsh', 'fish', 'sh', 'dash', 'ksh', 'mksh', 'tcsh', 'csh', 'nu', 'pwsh', 'elvish', 'xonsh']);

function isShellName(title: string): boolean {
  return shellNames.has(title.trim());
}

/** "bash", "bash (2)", "bash (3)" in list order; distinct names are kept. */
export function numberDuplicates(names: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return names.map((n) => {
    const count = (seen.get(n) ?? 0) + 1;
    seen.set(n, count);
    return count === 1 ? n : `${n} (${count})`;
  });
}

/** The program a command line runs: its first word past `VAR=value` assignments, without its directory. */
export function programOf(commandLine: string | undefined): string {
  const words = (commandLine ?? '').trim().split(/\s+/);
  const word = words.find((w) => w && !/^[A-Za-z_][A-Za-z0-9_]*=/.test(w)) ?? '';
  return word.replace(/^.*\/(?=.)/, '');
}

/** The last folder of a cwd URI ("/" for the root). */
export function folderOf(cwd: string | undefined): string {
  const path = cwdLabel(cwd);
  if (!path) return '';
  const trimmed = path.replace(/\/+$/, '');
  return trimmed ? trimmed.slice(trimmed.lastIndexOf('/') + 1) : '/';
}
