// In-app dialogs for links in terminal output (never window.confirm):
// an OSC 8 hyperlink shows its full target with Open / Copy / Cancel, and only
// http(s) targets can be opened; a file path offers "Copy path" (there is no
// editor to open it in).

import { h, overlayClosed } from './dom';

interface Choice {
  label: string;
  run?: () => void;
  disabled?: boolean;
}

/** Whether a link target may be opened in a new tab. */
export function isOpenableUrl(target: string): boolean {
  try {
    const u = new URL(target);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function confirmHyperlink(target: string, copy: (text: string) => void): void {
  const openable = isOpenableUrl(target);
  showChoices(
    openable ? 'Open this link from the terminal?' : 'Only http and https links can be opened.',
    target,
    [
      { label: 'Open', disabled: !openable, run: () => window.open(target, '_blank', 'noopener,noreferrer') },
      { label: 'Copy', run: () => copy(target) },
      { label: 'Cancel' },
    ],
    'link-dialog',
  );
}

export function showFilePath(path: string, copy: (text: string) => void): void {
  showChoices('File path', path, [{ label: 'Copy path', run: () => copy(path) }, { label: 'Cancel' }], 'file-link-dialog');
}

/** A modal with the target in full and a row of buttons; Escape cancels; focus goes back. */
function showChoices(message: string, target: string, choices: Choice[], id: string): void {
  const restore = document.activeElement as HTMLElement | null;
  const done = (c?: Choice) => {
    overlay.remove();
    document.removeEventListener('keydown', onKey, true);
    restore?.focus();
    overlayClosed();
    c?.run?.();
  };
  const buttons = choices.map((c, i) =>
    h(`button.button.${i === 0 ? 'primary' : 'secondary'}` as 'button', { type: 'button', disabled: c.disabled ? true : undefined, onclick: () => done(c) }, c.label),
  );
  const box = h(
    'div.dialog-box',
    { id, role: 'alertdialog', 'aria-modal': 'true', 'aria-label': message },
    h('div.dialog-message-row', null, h('div.dialog-message-container', null, h('div.dialog-message', null, message), h('pre.dialog-preview.link-target', null, target))),
    h('div.dialog-buttons', null, ...buttons),
  );
  const overlay = h('div.dialog-overlay', null, box);
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    e.stopPropagation();
    done();
  };
  document.addEventListener('keydown', onKey, true);
  document.body.append(overlay);
  (buttons.find((b) => !(b as HTMLButtonElement).disabled) ?? buttons.at(-1))?.focus();
}
