// What the terminal emulator answers, and when it may.
//
// A program asks the terminal questions by printing them: device attributes
// (ESC[c), the cursor position (ESC[6n), colours (OSC 11;?), modes (DECRQM)…
// xterm.js answers through onData, which termhost sends to the shell as
// terminal/input. That is right for a live program, and wrong for history: a
// snapshot's content or a reconnect replay holds the questions of programs
// long gone, and their answers would be typed into whatever runs now (after
// vim, every page load added "2RR0;276;0c" to the prompt). Several tabs on
// one terminal must not all answer either.
//
// The parser hooks below see each question before xterm's own handler; they
// swallow it (return true, so xterm never answers) unless `mayAnswer()` says
// this tab answers live questions right now. OSC 52 (clipboard) is handled
// apart in clipboard.ts.

import type { IDisposable, IFunctionIdentifier } from '@xterm/xterm';

export type Params = (number | number[])[];

/** The part of xterm's IParser the hooks use (a fake in tests). */
export interface ParserLike {
  registerCsiHandler(id: IFunctionIdentifier, callback: (params: Params) => boolean | Promise<boolean>): IDisposable;
  registerDcsHandler(id: IFunctionIdentifier, callback: (data: string, params: Params) => boolean | Promise<boolean>): IDisposable;
  registerOscHandler(ident: number, callback: (data: string) => boolean | Promise<boolean>): IDisposable;
}

const first = (p: Params): number => {
  const v = p[0];
  return typeof v === 'number' ? v : (v?.[0] ?? 0);
};

const has = (p: Params, n: number): boolean => p.some((v) => (typeof v === 'number' ? v === n : v.includes(n)));

/** XTWINOPS requests that report (sizes, positions, titles); the others (22/23 title stack) do not. */
const windowReports = new Set([11, 13, 14, 15, 16, 18, 19, 20, 21]);

interface CsiQuery {
  id: IFunctionIdentifier;
  /** Whether these parameters ask for an answer (default: always). */
  asks?: (params: Params) => boolean;
}

/**
 * CSI questions. Some are not answered by xterm.js 6 (DA3, XTVERSION, the
 * kitty keyboard query); they are listed so an upgrade cannot start
 * answering history.
 */
export const csiQueries: readonly CsiQuery[] = [
  { id: { final: 'c' } }, // DA1
  { id: { prefix: '>', final: 'c' } }, // DA2
  { id: { prefix: '=', final: 'c' } }, // DA3
  { id: { final: 'n' } }, // DSR 5n, CPR 6n
  { id: { prefix: '?', final: 'n' } }, // DECXCPR ?6n and other DEC status reports
  { id: { intermediates: '$', final: 'p' } }, // DECRQM, ANSI modes
  { id: { prefix: '?', intermediates: '$', final: 'p' } }, // DECRQM, DEC private modes
  { id: { prefix: '>', final: 'q' } }, // XTVERSION
  { id: { prefix: '?', final: 'u' } }, // kitty keyboard flags
  { id: { final: 't' }, asks: (p) => windowReports.has(first(p)) }, // XTWINOPS reports (14t, 18t …)
];

/** DCS questions: DECRQSS (DCS $ q) and XTGETTCAP (DCS + q). */
export const dcsQueries: readonly IFunctionIdentifier[] = [
  { intermediates: '$', final: 'q' },
  { intermediates: '+', final: 'q' },
];

/** OSC colour numbers whose "?" asks for the colour (4 palette, 10–19 dynamic colours). */
export const oscColorQueries: readonly number[] = [4, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19];

/** Whether an OSC colour payload ("?", "1;?", "?;?") asks for a colour. */
export function isColorQuery(data: string): boolean {
  return data.split(';').includes('?');
}

/** Focus reporting (DECSET 1004): xterm reports the focus state at once when it is set. */
export function setsFocusReporting(params: Params): boolean {
  return has(params, 1004);
}

export interface ReplyGuard {
  /** Whether this tab answers the question being parsed now. */
  mayAnswer(): boolean;
  /**
   * DECSET 1004 is being applied while the tab may not answer: the mode is
   * kept (the tab reports focus changes its user makes later), but the
   * report xterm sends right away must be dropped.
   */
  focusReportSuppressed(): void;
}

/** Registers the hooks; dispose them with the terminal. */
export function guardReplies(parser: ParserLike, guard: ReplyGuard): IDisposable[] {
  const swallow = () => !guard.mayAnswer();
  const out: IDisposable[] = [];
  for (const q of csiQueries) {
    out.push(parser.registerCsiHandler(q.id, (params) => (q.asks ? q.asks(params) : true) && swallow()));
  }
  for (const id of dcsQueries) out.push(parser.registerDcsHandler(id, () => swallow()));
  for (const n of oscColorQueries) out.push(parser.registerOscHandler(n, (data) => isColorQuery(data) && swallow()));
  out.push(
    parser.registerCsiHandler({ prefix: '?', final: 'h' }, (params) => {
      if (setsFocusReporting(params) && swallow()) guard.focusReportSuppressed();
      return false; // the modes are still set by xterm
    }),
  );
  return out;
}

/** xterm's focus report (sent when DECSET 1004 is applied). */
export function isFocusReport(data: string): boolean {
  return data === '\x1b[I' || data === '\x1b[O';
}
