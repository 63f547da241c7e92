// Preference and help actions: screen reader mode, OSC 52 clipboard writes,
// background notifications, About. (The terminal settings have their editor,
// settingsEditor.ts.)

import type { MultiHostClient } from '../ahp/multihost';
import { icons } from './icons';
import { confirmDialog, type Notify } from './quickinput';
import { h } from './dom';
import { clipboardWriteAllowed, setClipboardWriteAllowed, setStartupTerminal, setTabFocusMode, startupTerminal, tabMovesFocus, terminalSettings, updateTerminalSettings } from './settings';
import { roleLabels, type Role } from './access';
import type { BackgroundNotifier } from './buildstatus';

let liveRegion: HTMLElement | undefined;

/** Say `text` to a screen reader (a polite live region, visually hidden). */
export function announce(text: string): void {
  if (!liveRegion?.isConnected) {
    liveRegion = h('div.visually-hidden#a11y-announcer', { role: 'status', 'aria-live': 'polite', 'aria-atomic': 'true' });
    document.body.append(liveRegion);
  }
  // A changed text is what a live region reads: clear first so the same message is said again.
  liveRegion.textContent = '';
  const region = liveRegion;
  requestAnimationFrame(() => (region.textContent = text));
}

/** xterm's screen reader mode (an accessible buffer of the rows) in every terminal, announced. */
export function setScreenReaderMode(on: boolean): void {
  updateTerminalSettings({ screenReaderMode: on });
  announce(on ? 'Screen reader optimized mode enabled.' : 'Screen reader optimized mode disabled.');
}

export function toggleScreenReaderMode(): void {
  setScreenReaderMode(!terminalSettings().screenReaderMode);
}

/** Tab moves the focus (leaves a terminal) or reaches the shell; announced. */
export function toggleTabFocusMode(): void {
  const on = !tabMovesFocus();
  setTabFocusMode(on);
  announce(on ? 'Pressing Tab will now move focus to the next focusable element.' : 'Pressing Tab will now insert the tab character.');
}

/** Allow programs to write the clipboard (OSC 52); off by default, kept in this browser. */
export function toggleClipboardWrite(notify: Notify): void {
  const on = !clipboardWriteAllowed();
  setClipboardWriteAllowed(on);
  notify(
    'info',
    on ? 'Programs can now write the clipboard (OSC 52) while this tab has focus. They can never read it.' : 'Programs can no longer write the clipboard (OSC 52).',
  );
}

/** Open a terminal when the owner's page loads with none running. */
export function toggleStartupTerminal(notify: Notify): void {
  const on = !startupTerminal();
  setStartupTerminal(on);
  notify('info', on ? 'A terminal opens when you load the page and none is running.' : 'No terminal opens by itself when the page loads.');
}

/** Notifications when commands finish in a background tab (asks for permission). */
export async function toggleNotifications(notifier: BackgroundNotifier, notify: Notify): Promise<void> {
  if (notifier.enabled) {
    notifier.disable();
    notify('info', 'Background notifications are off.');
    return;
  }
  const p = await notifier.enable();
  if (p === 'granted') notify('info', 'You will be notified when a command or terminal finishes while this tab is in the background.');
  else if (p === 'unsupported') notify('warning', 'This browser does not support notifications.');
  else notify('warning', 'Notification permission was not granted.');
}

export function showAbout(version: string, client: MultiHostClient, role: Role): void {
  void confirmDialog({
    message: 'termhost',
    detail: `Version: ${version || 'dev'}\nProtocol: AHP ${client.protocolVersion || '—'}\nServer: ${client.serverInfo ? `${client.serverInfo.name} ${client.serverInfo.version ?? ''}` : '—'}\nClient id: ${client.clientId}\nRole: ${roleLabels[role]}`,
    primary: 'OK',
    icon: icons.info,
  });
}
