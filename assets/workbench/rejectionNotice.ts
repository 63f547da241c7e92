// The notice for an action the server refused (a rejection envelope):
// its reason, once per burst, since a viewer's keystrokes would otherwise
// stack up identical toasts. The server is the authority on roles.

const actionNames: Record<string, string> = {
  'terminal/claimed': 'Take Control',
  'terminal/resized': 'Resize',
  'terminal/titleChanged': 'Rename',
  'terminal/input': 'Input',
  'terminal/cleared': 'Clear',
};

/** The same text is shown again only after this long. */
const BURST_MS = 3000;

export class RejectionNotice {
  #show: (text: string) => void;
  #now: () => number;
  #last = { text: '', at: 0 };

  constructor(show: (text: string) => void, now: () => number = Date.now) {
    this.#show = show;
    this.#now = now;
  }

  show(actionType: string, reason: string): void {
    const text = `${actionNames[actionType] ?? actionType} was refused by the server: ${reason}.`;
    const now = this.#now();
    if (text === this.#last.text && now - this.#last.at < BURST_MS) return;
    this.#last = { text, at: now };
    this.#show(text);
  }
}
