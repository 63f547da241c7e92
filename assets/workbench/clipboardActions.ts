// Clipboard actions of the workbench: copy (with a fallback for pages the
// Clipboard API refuses), a program's OSC 52 copy, copy selection, paste, and
// the confirmation before pasting several lines.

import { h } from './dom';
import { icons } from './icons';
import { confirmDialog, type Notify } from './quickinput';
import type { Terminal } from '@xterm/xterm';

export async function copyText(text: string, notify: Notify): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const ta = h('textarea', { style: 'position:fixed;left:-9999px;top:0' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    const ok = document.execCommand('copy');
    ta.remove();
    if (!ok) {
      notify('error', 'Could not copy to the clipboard.');
      return;
    }
  }
  notify('info', text.length > 60 ? `Copied ${text.length} characters.` : `Copied “${text.replace(/\s+/g, ' ').trim()}”.`);
}

/** A program's OSC 52 write, already allowed by the settings and focus. */
export function programCopy(text: string, notify: Notify): void {
  // No execCommand fallback: it would move the focus out of the terminal.
  navigator.clipboard.writeText(text).then(
    () => notify('info', `A program copied ${text.length} characters to the clipboard (OSC 52).`),
    (e) => console.info('termhost: OSC 52 clipboard write refused by the browser', e),
  );
}

/**
 * What copy and paste need of a terminal view. Written here rather than
 * importing TerminalView, which pastes through this module (no import cycle).
 */
export interface ClipboardTarget {
  readonly term: Pick<Terminal, 'getSelection' | 'focus'>;
  paste(text: string): Promise<void>;
}

export async function copySelection(v: ClipboardTarget | undefined, notify: Notify): Promise<void> {
  const sel = v?.term.getSelection();
  if (!sel) return;
  await copyText(sel, notify);
  v!.term.focus();
}

export async function pasteClipboard(v: ClipboardTarget | undefined, notify: Notify): Promise<void> {
  if (!v) return;
  let text: string;
  try {
    text = await navigator.clipboard.readText();
  } catch {
    notify('warning', 'The browser did not allow reading the clipboard. Use the browser’s paste (Ctrl+V / right click) instead.');
    return;
  }
  if (text) await v.paste(text);
}

export function confirmPaste(text: string): Promise<boolean> {
  const lines = text.replace(/\r?\n$/, '').split(/\r?\n/);
  const preview = lines.slice(0, 8).join('\n') + (lines.length > 8 ? `\n… ${lines.length - 8} more lines` : '');
  return confirmDialog({
    message: `Are you sure you want to paste ${lines.length} lines of text into the terminal?`,
    detail: 'Each line may run as a command.',
    preview,
    primary: 'Paste',
    icon: icons.warning,
    severity: 'warning',
  });
}
