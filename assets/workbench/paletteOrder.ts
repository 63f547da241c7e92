// The order of the command palette, as VS Code has it: the commands you ran
// recently first (newest first), then the others alphabetically; commands
// that lose something (Sign Out, Kill) always last and never in the recent
// list, so Ctrl+Shift+P then Enter can never run one. While you type, the
// better matches come first (a match at the start of a word before one
// inside a word, before scattered words), destructive ones still last.

import type { Action } from './commands';
import { fuzzyMatch } from './quickinput';

const RECENT_KEY = 'termhost.palette.recent';
const RECENT_MAX = 20;

export const RECENT_GROUP = 'recently used';
export const OTHER_GROUP = 'other commands';

export interface RecentStore {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** The ids of the commands run from the palette, newest first. */
export function recentCommands(store: RecentStore | undefined = safeStorage()): string[] {
  try {
    const v: unknown = JSON.parse(store?.getItem(RECENT_KEY) ?? '[]');
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}

/** Remember that `a` ran from the palette (not a destructive command). */
export function noteCommandRun(a: Action, store: RecentStore | undefined = safeStorage()): void {
  if (a.destructive || !store) return;
  const ids = [a.id, ...recentCommands(store).filter((id) => id !== a.id)].slice(0, RECENT_MAX);
  try {
    store.setItem(RECENT_KEY, JSON.stringify(ids));
  } catch {
    // Storage full or denied: the order is only a convenience.
  }
}

function safeStorage(): RecentStore | undefined {
  try {
    return globalThis.localStorage;
  } catch {
    return undefined;
  }
}

export const paletteLabel = (a: Action) => `${a.category}: ${a.title}`;

/** The palette's list with no query: recently used, the others A–Z, destructive last. */
export function orderCommands(actions: Action[], recent: string[]): { action: Action; group: string }[] {
  const byId = new Map(actions.map((a) => [a.id, a]));
  const first = recent.map((id) => byId.get(id)).filter((a): a is Action => !!a && !a.destructive);
  const rest = actions
    .filter((a) => !first.includes(a))
    .sort((x, y) => Number(!!x.destructive) - Number(!!y.destructive) || paletteLabel(x).localeCompare(paletteLabel(y)));
  return [...first.map((action) => ({ action, group: RECENT_GROUP })), ...rest.map((action) => ({ action, group: first.length ? OTHER_GROUP : '' }))];
}

/**
 * How well `query` matches `label` (lower is better; undefined: no match):
 * 0 at the start of a word, 1 inside a word, 2 as words in order.
 */
export function matchRank(query: string, label: string): number | undefined {
  const ranges = fuzzyMatch(query, label);
  if (!ranges) return undefined;
  if (ranges.length !== 1) return 2;
  const at = ranges[0]![0];
  return at === 0 || /[\s:(…-]/.test(label[at - 1]!) ? 0 : 1;
}
