// Pure reducers for the root and terminal channels (spec/ahp-terminals.md
// §9.3 and §10.6). They never mutate their input; an action they do not know
// (or that does not apply) returns the very same state object.

import type {
  RootState,
  StateAction,
  TerminalCommandPart,
  TerminalContentPart,
  TerminalState,
} from './types';

/**
 * Which terminal shape to produce. `current` (0.9.0+) sets `lifecycle` on
 * `terminal/exited`; `legacy` (≤0.8) sets `exitCode`.
 */
export type Shape = 'current' | 'legacy';

export function rootReducer(state: RootState, action: StateAction): RootState {
  const a = action as Record<string, unknown> & { type: string };
  switch (a.type) {
    case 'root/agentsChanged':
      return { ...state, agents: a.agents as unknown[] };
    case 'root/activeSessionsChanged':
      return { ...state, activeSessions: a.activeSessions as number };
    case 'root/terminalsChanged':
      return { ...state, terminals: a.terminals as RootState['terminals'] };
    case 'root/configChanged': {
      if (!state.config) return state;
      const config = a.config as Record<string, unknown>;
      const values = a.replace ? { ...config } : { ...state.config.values, ...config };
      return { ...state, config: { ...state.config, values } };
    }
    default:
      return state;
  }
}

export function terminalReducer(state: TerminalState, action: StateAction, shape: Shape = 'current'): TerminalState {
  const a = action as Record<string, unknown> & { type: string };
  switch (a.type) {
    case 'terminal/data':
      return { ...state, content: appendData(state.content, a.data as string) };
    case 'terminal/input':
      return state;
    case 'terminal/resized':
      return { ...state, cols: a.cols as number, rows: a.rows as number };
    case 'terminal/claimed':
      return { ...state, claim: a.claim as TerminalState['claim'] };
    case 'terminal/titleChanged':
      return { ...state, title: a.title as string };
    case 'terminal/cwdChanged':
      return { ...state, cwd: a.cwd as string };
    case 'terminal/exited': {
      const code = a.exitCode as number | undefined;
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
      const part: TerminalCommandPart = {
        type: 'command',
        commandId: a.commandId as string,
        commandLine: a.commandLine as string,
        output: '',
        timestamp: a.timestamp as number,
        isComplete: false,
      };
      return { ...state, content: [...state.content, part], supportsCommandDetection: true };
    }
    case 'terminal/commandFinished': {
      const id = a.commandId as string;
      if (!state.content.some((p) => p.type === 'command' && p.commandId === id)) return state;
      const content = state.content.map((p): TerminalContentPart => {
        if (p.type !== 'command' || p.commandId !== id) return p;
        const done: TerminalCommandPart = { ...p, isComplete: true };
        delete done.exitCode;
        delete done.durationMs;
        if (a.exitCode !== undefined && a.exitCode !== null) done.exitCode = a.exitCode as number;
        if (a.durationMs !== undefined && a.durationMs !== null) done.durationMs = a.durationMs as number;
        return done;
      });
      return { ...state, content };
    }
    default:
      return state;
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

/** The whole raw output stream of a terminal state, in order (§10.3). */
export function contentText(content: readonly TerminalContentPart[]): string {
  let s = '';
  for (const p of content) s += p.type === 'command' ? p.output : p.value;
  return s;
}

/** Applies a channel's reducer chosen by URI prefix (as SDK state mirrors do). */
export function reduceChannel(channel: string, state: unknown, action: StateAction, shape: Shape = 'current'): unknown {
  if (channel === 'ahp-root://') return rootReducer(state as RootState, action);
  if (channel.startsWith('ahp-terminal:')) return terminalReducer(state as TerminalState, action, shape);
  return state;
}
