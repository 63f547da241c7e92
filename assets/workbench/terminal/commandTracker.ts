// The commands a terminal's shell integration reported (spec/shell-integration.md):
// built from a snapshot's command parts and kept current by
// terminal/commandExecuted, terminal/commandFinished and terminal/cleared.
// Markers and decorations on the records belong to the decoration addon.

import type { IDecoration, IMarker } from '@xterm/xterm';
import { exitCodeOf, hasExited, type TerminalCommandExecuted, type TerminalCommandFinished, type TerminalCommandPart, type TerminalState } from '../../ahp/types';
import { formatDuration } from '../format';

export type CommandStatus = 'running' | 'success' | 'failure';

export interface CommandRecord {
  commandId: string;
  commandLine: string;
  timestamp: number;
  isComplete: boolean;
  exitCode?: number;
  durationMs?: number;
  marker?: IMarker;
  decoration?: IDecoration;
}

export function commandStatus(c: { isComplete: boolean; exitCode?: number }): CommandStatus {
  if (!c.isComplete) return 'running';
  return c.exitCode === undefined || c.exitCode === 0 ? 'success' : 'failure';
}

/** A terminal's status for its tab, the status bar, the title and favicon. */
export interface TerminalStatus {
  kind: 'idle' | 'running' | 'success' | 'failure' | 'exited';
  code?: number;
  label: string;
}

/** The exit of the terminal, else its last command. */
export function terminalStatus(st: TerminalState | undefined, last: CommandRecord | undefined): TerminalStatus {
  if (st && hasExited(st)) {
    const code = exitCodeOf(st);
    return { kind: code === undefined || code === 0 ? 'exited' : 'failure', code, label: code === undefined ? 'exited' : `exited (${code})` };
  }
  if (!last) return { kind: 'idle', label: '' };
  const s = commandStatus(last);
  if (s === 'running') return { kind: 'running', label: last.commandLine };
  return { kind: s, code: last.exitCode, label: last.commandLine };
}

/** One line for screen readers and tooltips: "make — exit code 2, 1.2 s". */
export function describeCommand(c: CommandRecord): string {
  const s = commandStatus(c);
  const what = s === 'running' ? 'running' : c.exitCode === undefined ? 'finished' : `exit code ${c.exitCode}`;
  return `${c.commandLine} — ${what}${c.durationMs !== undefined ? `, ${formatDuration(c.durationMs)}` : ''}`;
}

export class CommandTracker {
  /** In order of execution. */
  records: CommandRecord[] = [];

  /** Starts over from a snapshot's command part (call in content order). */
  fromPart(p: TerminalCommandPart): CommandRecord {
    const rec: CommandRecord = {
      commandId: p.commandId,
      commandLine: p.commandLine,
      timestamp: p.timestamp,
      isComplete: p.isComplete,
      exitCode: p.exitCode,
      durationMs: p.durationMs,
    };
    this.records.push(rec);
    return rec;
  }

  executed(a: TerminalCommandExecuted): CommandRecord {
    const rec: CommandRecord = { commandId: a.commandId, commandLine: a.commandLine, timestamp: a.timestamp, isComplete: false };
    this.records.push(rec);
    return rec;
  }

  /** The finished command's record, or undefined if it is not known here. */
  finished(a: TerminalCommandFinished): CommandRecord | undefined {
    const rec = this.find(a.commandId);
    if (!rec) return undefined;
    rec.isComplete = true;
    rec.exitCode = a.exitCode;
    rec.durationMs = a.durationMs;
    return rec;
  }

  clear(): void {
    this.records = [];
  }

  find(commandId: string): CommandRecord | undefined {
    return this.records.find((c) => c.commandId === commandId);
  }

  get last(): CommandRecord | undefined {
    return this.records.at(-1);
  }

  /** The command whose output "Copy Output of Last Command" means. */
  lastWithOutput(): CommandRecord | undefined {
    return [...this.records].reverse().find((c) => c.isComplete) ?? this.last;
  }
}
