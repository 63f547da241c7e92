// Every command of the workbench, with its palette title and key binding
// (VS Code's contributions of commands and keybindings). Registering them is
// all this file does: the work is done by the parts they name.

import type { MultiHostClient } from '../ahp/multihost';
import type { Role } from './access';
import type { Themes } from './theme';
import type { Action, CommandRegistry } from './commands';
import type { Palette } from './palette';
import type { ActivityBar } from './activityBar';
import type { BackgroundNotifier } from './buildstatus';
import type { Sidebar } from './sidebar';
import type { SidebarLayout } from './sidebarLayout';
import type { StatusBar } from './statusBar';
import type { TerminalView } from './terminal/terminalView';
import { clipboardWriteAllowed, startupTerminal, tabMovesFocus, terminalSettings } from './settings';
import { linksWorkForOthers } from './access';
import { copySelection, copyText, pasteClipboard } from './clipboardActions';
import type { Notify } from './quickinput';
import { showAbout, toggleClipboardWrite, toggleNotifications, toggleScreenReaderMode, toggleStartupTerminal, toggleTabFocusMode } from './preferences';
import type { SettingId } from './settingsEditor';
import { confirmSignOut } from './signOut';
import type { TerminalInfo } from '../ahp/types';
import { download, recordingStateOf, setRecording } from './recording';

/** What the commands act on: the workbench and its parts. */
export interface ActionTarget {
  readonly client: MultiHostClient;
  readonly role: Role;
  readonly config: { version: string; basePath: string };
  readonly themes: Themes;
  readonly palette: Palette;
  readonly sidebar: Sidebar;
  readonly sidebarLayout: SidebarLayout;
  readonly activityBar: ActivityBar;
  readonly notifier: BackgroundNotifier;
  readonly statusBar: StatusBar;
  readonly activeView: TerminalView | undefined;
  notify: Notify;
  newTerminal(toSide?: boolean): Promise<void>;
  /** A terminal's recording or output file, on its own host. */
  fileUrl(uri: string, file: 'recording.cast' | 'output.txt'): string;
  openTerminal(uri: string, toSide?: boolean): void;
  focusNextTab(dir: 1 | -1): void;
  rename(uri: string): Promise<void>;
  kill(uri: string): Promise<void>;
  share(uri: string): void;
  closeTab(view: TerminalView): void;
  replay(view: TerminalView): void;
  takeControl(view: TerminalView): void;
  /** Hand Back to Agent; undefined when there is nothing to hand back. */
  handBackAction(view: TerminalView): { name: string; run: () => void } | undefined;
  terminalLink(view: TerminalView): string;
  /** The active terminal has an approval this page may answer (approvals.ts). */
  approvalWaits(view: TerminalView): boolean;
  configureSkipShell(): Promise<void>;
  openSettings(focus?: SettingId): Promise<void>;
  readonly catalogue: TerminalInfo[];
}

