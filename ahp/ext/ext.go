// Package ext is termhost's own extensions of AHP (docs/protocol.md,
// "termhost extensions"): the names of its x-termhost/* and x-share/*
// requests and notifications and of its "termhost/…" _meta keys, the Go
// types of their payloads, and their JSON schemas (schema.json, see
// Schema and LoadSpec). The server, the Go client, the command line and the
// tests take them from here; the browser's twin is assets/ahp/ext.ts.
//
// Like package ahp it is pure: the standard library and ahp only, no I/O.
package ext

// Requests: termhost's extension commands (AHP leaves the x- prefix to
// implementations). Each has its params and result in schema.json.
const (
	// MethodScreen is a terminal's current screen as text, from the
	// server's screen model, for previews: ahp.ChannelParams → ScreenResult.
	// Same access as subscribe.
	MethodScreen = "x-termhost/screen"
	// MethodPresence lists who is on every terminal the caller may see
	// (params ignored) → PresenceResult, for a client that does not
	// subscribe to them (termhost ls). Subscribers get NotifyPresence.
	MethodPresence = "x-termhost/presence"
	// MethodRecord starts, pauses or resumes a terminal's recording:
	// RecordParams → null. Owner only.
	MethodRecord = "x-termhost/record"
	// MethodRequestControl asks for a terminal's claim:
	// RequestControlParams → ControlResult.
	MethodRequestControl = "x-termhost/requestControl"
	// MethodAnswerControl grants or declines a pending request, from the
	// holder asked: AnswerControlParams → null.
	MethodAnswerControl = "x-termhost/answerControl"
	// MethodShareCreate creates a share link: ShareCreateParams → ShareInfo
	// with its URL (which holds the secret). Owner only, as every x-share/*.
	MethodShareCreate = "x-share/create"
	// MethodShareList lists the live share links: ShareListParams →
	// ShareListResult (without URLs).
	MethodShareList = "x-share/list"
	// MethodShareRevoke revokes a share link and closes its connections
	// (4003): ShareRevokeParams → null.
	MethodShareRevoke = "x-share/revoke"
)

// Notifications the server sends.
const (
	// NotifyPresence tells a terminal's subscribers who is on it:
	// PresenceList. It has the name of the request MethodPresence.
	NotifyPresence = MethodPresence
	// NotifyControlRequest goes to the holder's and the requester's
	// connections on a terminal when a control request is made and when it
	// ends: ControlNotice.
	NotifyControlRequest = "x-termhost/controlRequest"
	// NotifySkipped tells a connection that it fell too far behind on a
	// terminal's output and skipped ahead: SkipNotice. The redraw of the
	// screen follows as the terminal/data envelope it names, so a client
	// that ignores the notice still ends on the live screen
	// (docs/protocol.md, "Skipping ahead").
	NotifySkipped = "x-termhost/skipped"
)

// _meta keys: AHP's extension point on params, results, catalogue entries
// and actions.
const (
	// MetaPresenceID is the initialize result's key holding the
	// connection's own presence id (Member.ID), so a client finds itself in
	// a presence list.
	MetaPresenceID = "termhost/presenceId"
	// MetaSizePolicy is the initialize result's key naming the server's
	// size policy: SizeHolder or SizeSmallest.
	MetaSizePolicy = "termhost/sizePolicy"
	// MetaPublicURL is the initialize result's key holding the server's
	// public base URL (termhost serve --public-url), without a trailing
	// slash: the URL people open, which the links a client prints or
	// returns start with, also when the client itself reaches the server
	// by another address (loopback, behind the proxy). Absent when the
	// server has none: links then start with the URL the client dialled.
	MetaPublicURL = "termhost/publicUrl"
	// MetaCommand is the createTerminal key that runs a command instead of a
	// shell: "_meta": {"termhost/command": ["make", "build"]}.
	MetaCommand = "termhost/command"
	// MetaRecord is the createTerminal key that records the new terminal
	// from its start: "_meta": {"termhost/record": true}.
	MetaRecord = "termhost/record"
	// MetaRunsCommand is the catalogue entry's key (true) of a terminal
	// that runs a command instead of a shell: it reports no command lines.
	MetaRunsCommand = "termhost/runsCommand"
	// MetaRecording is the catalogue entry's key of a terminal that has a
	// recording: RecordingOn, RecordingPaused or RecordingStopped.
	MetaRecording = "termhost/recording"
	// MetaAgent is the catalogue entry's key naming the agent session that
	// last held the terminal: AgentInfo.
	MetaAgent = "termhost/agent"
	// MetaHolderAway is the catalogue entry's key (true) of a terminal
	// whose client claim names a client that left for good (past the
	// claim's grace) with nobody there to hand it to: nobody has control,
	// and the first who may act and types takes it. Gone when the claim
	// moves or its client comes back.
	MetaHolderAway = "termhost/holderAway"
	// MetaRunBy is the key of terminal/commandExecuted marking a command an
	// agent's tool call ran, or one run while a person signed in by SSO had
	// control: RunBy. AHP's reducer leaves an action's _meta out of the
	// command part it makes, so a joiner finds it in the snapshot's
	// MetaCommandMeta, never in the state.
	MetaRunBy = "termhost/runBy"
	// MetaCommandMeta is the key of a terminal snapshot's own _meta (beside
	// resource, state and fromSeq, not in the state): the _meta of the
	// terminal/commandExecuted of each command part of the state that had
	// one, by commandId: CommandMeta.
	MetaCommandMeta = "termhost/commandMeta"
)
