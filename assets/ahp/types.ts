// Agent Host Protocol types used by the browser client: the root and terminal
// channels. Field names are the wire names.
// Optional fields are absent, never null. Unknown fields are tolerated and kept.

export const ROOT_CHANNEL = 'ahp-root://';
export const TERMINAL_SCHEME = 'ahp-terminal:';
/** The versions this client offers in `initialize` (current terminal shape). */
export const PROTOCOL_VERSIONS = ['1.0.0'] as const;

export type URI = string;

// ---- claims and lifecycle ----

export interface TerminalClientClaim {
  kind: 'client';
  clientId: string;
}

export interface TerminalSessionClaim {
  kind: 'session';
  session: URI;
  /** Required from 0.9.0; absent in legacy fixtures. */
  chat?: URI;
  turnId?: string;
  toolCallId?: string;
}

export type TerminalClaim = TerminalClientClaim | TerminalSessionClaim;

export type TerminalLifecycleState = { status: 'running' } | { status: 'exited'; exitCode?: number };

// ---- content parts ----

export interface TerminalUnclassifiedPart {
  type: 'unclassified';
  value: string;
}

export interface TerminalCommandPart {
  type: 'command';
  commandId: string;
  commandLine: string;
  output: string;
  timestamp: number;
  isComplete: boolean;
  exitCode?: number;
  durationMs?: number;
}

export type TerminalContentPart = TerminalUnclassifiedPart | TerminalCommandPart;

// ---- channel states ----

export interface TerminalState {
  title: string;
  cwd?: URI;
  cols?: number;
  rows?: number;
  content: TerminalContentPart[];
  /** 0.9.0+ (required there). */
  lifecycle?: TerminalLifecycleState;
  /** ≤0.8 shape only. */
  exitCode?: number;
  claim: TerminalClaim;
  supportsCommandDetection?: boolean;
  isPty?: boolean;
}

export interface TerminalInfo {
  resource: URI;
  title: string;
  claim: TerminalClaim;
  lifecycle?: TerminalLifecycleState;
  /** ≤0.8 shape only. */
  exitCode?: number;
  /** Server extensions, e.g. termhost's "termhost/recording" (workbench/recording.ts). */
  _meta?: Record<string, unknown>;
}

export interface RootConfigState {
  schema?: unknown;
  values: Record<string, unknown>;
}

export interface RootState {
  agents: unknown[];
  activeSessions?: number;
  terminals?: TerminalInfo[];
  config?: RootConfigState;
  _meta?: Record<string, unknown>;
}

// ---- actions ----

export interface RootAgentsChanged { type: 'root/agentsChanged'; agents: unknown[] }
export interface RootActiveSessionsChanged { type: 'root/activeSessionsChanged'; activeSessions: number }
export interface RootTerminalsChanged { type: 'root/terminalsChanged'; terminals: TerminalInfo[] }
export interface RootConfigChanged { type: 'root/configChanged'; config: Record<string, unknown>; replace?: boolean }

export type RootAction = RootAgentsChanged | RootActiveSessionsChanged | RootTerminalsChanged | RootConfigChanged;

export interface TerminalData { type: 'terminal/data'; data: string }
export interface TerminalInput { type: 'terminal/input'; data: string }
export interface TerminalResized { type: 'terminal/resized'; cols: number; rows: number }
export interface TerminalClaimed { type: 'terminal/claimed'; claim: TerminalClaim }
export interface TerminalTitleChanged { type: 'terminal/titleChanged'; title: string }
export interface TerminalCwdChanged { type: 'terminal/cwdChanged'; cwd: URI }
export interface TerminalExited { type: 'terminal/exited'; exitCode?: number }
export interface TerminalCleared { type: 'terminal/cleared' }
export interface TerminalCommandDetectionAvailable { type: 'terminal/commandDetectionAvailable' }
export interface TerminalCommandExecuted {
  type: 'terminal/commandExecuted';
  commandId: string;
  commandLine: string;
  timestamp: number;
  /** A server's extensions (termhost's {"termhost/runBy": …}); the reducer keeps it out of the state. */
  _meta?: Record<string, unknown>;
}
export interface TerminalCommandFinished {
  type: 'terminal/commandFinished';
  commandId: string;
  exitCode?: number;
  durationMs?: number;
}

export type TerminalAction =
  | TerminalData
  | TerminalInput
  | TerminalResized
  | TerminalClaimed
  | TerminalTitleChanged
  | TerminalCwdChanged
  | TerminalExited
  | TerminalCleared
  | TerminalCommandDetectionAvailable
  | TerminalCommandExecuted
  | TerminalCommandFinished;

/** Every action this client understands: a union discriminated by `type`. */
export type StateAction = RootAction | TerminalAction;

/**
 * An action of a type this client does not know (e.g. from a newer server).
 * It is carried through untouched and reducers leave the state as it is.
 * Tell it from a known one with isRootAction / isTerminalAction.
 */
export interface UnknownAction {
  readonly type: string;
  readonly [field: string]: unknown;
}

