// window.__termhost: what the e2e tests (e2e/*_test.go) read and drive. Only
// the test build (testmain.ts → static/dist/app-test.js) includes this
// module; production pages load app.js, which has no hook.

import { terminalUri } from '../ahp/types';
import type { ThemeSetting } from './theme';
import type { Terminal } from '@xterm/xterm';
import type { Workbench } from './app';
import { terminalSettings, updateTerminalSettings, type TerminalSettings } from './settings';

/** Visible text of the whole buffer, trailing blanks trimmed. */
function bufferText(term: Terminal | undefined): string | undefined {
  if (!term) return undefined;
  const b = term.buffer.active;
  const lines: string[] = [];
  for (let i = 0; i < b.length; i++) lines.push(b.getLine(i)?.translateToString(true) ?? '');
  return lines.join('\n').replace(/\s+$/, '');
}

export function installTestHook(wb: Workbench): void {
  const client = wb.client;
  // Every terminal/input this page sends, from its first byte: the tests
  // check that replayed history and viewers send nothing.
  const sentInputs: string[] = [];
  const dispatch = client.dispatch.bind(client);
  client.dispatch = (channel, action) => {
    if (action.type === 'terminal/input') sentInputs.push(action.data);
    return dispatch(channel, action);
  };
  (window as unknown as { __termhost: unknown }).__termhost = {
    client,
    role: wb.role,
    share: (id?: string) => wb.share(id ? terminalUri(id) : wb.activeView!.uri),
    views: () => wb.views.map((v) => ({ uri: v.uri, id: v.id, loaded: v.loaded, renderer: v.renderer, rendererLabel: v.rendererLabel })),
    active: () => wb.activeView?.id,
    buffer: (id?: string) => bufferText(wb.viewOf(id)?.term),
    view: (id?: string) => wb.viewOf(id),
    state: (id: string) => client.state(terminalUri(id)),
    catalogue: () => wb.catalogue,
    newTerminal: () => wb.newTerminal(),
    open: (id: string) => wb.openTerminal(terminalUri(id)),
    type: (data: string, id?: string) => {
      const v = wb.viewOf(id);
      return v ? client.dispatch(v.uri, { type: 'terminal/input', data }) : undefined;
    },
    sentInputs: () => [...sentInputs],
    drained: async () => {
      await Promise.all(wb.views.map((v) => v.drained()));
    },
    dropConnection: () => client.dropConnection(),
    theme: (t: ThemeSetting) => wb.themes.set(t),
    run: (id: string) => wb.runAction(id),
    commandEnabled: (id: string) => wb.commands.enabled().some((a) => a.id === id),
    settings: () => terminalSettings(),
    updateSettings: (patch: Partial<TerminalSettings>) => updateTerminalSettings(patch),
    replay: () => wb.replays.current?.state(),
    approvals: () => wb.approvals.book.all,
  };
}
