// A terminal's name: the server's title, the same in every client — tab,
// side bar (phone included), rename box, toasts, `termhost ls` — whether its
// view is open or not. The server's title is a rename,
// `termhost run --name`, a title the program set, else the shell's name.
// Once the server no longer lists a terminal (closed, a restart), the name
// it had last is kept for messages about it; never its id.

import { cleanLabel } from './label';

export interface NameFacts {
  /** The terminal's title on the server (its state's, else the catalogue's). */
  title?: string;
  /** The title it had when the server last listed it. */
  lastKnown?: string;
}

/** What a terminal is called when nothing about it is known any more. */
export const unknownName = 'Terminal';

/** A terminal's name for people. */
export function terminalName(f: NameFacts): string {
  return cleanLabel(f.title ?? '') || cleanLabel(f.lastKnown ?? '') || unknownName;
}

/** Remembers each terminal's last title, so a message about a closed one still names it. */
export class NameMemory {
  #last = new Map<string, string>();

  /** Notes the titles of a catalogue (or a terminal state). */
  note(uri: string, title: string | undefined): void {
    if (title?.trim()) this.#last.set(uri, title);
  }

  name(uri: string, title: string | undefined): string {
    this.note(uri, title);
    return terminalName({ title, lastKnown: this.#last.get(uri) });
  }
}
