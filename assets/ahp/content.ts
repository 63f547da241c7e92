// A terminal's bounded content for the browser's mirror: the content half of
// the terminal reducer, applied in place and trimmed as the server trims its
// scrollback (ahp/content: AHP lets each side trim on its own). Appending costs
// O(len(data)); trimming drops parts and cuts the head part about once per
// fifth of the budget, so it costs O(1) per byte on average, whatever the
// budget and however many commands are kept.

import type { TerminalCommandPart, TerminalContentPart } from './types';

/** The server's default scrollback (`--scrollback`): 1 MiB of UTF-8 text. */
export const DEFAULT_CONTENT_BUDGET = 1 << 20;

/** How far a cut looks ahead for a newline, and back for an escape sequence (as the server). */
const NEWLINE_AHEAD = 4096;
const ESCAPE_BEHIND = 256;

export class ContentStore {
  /** Bytes of UTF-8 text kept at most (0 or less: unbounded). */
  readonly budget: number;
  /** The kept parts, oldest first. The array and its parts change in place. */
  readonly parts: TerminalContentPart[] = [];
  /** Bytes of UTF-8 text held. */
  size = 0;
  /** Kept command parts by commandId, so that commandFinished costs O(1). */
  #commands = new Map<string, TerminalCommandPart[]>();
  /**
   * The _meta of a kept command's terminal/commandExecuted, by commandId:
   * beside the parts, never in them (AHP's reducer makes a part without
   * it), as long as the command is kept.
   */
  #meta = new Map<string, Record<string, unknown>>();

  /** A store holding copies of `parts` (a snapshot's content), trimmed to budget. */
  constructor(parts: readonly TerminalContentPart[] = [], budget = DEFAULT_CONTENT_BUDGET) {
    this.budget = budget;
    for (const p of parts) {
      const copy = { ...p };
      this.parts.push(copy);
      if (copy.type === 'command') this.#index(copy);
      this.size += utf8Length(partText(copy));
    }
    this.#trim();
  }

  /** terminal/data: into an incomplete command's output, else the tail unclassified part, else a new one. */
  appendData(data: string): void {
    const tail = this.parts[this.parts.length - 1];
    if (tail?.type === 'command' && !tail.isComplete) tail.output += data;
    else if (tail?.type === 'unclassified') tail.value += data;
    else this.parts.push({ type: 'unclassified', value: data });
    this.size += utf8Length(data);
    this.#trim();
  }

  commandExecuted(p: Omit<TerminalCommandPart, 'type' | 'output' | 'isComplete'> & { _meta?: Record<string, unknown> }): void {
    const part: TerminalCommandPart = {
      type: 'command',
      commandId: p.commandId,
      commandLine: p.commandLine,
      output: '',
      timestamp: p.timestamp,
      isComplete: false,
    };
    this.parts.push(part);
    this.#index(part);
    if (p._meta) this.#meta.set(p.commandId, p._meta);
  }

  /** The _meta of a kept command's terminal/commandExecuted (termhost's agent mark). */
  commandMeta(commandId: string): Record<string, unknown> | undefined {
    return this.#meta.get(commandId);
  }

  /** Gives kept commands the _meta a snapshot carries for them beside its state (extMeta.commandMeta). */
  setCommandMeta(meta: Record<string, Record<string, unknown>> | undefined): void {
    for (const [id, m] of Object.entries(meta ?? {})) {
      if (this.#commands.has(id) && m && typeof m === 'object') this.#meta.set(id, m);
    }
  }

  /** Marks the kept commands with this id complete; false when none is kept (nothing changes). */
  commandFinished(commandId: string, exitCode?: number | null, durationMs?: number | null): boolean {
    const parts = this.#commands.get(commandId);
    if (!parts) return false;
    for (const p of parts) {
      p.isComplete = true;
      delete p.exitCode;
      delete p.durationMs;
      // `!= null`: a server may send null for "absent".
      if (exitCode != null) p.exitCode = exitCode;
      if (durationMs != null) p.durationMs = durationMs;
    }
    return true;
  }

  clear(): void {
    this.parts.length = 0;
    this.#commands.clear();
    this.#meta.clear();
    this.size = 0;
  }

  #index(p: TerminalCommandPart): void {
    const same = this.#commands.get(p.commandId);
    if (same) same.push(p);
    else this.#commands.set(p.commandId, [p]);
  }

