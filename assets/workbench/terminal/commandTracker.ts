// The commands a terminal's shell integration reported:
// built from a snapshot's command parts and kept current by
// terminal/commandExecuted, terminal/commandFinished and terminal/cleared.
// Markers and decorations on the records belong to the decoration addon.

import type { IDecoration, IMarker } from '@xterm/xterm';
import { exitCodeOf, hasExited, type TerminalCommandExecuted, type TerminalCommandFinished, type TerminalCommandPart, type TerminalState } from '../../ahp/types';
import { formatDuration } from '../format';
import { runByOf, runByPersonOf } from './agentMark';

export type CommandStatus = 'running' | 'success' | 'failure';

export interface CommandRecord {
  commandId: string;
  commandLine: string;
  timestamp: number;
  isComplete: boolean;
  exitCode?: number;
  durationMs?: number;
  /** The agent whose tool call ran it ("Agent · Claude Code"); undefined: a person. */
  runBy?: string;
  /** The person signed in by SSO who had control when it ran ("Alice Smith"). */
  runByPerson?: string;
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
  if (s === 'running') return { kind: 'running', label: commandLabel(last.commandLine) };
  return { kind: s, code: last.exitCode, label: commandLabel(last.commandLine) };
}

/**
 * A command line on one row (lists, toasts, notices): the lines of a
 * multi-line command joined with " ⏎ ", blank lines dropped; longer than
 * `max` characters it ends in "…". Hovers and tooltips show the full text.
 */
export function commandLabel(commandLine: string, max = Infinity): string {
  const oneRow = commandLine
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .join(' ⏎ ');
  return oneRow.length > max ? `${oneRow.slice(0, Math.max(0, max - 1)).trimEnd()}…` : oneRow;
}

/** One line for screen readers and tooltips: "make — exit code 2, 1.2 s". */
export function describeCommand(c: CommandRecord): string {
  const s = commandStatus(c);
  const what = s === 'running' ? 'running' : c.exitCode === undefined ? 'finished' : `exit code ${c.exitCode}`;
  return `${commandLabel(c.commandLine)} — ${what}${c.durationMs !== undefined ? `, ${formatDuration(c.durationMs)}` : ''}`;
}

/**
 * How many commands a terminal remembers. The mirror keeps a bounded
 * scrollback (assets/ahp/content.ts); a shell looping over quick commands
 * for hours must not grow this list without end either. The oldest records
 * go first, with their gutter decorations.
 */
export const maxCommandRecords = 5000;

export class CommandTracker {
  /** In order of execution. */
  records: CommandRecord[] = [];

  constructor(readonly limit = maxCommandRecords) {}

  #add(rec: CommandRecord): CommandRecord {
    this.records.push(rec);
    if (this.records.length > this.limit) {
      // Drop a slice at once so the splice is paid rarely, not per command.
      const drop = this.records.splice(0, this.records.length - Math.floor(this.limit * 0.9));
      for (const old of drop) {
        old.decoration?.dispose();
        old.marker?.dispose();
      }
    }
    return rec;
  }

  /**
   * Starts over from a snapshot's command part (call in content order);
   * `meta` is its terminal/commandExecuted's _meta, which the snapshot
   * carries beside the state (AhpClient.commandMeta), not in the part.
   */
  fromPart(p: TerminalCommandPart, meta?: Record<string, unknown>): CommandRecord {
    const rec: CommandRecord = {
      commandId: p.commandId,
      commandLine: p.commandLine,
      timestamp: p.timestamp,
      isComplete: p.isComplete,
      exitCode: p.exitCode,
      durationMs: p.durationMs,
      runBy: runByOf(meta),
      runByPerson: runByPersonOf(meta),
    };
    return this.#add(rec);
  }

  executed(a: TerminalCommandExecuted): CommandRecord {
    const rec: CommandRecord = { commandId: a.commandId, commandLine: a.commandLine, timestamp: a.timestamp, isComplete: false, runBy: runByOf(a._meta), runByPerson: runByPersonOf(a._meta) };
    return this.#add(rec);
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

  /** Newest first: a finishing command is almost always the last one. */
  find(commandId: string): CommandRecord | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) if (this.records[i]!.commandId === commandId) return this.records[i];
    return undefined;
  }

  get last(): CommandRecord | undefined {
    return this.records.at(-1);
  }

  /** The command whose output "Copy Output of Last Command" means. */
  lastWithOutput(): CommandRecord | undefined {
    return [...this.records].reverse().find((c) => c.isComplete) ?? this.last;
  }
}
