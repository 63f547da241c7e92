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
