// termhost's own extensions of AHP (docs/protocol.md, "termhost
// extensions"): the names of its x-termhost/* and x-share/* requests and
// notifications and of its termhost/* _meta keys, and the shapes of their
// payloads. The Go twin is package ext (ahp/ext), whose schema.json holds
// their JSON schemas; ext.test.ts checks these names against it.

/** Requests (AHP leaves the x- prefix to implementations). */
export const extMethods = {
  /** A terminal's current screen as text, for previews: {channel} → ScreenResult. */
  screen: 'x-termhost/screen',
  /** Who is on every terminal the caller may see (params ignored) → PresenceResult. */
  presence: 'x-termhost/presence',
  /** Starts, pauses or resumes a terminal's recording: RecordParams → null (owner only). */
  record: 'x-termhost/record',
  /** Asks for a terminal's claim: RequestControlParams → ControlResult. */
  requestControl: 'x-termhost/requestControl',
  /** Grants or declines a pending control request: AnswerControlParams → null. */
  answerControl: 'x-termhost/answerControl',
  /** Creates a share link: ShareCreateParams → ShareInfo with its url (owner only, as every x-share/*). */
  shareCreate: 'x-share/create',
  /** Lists the live share links: ShareListParams → ShareListResult (without urls). */
  shareList: 'x-share/list',
  /** Revokes a share link and closes its connections: ShareRevokeParams → null. */
  shareRevoke: 'x-share/revoke',
  /** Asks people to approve a command line (owner connections: termhost mcp): ApprovalRequestParams → ApprovalResult, answered when a person answers or at the timeout. */
  approvalRequest: 'x-termhost/approval/request',
  /** Approves or denies a pending approval (the owner, or the terminal's holder): ApprovalAnswerParams → {approval}. */
  approvalAnswer: 'x-termhost/approval/answer',
  /** The approvals the caller may see (params ignored) → ApprovalList. */
  approvalList: 'x-termhost/approval/list',
} as const;

/** Notifications the server sends. */
export const extNotifications = {
  /** Who is on a terminal, to its subscribers: PresenceList. */
  presence: 'x-termhost/presence',
  /** A control request was made or ended, to the holder and the requester: ControlNotice. */
  controlRequest: 'x-termhost/controlRequest',
  /** The connection fell behind on a terminal and skipped ahead: SkipNotice. */
  skipped: 'x-termhost/skipped',
  /** The whole list of approvals the connection may see, on every change (coalesced; never to viewers): ApprovalList. */
  approvals: 'x-termhost/approvals',
  /** The server's host list on every change of its hosts file (never to share links): HostList. */
  hosts: 'x-termhost/hosts',
} as const;

/** initialize capabilities (presence flags). */
export const extCapabilities = {
  /** Terminal output as binary messages (decodeBinaryData) instead of JSON, where ESC costs 6 bytes. */
  binaryData: 'x-termhost/binaryData',
} as const;

const utf8 = new TextDecoder();

/**
 * Decodes a binary data message (Go: ext.AppendBinaryData): a big-endian
 * uint32 n, n bytes of the `action` notification of a terminal/data
 * envelope with "data":"", then the data as UTF-8. Returns the notification
 * with its data put back, or undefined for anything else.
 */
export function decodeBinaryData(buf: ArrayBuffer): Record<string, unknown> | undefined {
  if (buf.byteLength < 4) return undefined;
  const n = new DataView(buf).getUint32(0);
  if (n > buf.byteLength - 4) return undefined;
  const bytes = new Uint8Array(buf);
  let msg: { params?: { action?: { type?: unknown; data?: unknown } } };
  try {
    msg = JSON.parse(utf8.decode(bytes.subarray(4, 4 + n)));
  } catch {
    return undefined;
  }
  const action = msg?.params?.action;
  if (!action || action.type !== 'terminal/data' || action.data !== '') return undefined;
  action.data = utf8.decode(bytes.subarray(4 + n));
  return msg as Record<string, unknown>;
}

/** _meta keys. */
export const extMeta = {
  /** initialize result: the connection's own presence id (Member.id). */
  presenceId: 'termhost/presenceId',
  /** initialize result: the server's SizePolicy. */
  sizePolicy: 'termhost/sizePolicy',
  /** initialize result: the server's public URL (--public-url), the base of the links people open; absent without one. */
  publicUrl: 'termhost/publicUrl',
  /** initialize result: the name of the host the client talks to (--host-name). */
  hostName: 'termhost/hostName',
  /** createTerminal params: a command to run instead of a shell (["make", "build"]). */
  command: 'termhost/command',
  /** createTerminal params: true records the terminal from its start. */
  record: 'termhost/record',
  /** Catalogue entry: true on a terminal that runs a command instead of a shell (no command lines). */
  runsCommand: 'termhost/runsCommand',
  /** Catalogue entry: the RecordingState of a terminal that has a recording. */
  recording: 'termhost/recording',
  /** Catalogue entry: the AgentInfo of the agent session that last held the terminal. */
  agent: 'termhost/agent',
  /** Catalogue entry: true while the client claim's holder has left for good and nobody took it (nobody has control). */
  holderAway: 'termhost/holderAway',
  /** terminal/commandExecuted: RunBy of a command an agent's tool call ran (or run while an SSO person had control). */
  runBy: 'termhost/runBy',
  /** A terminal snapshot's own _meta (not its state): CommandMeta, the _meta of its command parts' commandExecuted. */
  commandMeta: 'termhost/commandMeta',
  /** Catalogue entry: true while the terminal's program waits for input it does not echo (a password): agents may not type. */
  secretPrompt: 'termhost/secretPrompt',
} as const;

