// OSC 52: programs asking to read or write the clipboard.
//
// @xterm/addon-clipboard answers every read (ESC]52;c;?) with the clipboard's
// contents as input, visible to every subscriber, and even with a provider
// that returns nothing it still sends an (empty) answer. termhost never
// answers reads, and writes only when the user allowed it in the settings
// and the tab has focus; so it handles OSC 52 itself.

import type { IDisposable } from '@xterm/xterm';
import type { ParserLike } from './replies';

export type Osc52 = { kind: 'read' } | { kind: 'write'; text: string } | { kind: 'ignore' };

/** Largest text a program may put on the clipboard (decoded). */
export const maxClipboardText = 1 << 20;

/** Interprets an OSC 52 payload "Pc;Pd" (selection; base64 data or "?"). */
export function parseOsc52(data: string): Osc52 {
  const i = data.indexOf(';');
  if (i < 0) return { kind: 'ignore' };
  const sel = data.slice(0, i);
  const pd = data.slice(i + 1);
  if (pd === '?') return { kind: 'read' };
  // Only the clipboard ("c", or empty meaning the default selection); the
  // primary and other selections do not exist in a browser.
  if (sel !== '' && !sel.includes('c')) return { kind: 'ignore' };
  const text = decodeBase64Utf8(pd);
  // An invalid or empty payload would clear the clipboard in xterm: ignore it.
  if (!text || text.length > maxClipboardText) return { kind: 'ignore' };
  return { kind: 'write', text };
}

/** Strict base64 (padded or not) of UTF-8 text; undefined if it is not. */
export function decodeBase64Utf8(b64: string): string | undefined {
  if (b64.length % 4 === 1 || !/^[A-Za-z0-9+/]*={0,2}$/.test(b64)) return undefined;
  try {
    const bin = atob(b64);
    const bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

export interface ClipboardPolicy {
  /** Whether a write may happen now (setting on, tab focused, live output). */
  mayWrite(): boolean;
  write(text: string): void;
}

/** Handles OSC 52 on a terminal: never answers, writes only as the policy allows. */
export function handleOsc52(parser: ParserLike, policy: ClipboardPolicy): IDisposable {
  return parser.registerOscHandler(52, (data) => {
    const r = parseOsc52(data);
    if (r.kind === 'write' && policy.mayWrite()) policy.write(r.text);
    return true; // handled: nothing else (no addon, no default) sees it
  });
}
