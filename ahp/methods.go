package ahp

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Methods a terminal server answers, and the notifications it receives or sends.
const (
	MethodInitialize      = "initialize"
	MethodReconnect       = "reconnect"
	MethodPing            = "ping"
	MethodSubscribe       = "subscribe"
	MethodUnsubscribe     = "unsubscribe"
	MethodDispatchAction  = "dispatchAction"
	MethodCreateTerminal  = "createTerminal"
	MethodDisposeTerminal = "disposeTerminal"
	MethodListSessions    = "listSessions"
	MethodAuthenticate    = "authenticate"
	MethodAction          = "action"
)

// Implementation identifies a client or server.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

// InitializeParams are the params of `initialize`.
type InitializeParams struct {
	Channel              string          `json:"channel"`
	ProtocolVersions     []string        `json:"protocolVersions"`
	ClientID             string          `json:"clientId"`
	ClientInfo           *Implementation `json:"clientInfo,omitempty"`
	InitialSubscriptions []string        `json:"initialSubscriptions,omitempty"`
	Locale               string          `json:"locale,omitempty"`
	Capabilities         json.RawMessage `json:"capabilities,omitempty"`
	Meta                 json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks the required fields.
func (p InitializeParams) Validate() error {
	if p.Channel != RootURI {
		return fmt.Errorf("initialize is sent on %s", RootURI)
	}
	if len(p.ProtocolVersions) == 0 {
		return fmt.Errorf("protocolVersions is required")
	}
	if p.ClientID == "" {
		return fmt.Errorf("clientId is required")
	}
	return p.checkLimits()
}

func (p InitializeParams) checkLimits() error {
	if err := checkLen("clientId", p.ClientID, MaxClientID); err != nil {
		return err
	}
	if len(p.ProtocolVersions) > MaxListItems {
		return fmt.Errorf("protocolVersions has more than %d entries", MaxListItems)
	}
	for _, v := range p.ProtocolVersions {
		if err := checkLen("protocolVersions entry", v, MaxShortField); err != nil {
			return err
		}
	}
	if err := checkURIs("initialSubscriptions", p.InitialSubscriptions); err != nil {
		return err
	}
	if err := checkLen("locale", p.Locale, MaxShortField); err != nil {
		return err
	}
	if i := p.ClientInfo; i != nil {
		for _, f := range []struct{ name, v string }{{"clientInfo name", i.Name}, {"clientInfo version", i.Version}, {"clientInfo title", i.Title}} {
			if err := checkLen(f.name, f.v, MaxShortField); err != nil {
				return err
			}
		}
	}
	if err := checkMeta("capabilities", p.Capabilities); err != nil {
		return err
	}
	return checkMeta("_meta", p.Meta)
}

// InitializeResult is the result of `initialize`.
type InitializeResult struct {
	ProtocolVersion  string
	ServerSeq        int64
	ServerInfo       *Implementation
	Snapshots        []Snapshot
	DefaultDirectory string
	Meta             json.RawMessage // _meta: server extensions (termhost/presenceId)
}

func (r InitializeResult) wire(shape Shape) any {
	return struct {
		ProtocolVersion  string          `json:"protocolVersion"`
		ServerSeq        int64           `json:"serverSeq"`
		ServerInfo       *Implementation `json:"serverInfo,omitempty"`
		Snapshots        []any           `json:"snapshots"`
		DefaultDirectory string          `json:"defaultDirectory,omitempty"`
		Meta             json.RawMessage `json:"_meta,omitempty"`
	}{r.ProtocolVersion, r.ServerSeq, r.ServerInfo, wireSnapshots(r.Snapshots, shape), r.DefaultDirectory, r.Meta}
}

// UnsupportedVersionError is the -32005 answer with its required data.
func UnsupportedVersionError() *Error {
	return &Error{Code: CodeUnsupportedProtocolVersion, Message: "Unsupported protocol version",
		Data: map[string][]string{"supportedVersions": SupportedVersions}}
}

// ChannelParams is the params of methods that only carry a channel
// (ping, unsubscribe, disposeTerminal).
type ChannelParams struct {
	Channel string          `json:"channel"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks the bounds of the params.
func (p ChannelParams) Validate() error {
	if err := CheckChannel(p.Channel); err != nil {
		return err
	}
	return checkMeta("_meta", p.Meta)
}

// SubscribeParams are the params of `subscribe`.
type SubscribeParams struct {
	Channel  string `json:"channel"`
	Delivery *struct {
		MaxLatencyMs *int64 `json:"maxLatencyMs,omitempty"`
	} `json:"delivery,omitempty"`
	Meta json.RawMessage `json:"_meta,omitempty"`
}

// Validate checks the bounds of the params.
func (p SubscribeParams) Validate() error {
	if err := CheckChannel(p.Channel); err != nil {
		return err
	}
	return checkMeta("_meta", p.Meta)
}

// SubscribeResult is the result of `subscribe`.
type SubscribeResult struct {
	Snapshot *Snapshot
}

func (r SubscribeResult) wire(shape Shape) any {
	var snap any
	if r.Snapshot != nil {
		snap = r.Snapshot.wire(shape)
	}
	return struct {
		Snapshot any `json:"snapshot,omitempty"`
	}{snap}
}

// DispatchActionParams are the params of a `dispatchAction` notification.
// Action is kept raw so that an invalid action can still be echoed back in a
// rejection envelope.
type DispatchActionParams struct {
	Channel   string          `json:"channel"`
	ClientSeq int64           `json:"clientSeq"`
	Action    json.RawMessage `json:"action"`
}

// CreateTerminalParams are the params of `createTerminal`.
type CreateTerminalParams struct {
	Channel string          `json:"channel"`
	Claim   *Claim          `json:"claim"`
	Name    *string         `json:"name,omitempty"`
	Cwd     string          `json:"cwd,omitempty"`
	Cols    int             `json:"cols,omitempty"`
	Rows    int             `json:"rows,omitempty"`
	Meta    json.RawMessage `json:"_meta,omitempty"`
}

// UnmarshalJSON also accepts `terminal` for `channel`, which older clients
// (VS Code's before it adopted `channel`) send; `channel` wins when both are.
func (p *CreateTerminalParams) UnmarshalJSON(b []byte) error {
	type plain CreateTerminalParams
	var w struct {
		plain
		Terminal string `json:"terminal"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*p = CreateTerminalParams(w.plain)
	if p.Channel == "" {
		p.Channel = w.Terminal
	}
	return nil
}

// Validate checks the shape of the params (not whether the cwd exists).
func (p CreateTerminalParams) Validate() error {
	if err := CheckTerminalURI(p.Channel); err != nil {
		return err
	}
	if p.Claim == nil {
		return fmt.Errorf("claim is required")
	}
	if err := p.Claim.Validate(); err != nil {
		return err
	}
	if err := p.Claim.CheckLimits(); err != nil {
		return err
	}
	if p.Name != nil {
		if err := checkLen("name", *p.Name, MaxTitle); err != nil {
			return err
		}
	}
	if err := checkLen("cwd", p.Cwd, MaxURI); err != nil {
		return err
	}
	if err := checkMeta("_meta", p.Meta); err != nil {
		return err
	}
	if p.Cols < 0 || p.Rows < 0 || p.Cols > MaxDimension || p.Rows > MaxDimension {
		return fmt.Errorf("cols and rows must be between 1 and %d", MaxDimension)
	}
	return nil
}

// MaxDimension bounds terminal columns and rows.
const MaxDimension = 1000

// ListSessionsResult is the (always empty) result of `listSessions`.
type ListSessionsResult struct {
	Items      []json.RawMessage `json:"items"`
	NextCursor string            `json:"nextCursor,omitempty"`
}

// MarshalJSON emits a nil Items as the required [].
func (r ListSessionsResult) MarshalJSON() ([]byte, error) {
	type plain ListSessionsResult
	if r.Items == nil {
		r.Items = []json.RawMessage{}
	}
	return json.Marshal(plain(r))
}

// ReconnectParams are the params of `reconnect` in either form: legacy
// (LastSeenServerSeq + URI list) or per-channel cursors.
type ReconnectParams struct {
	Channel           string
	ClientID          string
	LastSeenServerSeq *int64
	Subscriptions     []string
	Cursors           []ChannelCursor // per-channel form
	PerChannel        bool
}

// ChannelCursor is one entry of the per-channel reconnect form.
type ChannelCursor struct {
	Channel           string `json:"channel"`
	LastSeenServerSeq int64  `json:"lastSeenServerSeq"`
}

// UnmarshalJSON detects the form by shape: legacy subscriptions are strings
// beside a lastSeenServerSeq, per-channel cursors are objects
// (docs/protocol.md#reconnect).
func (p *ReconnectParams) UnmarshalJSON(b []byte) error {
	var w struct {
		Channel           *string           `json:"channel"`
		ClientID          string            `json:"clientId"`
		LastSeenServerSeq *int64            `json:"lastSeenServerSeq"`
		Subscriptions     []json.RawMessage `json:"subscriptions"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	// VS Code's client sends reconnect without channel: it can only mean the
	// root, where reconnect is always sent.
	channel := RootURI
	if w.Channel != nil {
		channel = *w.Channel
	}
	*p = ReconnectParams{Channel: channel, ClientID: w.ClientID, LastSeenServerSeq: w.LastSeenServerSeq}
	for _, raw := range w.Subscriptions {
		if len(raw) > 0 && raw[0] == '{' && w.LastSeenServerSeq == nil {
			var c ChannelCursor
			if err := json.Unmarshal(raw, &c); err != nil {
				return err
			}
			p.Cursors = append(p.Cursors, c)
			p.PerChannel = true
			continue
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("subscriptions: %w", err)
		}
		p.Subscriptions = append(p.Subscriptions, s)
	}
	if p.PerChannel && len(p.Subscriptions) > 0 {
		return fmt.Errorf("subscriptions mixes strings and cursors")
	}
	return nil
}

// Validate checks the required fields.
func (p ReconnectParams) Validate() error {
	if p.Channel != RootURI {
		return fmt.Errorf("reconnect is sent on %s", RootURI)
	}
	if p.ClientID == "" {
		return fmt.Errorf("clientId is required")
	}
	if !p.PerChannel && p.LastSeenServerSeq == nil {
		return fmt.Errorf("lastSeenServerSeq is required")
	}
	if err := checkLen("clientId", p.ClientID, MaxClientID); err != nil {
		return err
	}
	if err := checkURIs("subscriptions", p.Subscriptions); err != nil {
		return err
	}
	if len(p.Cursors) > MaxListItems {
		return fmt.Errorf("subscriptions has more than %d entries", MaxListItems)
	}
	for _, c := range p.Cursors {
		if err := checkLen("subscriptions channel", c.Channel, MaxURI); err != nil {
			return err
		}
	}
	return nil
}

// ReplayResult is the legacy reconnect result when every missed action is buffered.
type ReplayResult struct {
	Actions []Envelope
	Missing []string
}

func (r ReplayResult) wire(shape Shape) any {
	actions := make([]any, len(r.Actions))
	for i, e := range r.Actions {
		actions[i] = e.wire(shape)
	}
	missing := r.Missing
	if missing == nil {
		missing = []string{}
	}
	return struct {
		Type    string   `json:"type"`
		Actions []any    `json:"actions"`
		Missing []string `json:"missing"`
	}{"replay", actions, missing}
}

// SnapshotResult is the legacy reconnect result when replay is not possible.
type SnapshotResult struct {
	Snapshots []Snapshot
}

func (r SnapshotResult) wire(shape Shape) any {
	return struct {
		Type      string `json:"type"`
		Snapshots []any  `json:"snapshots"`
	}{"snapshot", wireSnapshots(r.Snapshots, shape)}
}

// Channel recovery kinds of the per-channel reconnect result.
const (
	RecoveryReplay   = "replay"
	RecoverySnapshot = "snapshot"
	RecoveryMissing  = "missing"
)

// ChannelRecovery is one entry of the per-channel reconnect result.
type ChannelRecovery struct {
	Kind     string
	Channel  string
	Actions  []Envelope
	Snapshot *Snapshot
}

// ChannelsResult is the per-channel reconnect result.
type ChannelsResult struct {
	Channels []ChannelRecovery
}

func (r ChannelsResult) wire(shape Shape) any {
	type replay struct {
		Kind    string `json:"kind"`
		Channel string `json:"channel"`
		Actions []any  `json:"actions"`
	}
	type snapshot struct {
		Kind     string `json:"kind"`
		Channel  string `json:"channel"`
		Snapshot any    `json:"snapshot"`
	}
	type missing struct {
		Kind    string `json:"kind"`
		Channel string `json:"channel"`
	}
	items := make([]any, len(r.Channels))
	for i, c := range r.Channels {
		switch c.Kind {
		case RecoveryReplay:
			actions := make([]any, len(c.Actions))
			for j, a := range c.Actions {
				actions[j] = a.wire(shape)
			}
			items[i] = replay{c.Kind, c.Channel, actions}
		case RecoverySnapshot:
			items[i] = snapshot{c.Kind, c.Channel, c.Snapshot.wire(shape)}
		default:
			items[i] = missing{c.Kind, c.Channel}
		}
	}
	return struct {
		Channels []any `json:"channels"`
	}{items}
}

// TerminalID returns the id part of an ahp-terminal:/<id> URI, or an error for
// any other URI.
func TerminalID(uri string) (string, error) {
	rest, ok := strings.CutPrefix(uri, TerminalScheme)
	if !ok {
		return "", fmt.Errorf("channel %q is not an %s URI", uri, TerminalScheme)
	}
	id := strings.TrimPrefix(rest, "/")
	if id == "" || len(id) > 128 || strings.ContainsAny(id, "/?#\\ \t\r\n") {
		return "", fmt.Errorf("terminal URI %q must be %s/<id> with a short id", uri, TerminalScheme)
	}
	for _, r := range id {
		if r < 0x21 || r == 0x7f {
			return "", fmt.Errorf("terminal URI %q has control characters", uri)
		}
	}
	return id, nil
}

// TerminalURI returns ahp-terminal:/<id>.
func TerminalURI(id string) string { return TerminalScheme + "/" + id }