export type ApprovalState = 'pending' | 'approved' | 'denied' | 'timed_out' | 'withdrawn';

/** One approval, pending or lately answered (docs/protocol.md, "Approvals"); times in ms since the epoch. */
export interface Approval {
  id: string;
  terminal: string;
  terminalTitle?: string;
  commandLine: string;
  requestedBy: { kind: 'agent' | 'driver' | 'owner'; name: string };
  /** The policy's rule that decided to ask ("rm", "/^npm /"). */
  rule: string;
  /** Why, for people. */
  reason: string;
  createdAt: number;
  expiresAt: number;
  state: ApprovalState;
  answeredBy?: { name: string };
  answeredAt?: number;
  denyReason?: string;
  alwaysAllow?: boolean;
}

/** The params of extNotifications.approvals and the result of extMethods.approvalList. */
export interface ApprovalList {
  approvals: Approval[];
}

/** The params of extMethods.approvalAnswer. */
export interface ApprovalAnswerParams {
  id: string;
  decision: 'approve' | 'deny';
  reason?: string;
  alwaysAllow?: boolean;
}

export type MemberKind = 'owner' | 'cli' | 'agent' | 'driver' | 'viewer';

/** One client connected to a terminal, as everyone sees it: a label, never a token or a clientId. */
export interface Member {
  id: string;
  name: string;
  kind: MemberKind;
  device?: string;
  /** Holds the terminal's claim. */
  control?: boolean;
  /** A person signed in by single sign-on: name is theirs, id one for all their tabs. */
  person?: boolean;
}

/** A terminal's presence: the params of extNotifications.presence. */
export interface PresenceList {
  channel: string;
  /** Everyone on the terminal; past 50 viewers, everyone but the viewers. */
  members: Member[];
  /** Past 50 viewers, how many there are (they are then not in members). */
  viewers?: number;
}

/** The result of extMethods.presence. */
export interface PresenceResult {
  terminals: PresenceList[];
}

/** The result of extMethods.screen. */
export interface ScreenResult {
  cols: number;
  rows: number;
  altScreen: boolean;
  lines: string[];
}

/** The params of extMethods.record. */
export interface RecordParams {
  channel: string;
  on: boolean;
}

/** The value of extMeta.recording. */
export type RecordingState = 'recording' | 'paused' | 'stopped';

/** The params of extMethods.requestControl; ask false takes only a claim nobody holds. */
export interface RequestControlParams {
  channel: string;
  terminal: string;
  ask?: boolean;
}

/** The params of extMethods.answerControl. */
export interface AnswerControlParams {
  channel: string;
  terminal: string;
  requestId: string;
  grant: boolean;
}

/** The result of extMethods.requestControl. */
export interface ControlResult {
  status: 'granted' | 'pending' | 'held';
  requestId?: string;
  autoGrantMs?: number;
}

/** The params of extNotifications.controlRequest. */
export interface ControlNotice {
  terminal: string;
  requestId: string;
  status: 'pending' | 'granted' | 'declined' | 'cancelled';
  from: Member;
  /** Pending: granted after this long without input from the holder. */
  autoGrantMs?: number;
  /** Granted because the holder was away or gone. */
  auto?: boolean;
}

/**
 * The params of extNotifications.skipped: `bytes` of the terminal's output
 * were not sent; the terminal/data envelope at serverSeq `redrawSeq` that
 * follows is the redraw of the screen in their place. The notice is not an
 * action: it carries no serverSeq of its own.
 */
export interface SkipNotice {
  channel: string;
  bytes: number;
  redrawSeq: number;
}

export type ShareRole = 'viewer' | 'driver';

/** The params of extMethods.shareCreate; no ttlSeconds (or 0) means no expiry. */
export interface ShareCreateParams {
  channel: string;
  terminal: string;
  role: ShareRole;
  ttlSeconds?: number;
  /** Who the link is for: its name in presence. */
  label?: string;
}

/** The params of extMethods.shareList; no terminal lists every terminal's links. */
export interface ShareListParams {
  channel: string;
  terminal?: string;
}

/** The params of extMethods.shareRevoke. */
export interface ShareRevokeParams {
  channel: string;
  id: string;
}

/** A share link: the result of extMethods.shareCreate and an entry of ShareListResult. Times are Unix ms. */
export interface ShareInfo {
  id: string;
  terminal: string;
  role: ShareRole;
  /** Who the link is for (its name in presence). */
  label?: string;
  createdAt: number;
  expiresAt?: number;
  /** Only in the create result: holds the secret, shown once. */
  url?: string;
}

/** The result of extMethods.shareList. */
export interface ShareListResult {
  shares: ShareInfo[];
}

/** The value of extMeta.sizePolicy. */
export type SizePolicy = 'holder' | 'smallest';

/** The value of extMeta.agent: the agent session that last held a terminal. */
export interface AgentInfo {
  session: string;
  chat?: string;
  /** "Agent · Claude Code" */
  name: string;
}

/** The value of extMeta.runBy. */
export interface RunBy {
  kind: 'agent' | 'person';
  name: string;
}

/** The value of extMeta.commandMeta: by commandId, the _meta of that command's terminal/commandExecuted. */
export type CommandMeta = Record<string, Record<string, unknown>>;
