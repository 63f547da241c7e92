// Pure reducers for the root and terminal channels, AHP's reducers in
// TypeScript. They never mutate their input; an action they do not know
// (or that does not apply) returns the very same state object.

import {
  isRootAction,
  isTerminalAction,
  isTerminalChannel,
  type RootState,
  type TerminalCommandPart,
  type TerminalContentPart,
  type TerminalState,
  type WireAction,
} from './types';

/**
 * Which terminal shape to produce. `current` (0.9.0+) sets `lifecycle` on
 * `terminal/exited`; `legacy` (≤0.8) sets `exitCode`.
 */
export type Shape = 'current' | 'legacy';

export function rootReducer(state: RootState, action: WireAction): RootState {
  if (!isRootAction(action)) return state;
  switch (action.type) {
    case 'root/agentsChanged':
      return { ...state, agents: action.agents };
    case 'root/activeSessionsChanged':
      return { ...state, activeSessions: action.activeSessions };
    case 'root/terminalsChanged':
      return { ...state, terminals: action.terminals };
    case 'root/configChanged': {
      if (!state.config) return state;
      const values = action.replace ? { ...action.config } : { ...state.config.values, ...action.config };
      return { ...state, config: { ...state.config, values } };
    }
  }
}

export function terminalReducer(state: TerminalState, action: WireAction, shape: Shape = 'current'): TerminalState {
  if (!isTerminalAction(action)) return state;
  switch (action.type) {
    case 'terminal/data':
      return { ...state, content: appendData(state.content, action.data) };
    case 'terminal/input':
      return state;
    case 'terminal/resized':
      return { ...state, cols: action.cols, rows: action.rows };
    case 'terminal/claimed':
      return { ...state, claim: action.claim };
    case 'terminal/titleChanged':
      return { ...state, title: action.title };
    case 'terminal/cwdChanged':
      return { ...state, cwd: action.cwd };
    case 'terminal/exited': {
      const code = action.exitCode;
      if (shape === 'legacy') {
        const next = { ...state };
        if (code === undefined) delete next.exitCode;
        else next.exitCode = code;
        return next;
      }
      return {
        ...state,
        lifecycle: code === undefined ? { status: 'exited' } : { status: 'exited', exitCode: code },
      };
    }
    case 'terminal/cleared':
      return { ...state, content: [] };
    case 'terminal/commandDetectionAvailable':
      return { ...state, supportsCommandDetection: true };
    case 'terminal/commandExecuted': {
      // The action's _meta (a server's extension) stays out of the part, as
      // in AHP's own reducer: a snapshot's state is the previous one plus the
      // actions for every client (ChannelMirror keeps it beside the state).
      const part: TerminalCommandPart = {
        type: 'command',
        commandId: action.commandId,
        commandLine: action.commandLine,
        output: '',
        timestamp: action.timestamp,
        isComplete: false,
      };
      return { ...state, content: [...state.content, part], supportsCommandDetection: true };
    }
    case 'terminal/commandFinished': {
      const { commandId, exitCode, durationMs } = action;
      if (!state.content.some((p) => p.type === 'command' && p.commandId === commandId)) return state;
      const content = state.content.map((p): TerminalContentPart => {
        if (p.type !== 'command' || p.commandId !== commandId) return p;
        const done: TerminalCommandPart = { ...p, isComplete: true };
        delete done.exitCode;
        delete done.durationMs;
        // `!= null`: a server may send null for "absent".
        if (exitCode != null) done.exitCode = exitCode;
        if (durationMs != null) done.durationMs = durationMs;
        return done;
      });
      return { ...state, content };
    }
  }
}

function appendData(content: TerminalContentPart[], d: string): TerminalContentPart[] {
  const tail = content[content.length - 1];
  if (tail && tail.type === 'command' && !tail.isComplete) {
    return [...content.slice(0, -1), { ...tail, output: tail.output + d }];
  }
  if (tail && tail.type === 'unclassified') {
    return [...content.slice(0, -1), { ...tail, value: tail.value + d }];
  }
  return [...content, { type: 'unclassified', value: d }];
}

/** The whole raw output stream of a terminal state, in order: every part's text. */
export function contentText(content: readonly TerminalContentPart[]): string {
  let s = '';
  for (const p of content) s += p.type === 'command' ? p.output : p.value;
  return s;
}

/** Applies a channel's reducer chosen by URI prefix (as SDK state mirrors do). */
export function reduceChannel(channel: string, state: unknown, action: WireAction, shape: Shape = 'current'): unknown {
  if (channel === 'ahp-root://') return rootReducer(state as RootState, action);
  if (isTerminalChannel(channel)) return terminalReducer(state as TerminalState, action, shape);
  return state;
}
