// Agents' terminals (docs/protocol.md, "Agents"): the server marks the
// commands an agent's tool call ran (terminal/commandExecuted's _meta
// "termhost/runBy", kept beside the state: AhpClient.commandMeta)
// and names the agent session that last held a terminal (the catalogue's
// _meta "termhost/agent"), so the owner can hand the terminal back after
// taking control.

import { extMeta, type AgentInfo, type RunBy } from '../../ahp/ext';
import type { TerminalClaim, TerminalInfo } from '../../ahp/types';
import { cleanLabel } from '../label';

/** The agent session that last held a terminal. */
export type LastAgent = AgentInfo;

/** The agent that ran a command ("Agent · Claude Code"), from its commandExecuted's _meta; undefined for a person's. */
export function runByOf(meta: Record<string, unknown> | undefined): string | undefined {
  const by = meta?.[extMeta.runBy] as Partial<Record<keyof RunBy, unknown>> | undefined;
  if (by?.kind !== 'agent') return undefined;
  return (typeof by.name === 'string' && cleanLabel(by.name)) || 'Agent';
}

/** The person signed in by SSO who held the terminal when a command ran ("Alice Smith"); undefined otherwise. */
export function runByPersonOf(meta: Record<string, unknown> | undefined): string | undefined {
  const by = meta?.[extMeta.runBy] as Partial<Record<keyof RunBy, unknown>> | undefined;
  return (by?.kind === 'person' && typeof by.name === 'string' && cleanLabel(by.name)) || undefined;
}

export function lastAgentOf(info: TerminalInfo | undefined): LastAgent | undefined {
  const a = info?._meta?.[extMeta.agent] as Partial<LastAgent> | undefined;
  if (typeof a?.session !== 'string' || !a.session) return undefined;
  return { session: a.session, chat: typeof a.chat === 'string' ? a.chat : undefined, name: (typeof a.name === 'string' && cleanLabel(a.name)) || 'Agent' };
}

/**
 * The owner may hand a terminal back to the agent session that last held
 * it once a person holds it (the owner took control); a running terminal
 * only.
 */
export function mayHandBack(role: string, claim: TerminalClaim | undefined, last: LastAgent | undefined, exited: boolean): last is LastAgent {
  return role === 'owner' && !!last && claim?.kind === 'client' && !exited;
}

/** The claim that gives the terminal back to the agent session (no tool call: the agent binds its next one). */
export function handBackClaim(last: LastAgent): TerminalClaim {
  return last.chat ? { kind: 'session', session: last.session, chat: last.chat } : { kind: 'session', session: last.session };
}