  #unindex(p: TerminalCommandPart): void {
    const same = this.#commands.get(p.commandId);
    const rest = same?.filter((x) => x !== p) ?? [];
    if (rest.length) this.#commands.set(p.commandId, rest);
    else {
      this.#commands.delete(p.commandId);
      this.#meta.delete(p.commandId);
    }
  }

  /**
   * Keeps the text within budget, as the server does: drop whole parts from
   * the front while more than one remains, then cut the head part down to
   * about 80 % of the budget at a safe place. The parts dropped go in one
   * splice, so the array is shifted once per trim, not once per part.
   */
  #trim(): void {
    if (this.budget <= 0 || this.size <= this.budget) return;
    let drop = 0;
    while (drop < this.parts.length - 1 && this.size > this.budget) {
      const p = this.parts[drop++];
      this.size -= utf8Length(partText(p));
      if (p.type === 'command') this.#unindex(p);
    }
    if (drop > 0) this.parts.splice(0, drop);
    if (this.size <= this.budget) return;
    const head = this.parts[0];
    const text = partText(head);
    const at = safeCut(text, charsForBytes(text, this.size - Math.floor((this.budget * 8) / 10)));
    this.size -= utf8Length(text, 0, at);
    setPartText(head, text.slice(at));
  }
}

function partText(p: TerminalContentPart): string {
  return p.type === 'command' ? p.output : p.value;
}

function setPartText(p: TerminalContentPart, s: string): void {
  if (p.type === 'command') p.output = s;
  else p.value = s;
}

/** Bytes of s[from:to] in UTF-8 (a lone surrogate counts as U+FFFD would: 3). */
export function utf8Length(s: string, from = 0, to = s.length): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
  }
  return n;
}

/** The smallest index of s whose prefix holds at least `bytes` bytes of UTF-8. */
function charsForBytes(s: string, bytes: number): number {
  let n = 0;
  let i = 0;
  while (i < s.length && n < bytes) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && isLowSurrogate(s.charCodeAt(i + 1))) {
      n += 4;
      i++;
    } else n += 3;
    i++;
  }
  return i;
}

function isLowSurrogate(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * Moves a cut forward to just after a newline within 4 Ki characters, else
 * to a place outside any escape sequence and surrogate pair (the server's
 * safeCut, in UTF-16 code units).
 */
export function safeCut(s: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= s.length) return s.length;
  const nl = s.slice(at, at + NEWLINE_AHEAD).indexOf('\n');
  if (nl >= 0) return at + nl + 1;
  const from = Math.max(0, at - ESCAPE_BEHIND);
  const esc = s.slice(from, at).lastIndexOf('\x1b');
  if (esc >= 0) at = Math.max(at, escapeEnd(s, from + esc));
  if (at < s.length && isLowSurrogate(s.charCodeAt(at))) at++;
  return at;
}

/** The index just past the escape sequence starting at s[i] (ESC), or s.length if it does not end. */
function escapeEnd(s: string, i: number): number {
  let j = i + 1;
  if (j >= s.length) return s.length;
  switch (s[j]) {
    case '[': // CSI: parameters and intermediates, then a final byte 0x40–0x7E
      for (j++; j < s.length; j++) {
        const c = s.charCodeAt(j);
        if (c >= 0x40 && c <= 0x7e) return j + 1;
      }
      return s.length;
    case ']':
    case 'P':
    case '_':
    case '^':
    case 'X': // string sequences end with BEL or ST
      for (j++; j < s.length; j++) {
        if (s[j] === '\x07') return j + 1;
        if (s[j] === '\x1b' && s[j + 1] === '\\') return j + 2;
      }
      return s.length;
    default:
      return j + 1;
  }
}