/** What an envelope from the server carries. */
export type WireAction = StateAction | UnknownAction;

// One entry per known type: the compiler checks both lists are complete.
const rootActionTypes: Record<RootAction['type'], true> = {
  'root/agentsChanged': true,
  'root/activeSessionsChanged': true,
  'root/terminalsChanged': true,
  'root/configChanged': true,
};

const terminalActionTypes: Record<TerminalAction['type'], true> = {
  'terminal/data': true,
  'terminal/input': true,
  'terminal/resized': true,
  'terminal/claimed': true,
  'terminal/titleChanged': true,
  'terminal/cwdChanged': true,
  'terminal/exited': true,
  'terminal/cleared': true,
  'terminal/commandDetectionAvailable': true,
  'terminal/commandExecuted': true,
  'terminal/commandFinished': true,
};

export function isRootAction(a: WireAction): a is RootAction {
  return Object.hasOwn(rootActionTypes, a.type);
}

export function isTerminalAction(a: WireAction): a is TerminalAction {
  return Object.hasOwn(terminalActionTypes, a.type);
}

// ---- envelopes and messages ----

export interface ActionOrigin {
  clientId: string;
  clientSeq: number;
}

export interface ActionEnvelope {
  channel: URI;
  action: WireAction;
  serverSeq: number;
  origin?: ActionOrigin;
  rejectionReason?: string;
}

export interface Snapshot<S = unknown> {
  resource: URI;
  state: S;
  fromSeq: number;
  /** A server's extensions about the state, not part of it (termhost's {"termhost/commandMeta": …}). */
  _meta?: Record<string, unknown>;
}

export interface InitializeParams {
  channel: typeof ROOT_CHANNEL;
  protocolVersions: string[];
  clientId: string;
  clientInfo?: { name: string; version?: string; title?: string };
  initialSubscriptions?: URI[];
  locale?: string;
  capabilities?: Record<string, unknown>;
}

export interface InitializeResult {
  protocolVersion: string;
  serverSeq: number;
  snapshots: Snapshot[];
  serverInfo?: { name: string; version?: string; title?: string };
  _meta?: Record<string, unknown>;
}

export interface ReconnectParams {
  channel: typeof ROOT_CHANNEL;
  clientId: string;
  lastSeenServerSeq: number;
  subscriptions: URI[];
}

export type ReconnectResult =
  | { type: 'replay'; actions: ActionEnvelope[]; missing?: URI[] }
  | { type: 'snapshot'; snapshots: Snapshot[]; missing?: URI[] };

export interface SubscribeResult {
  snapshot?: Snapshot;
}

export interface CreateTerminalParams {
  channel: URI;
  claim: TerminalClaim;
  name?: string;
  cwd?: URI;
  cols?: number;
  rows?: number;
}

export interface JsonRpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: number;
  method: string;
  params: Record<string, unknown>;
}

export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params: Record<string, unknown>;
}

export interface JsonRpcResponse {
  jsonrpc: '2.0';
  id: number | null;
  result?: unknown;
  error?: JsonRpcError;
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/** Error codes (docs/protocol.md#error-codes). */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  UnsupportedProtocolVersion: -32005,
  AuthRequired: -32007,
  NotFound: -32008,
  PermissionDenied: -32009,
  AlreadyExists: -32010,
} as const;

/**
 * Whether a URI can name a terminal: the client chooses it (VS Code uses
 * `agenthost-terminal:/<uuid>`), so any absolute URI but the schemes AHP
 * reserves for other channels (`ahp-*` except `ahp-terminal`) and `file:`
 * (docs/protocol.md, "Terminal URIs").
 */
export function isTerminalChannel(uri: string): boolean {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):./.exec(uri)?.[1]?.toLowerCase();
  if (!scheme) return false;
  return uri.startsWith(TERMINAL_SCHEME) || (!scheme.startsWith('ahp-') && scheme !== 'file');
}

/**
 * How a terminal appears in page paths (`/t/<id>`, escaped with
 * encodeURIComponent): `ahp-terminal:/abc` → `abc`; any other URI (or an id
 * with a ':') stays whole. terminalUri turns it back.
 */
export function terminalIdOf(uri: string): string {
  const id = uri.startsWith('ahp-terminal:/') ? uri.slice('ahp-terminal:/'.length) : '';
  return id && !/[:/]/.test(id) ? id : uri;
}

export function terminalUri(id: string): string {
  return id.includes(':') ? id : 'ahp-terminal:/' + id;
}

/** Exit code of a terminal in either shape; `undefined` if running or unknown. */
export function exitCodeOf(s: { lifecycle?: TerminalLifecycleState; exitCode?: number }): number | undefined {
  if (s.lifecycle) return s.lifecycle.status === 'exited' ? s.lifecycle.exitCode : undefined;
  return s.exitCode;
}

/** Whether a terminal has exited, in either shape. */
export function hasExited(s: { lifecycle?: TerminalLifecycleState; exitCode?: number }): boolean {
  if (s.lifecycle) return s.lifecycle.status === 'exited';
  return s.exitCode !== undefined;
}