export function registerWorkbenchActions(r: CommandRegistry, wb: ActionTarget): void {
  // Drivers may type, resize, claim, rename and clear; only the owner
  // creates, kills and shares terminals. The server enforces the same.
  const canEdit = () => wb.role !== 'viewer';
  const isOwner = () => wb.role === 'owner';
  const hasView = () => !!wb.activeView;
  const view = () => wb.activeView!;
  const add = (a: Action) => r.register(a);
  add({ id: 'workbench.palette', category: 'View', title: 'Show All Commands', key: 'Ctrl+Shift+P or F1', inTerminal: true, run: () => wb.palette.showCommands() });
  // A driver's or viewer's key for a new terminal says why nothing opens.
  const ownerOpens = () => wb.notify('info', `Only the owner can open terminals; you are a ${wb.role} here.`);
  add({ id: 'terminal.new', category: 'Terminal', title: 'Create New Terminal', key: 'Ctrl+Shift+`', inTerminal: true, when: isOwner, refused: ownerOpens, run: () => wb.newTerminal() });
  add({ id: 'terminal.split', category: 'Terminal', title: 'Split Terminal (New Terminal to the Right)', key: 'Ctrl+Shift+5', inTerminal: true, when: isOwner, refused: ownerOpens, run: () => wb.newTerminal(true) });
  add({ id: 'terminal.open', category: 'Terminal', title: 'Open Terminal…', key: 'Ctrl+P', inTerminal: true, run: () => wb.palette.showTerminals() });
  add({ id: 'terminal.moveRight', category: 'View', title: 'Move Terminal into Group to the Right', when: hasView, run: () => void wb.openTerminal(view().uri, true) });
  add({ id: 'terminal.nextTab', category: 'View', title: 'Open Next Terminal Tab', key: 'Alt+PageDown', inTerminal: true, when: hasView, run: () => wb.focusNextTab(1) });
  add({ id: 'terminal.prevTab', category: 'View', title: 'Open Previous Terminal Tab', key: 'Alt+PageUp', inTerminal: true, when: hasView, run: () => wb.focusNextTab(-1) });
  add({ id: 'terminal.rename', category: 'Terminal', title: 'Rename…', when: () => hasView() && canEdit(), run: () => wb.rename(view().uri) });
  add({ id: 'terminal.kill', category: 'Terminal', title: 'Kill the Active Terminal', destructive: true, when: () => hasView() && isOwner(), run: () => wb.kill(view().uri) });
  add({ id: 'terminal.share', category: 'Terminal', title: 'Share Terminal…', when: () => hasView() && isOwner(), run: () => wb.share(view().uri) });
  // Recordings (recording.ts): the owner toggles, whoever sees the terminal downloads.
  const recording = () => recordingStateOf(wb.catalogue.find((t) => t.resource === view().uri));
  const toggleRecording = (on: boolean) => setRecording(wb.client, view().uri, on).catch((e: Error) => wb.notify('error', `Could not ${on ? 'start' : 'stop'} recording: ${e.message}`));
  add({ id: 'terminal.startRecording', category: 'Terminal', title: 'Start Recording', when: () => hasView() && isOwner() && recording() !== 'recording' && recording() !== 'stopped' && !view().exited, run: () => toggleRecording(true) });
  add({ id: 'terminal.stopRecording', category: 'Terminal', title: 'Stop Recording', when: () => hasView() && isOwner() && recording() === 'recording', run: () => toggleRecording(false) });
  add({ id: 'terminal.downloadRecording', category: 'Terminal', title: 'Download Recording (asciicast)', when: () => hasView() && recording() !== undefined, run: () => download(wb.fileUrl(view().uri, 'recording.cast')) });
  add({ id: 'terminal.replay', category: 'Terminal', title: 'Replay Recording', when: () => hasView() && recording() !== undefined, run: () => wb.replay(view()) });
  add({ id: 'terminal.downloadOutput', category: 'Terminal', title: 'Download Output as Text', when: hasView, run: () => download(wb.fileUrl(view().uri, 'output.txt')) });
  add({ id: 'terminal.close', category: 'View', title: 'Close Terminal Tab (Keep Running)', when: hasView, run: () => wb.closeTab(view()) });
  add({ id: 'terminal.takeControl', category: 'Terminal', title: 'Take Control (Type and Size from This Window)', when: () => hasView() && canEdit() && !view().isHolder, run: () => wb.takeControl(view()) });
  // Only while an approval waits: else the key is the shell's.
  add({ id: 'terminal.goToApproval', category: 'Terminal', title: 'Go to Pending Approval', key: 'Ctrl+Shift+A', inTerminal: true, when: () => hasView() && wb.approvalWaits(view()), run: () => void view().focusApproval() });
  add({ id: 'terminal.handBack', category: 'Terminal', title: 'Hand Back to Agent', when: () => hasView() && !!wb.handBackAction(view()), run: () => wb.handBackAction(view())?.run() });
  // Not for a share link's viewer or driver: the recipient could not open it (access.ts).
  add({ id: 'terminal.copyLink', category: 'Terminal', title: 'Copy Link to Terminal', when: () => hasView() && linksWorkForOthers(wb.role), run: () => copyText(wb.terminalLink(view()), wb.notify) });
  add({ id: 'terminal.clear', category: 'Terminal', title: 'Clear', when: () => hasView() && canEdit(), run: () => void wb.client.dispatch(view().uri, { type: 'terminal/cleared' }) });
  add({ id: 'terminal.find', category: 'Terminal', title: 'Find', key: 'Ctrl+F', inTerminal: true, when: hasView, run: () => view().openFind() });
  add({ id: 'terminal.copySelection', category: 'Terminal', title: 'Copy Selection', key: 'Ctrl+Shift+C', inTerminal: true, when: hasView, run: () => copySelection(wb.activeView, wb.notify) });
  add({ id: 'terminal.paste', category: 'Terminal', title: 'Paste', key: 'Ctrl+Shift+V', inTerminal: true, when: () => hasView() && canEdit(), run: () => pasteClipboard(wb.activeView, wb.notify) });
  add({ id: 'terminal.selectAll', category: 'Terminal', title: 'Select All', when: hasView, run: () => view().term.selectAll() });
  add({ id: 'terminal.prevCommand', category: 'Terminal', title: 'Scroll to Previous Command', key: 'Ctrl+Up', inTerminal: true, when: hasView, run: () => view().jumpCommand(-1) });
  add({ id: 'terminal.nextCommand', category: 'Terminal', title: 'Scroll to Next Command', key: 'Ctrl+Down', inTerminal: true, when: hasView, run: () => view().jumpCommand(1) });
  add({ id: 'terminal.copyLastOutput', category: 'Terminal', title: 'Copy Output of Last Command', when: hasView, run: () => view().copyCommandOutput() });
  add({ id: 'terminal.goToCommand', category: 'Terminal', title: 'Go to Command…', when: hasView, run: () => wb.palette.showCommandsOf(view()) });
  add({ id: 'terminal.scrollBottom', category: 'Terminal', title: 'Scroll to Bottom', when: hasView, run: () => view().term.scrollToBottom() });
  add({ id: 'view.toggleSidebar', category: 'View', title: 'Toggle Primary Side Bar Visibility', key: 'Ctrl+B', run: () => wb.sidebarLayout.toggle() });
  add({ id: 'view.terminals', category: 'View', title: 'Show Terminals', run: () => wb.activityBar.showPane('terminals') });
  add({ id: 'view.commands', category: 'View', title: 'Show Commands', run: () => wb.activityBar.showPane('commands') });
  add({ id: 'view.failedOnly', category: 'Commands', title: 'Toggle Failed Commands Only', run: () => (wb.sidebar.toggleFailedOnly(), wb.activityBar.showPane('commands')) });
  add({ id: 'theme.pick', category: 'Preferences', title: 'Color Theme', run: () => wb.palette.showThemes(wb.themes) });
  add({ id: 'theme.hc', category: 'Preferences', title: 'Toggle High Contrast Theme', run: () => wb.themes.set(wb.themes.kind.startsWith('hc') ? 'auto' : wb.themes.kind === 'light' ? 'hc-light' : 'hc-dark') });
  add({ id: 'settings.open', category: 'Preferences', title: 'Open Settings', key: 'Ctrl+,', inTerminal: true, run: () => wb.openSettings() });
  add({ id: 'renderer.pick', category: 'Preferences', title: 'Terminal Renderer (GPU Acceleration)…', state: () => terminalSettings().renderer, run: () => wb.openSettings('renderer') });
  add({ id: 'view.tabFocusMode', category: 'View', title: 'Toggle Tab Key Moves Focus', key: 'Ctrl+M', inTerminal: true, state: () => (tabMovesFocus() ? 'on' : 'off'), run: toggleTabFocusMode });
  add({ id: 'settings.screenReader', category: 'Preferences', title: 'Toggle Screen Reader Accessibility Mode', key: 'Shift+Alt+F1', inTerminal: true, state: () => (terminalSettings().screenReaderMode ? 'on' : 'off'), run: toggleScreenReaderMode });
  add({ id: 'settings.osc52Write', category: 'Preferences', title: 'Allow Programs to Write the Clipboard (OSC 52)', state: () => (clipboardWriteAllowed() ? 'on' : 'off'), run: () => toggleClipboardWrite(wb.notify) });
  add({ id: 'settings.skipShell', category: 'Preferences', title: 'Keyboard Shortcuts That Win Over the Shell (Commands to Skip Shell)…', run: () => wb.configureSkipShell() });
  add({ id: 'settings.startupTerminal', category: 'Preferences', title: 'Open a Terminal When None Is Running', state: () => (startupTerminal() ? 'on' : 'off'), when: isOwner, run: () => toggleStartupTerminal(wb.notify) });
  add({ id: 'notifications.toggle', category: 'Notifications', title: 'Notify When Commands Finish in a Background Tab', run: () => toggleNotifications(wb.notifier, wb.notify).then(() => wb.statusBar.render()) });
  add({ id: 'connection.reconnect', category: 'Connection', title: 'Reconnect Now', run: () => (wb.client.online ? wb.client.dropConnection() : wb.client.retryNow()) });
  add({ id: 'account.signOut', category: 'Account', title: 'Sign Out', destructive: true, when: isOwner, run: () => confirmSignOut(wb.config.basePath, wb.client, (m) => wb.notify('error', m)) });
  add({ id: 'help.about', category: 'Help', title: 'About', run: () => showAbout(wb.config.version, wb.client, wb.role) });
}
