// What one tab may send for its terminal: keystrokes only while it can type,
// answers to a program's questions (replies.ts) and OSC 52 clipboard writes
// only for live output in the tab its user works in, and no focus report
// that a suppressed focus change would leak.

import type { Terminal } from '@xterm/xterm';
import type { WriteQueue } from '../writequeue';
import { isFocusReport } from '../replies';
import { clipboardWriteAllowed } from '../settings';

export class InputGate {
  #term: Terminal;
  #queue: WriteQueue;
  #canType: () => boolean;
  #send: (data: string) => void;
  /** xterm is about to send a focus report that this tab may not send. */
  #dropFocusReport = false;

  constructor(term: Terminal, queue: WriteQueue, canType: () => boolean, send: (data: string) => void) {
    this.#term = term;
    this.#queue = queue;
    this.#canType = canType;
    this.#send = send;
  }

  /**
   * Whether this tab answers the question xterm is parsing now (device
   * attributes, cursor position, colours …; see replies.ts). Never for
   * history (a snapshot or a reconnect replay: its questions are from
   * programs long gone), never on a page that cannot type (viewer, offline,
   * exited), and among several tabs on one terminal only the one whose
   * terminal has the keyboard focus in a focused window: at most one tab
   * answers, and it is the one its user works in. A program that asks while
   * no tab has focus gets no answer; programs wait a moment and go on.
   */
  mayAnswer(): boolean {
    return !this.#queue.parsingReplay && this.#canType() && this.#hasFocus();
  }

  /** OSC 52 writes: only live output, on a page that can type, allowed in the settings, window focused. */
  mayWriteClipboard(): boolean {
    return !this.#queue.parsingReplay && this.#canType() && clipboardWriteAllowed() && document.hasFocus();
  }

  focusReportSuppressed(): void {
    // xterm reports synchronously, right after this hook returns.
    this.#dropFocusReport = true;
    queueMicrotask(() => (this.#dropFocusReport = false));
  }

  /** Keystrokes and binary input from xterm. */
  input(data: string): void {
    if (this.#dropFocusReport && isFocusReport(data)) {
      this.#dropFocusReport = false;
      return;
    }
    if (!this.#canType()) return;
    this.#send(data);
  }

  #hasFocus(): boolean {
    return document.hasFocus() && !!this.#term.textarea && document.activeElement === this.#term.textarea;
  }
}
