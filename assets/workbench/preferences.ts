// Preference and help actions: renderer, OSC 52 clipboard writes,
// background notifications, About.

import type { AhpClient } from '../ahp/client';
import { icons } from './icons';
import { confirmDialog, type Notify } from './quickinput';
import { clipboardWriteAllowed, setClipboardWriteAllowed, setStartupTerminal, startupTerminal } from './settings';
import { roleLabels, type Role } from './access';
import type { BackgroundNotifier } from './buildstatus';


/** The renderer of new terminals: WebGL (default) or DOM, after a reload. */
export function toggleRenderer(notify: Notify): void {
  const dom = localStorage.getItem('termhost.renderer') === 'dom';
  if (dom) localStorage.removeItem('termhost.renderer');
  else localStorage.setItem('termhost.renderer', 'dom');
  notify('info', `Terminals will use the ${dom ? 'WebGL' : 'DOM'} renderer after a reload.`, [{ label: 'Reload Now', run: () => location.reload() }]);
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

export function showAbout(version: string, client: AhpClient, role: Role): void {
  void confirmDialog({
    message: 'termhost',
    detail: `Version: ${version || 'dev'}\nProtocol: AHP ${client.protocolVersion || '—'}\nServer: ${client.serverInfo ? `${client.serverInfo.name} ${client.serverInfo.version ?? ''}` : '—'}\nClient id: ${client.clientId}\nRole: ${roleLabels[role]}`,
    primary: 'OK',
    icon: icons.info,
  });
}
