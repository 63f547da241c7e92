package ahp

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Bounds of client-supplied strings. A server keeps many of them for a long
// time (titles and claims in terminal state and the replay ring, clientIds for
// reconnect), so each is capped well above any real use and far below what a
// 1 MiB frame could carry. Requests over a bound fail with -32602; dispatched
// actions over a bound are rejected.
const (
	MaxClientID   = 256      // clientId of initialize and reconnect
	MaxClaimField = 256      // each id of a claim: clientId, session, chat, turnId, toolCallId
	MaxTitle      = 1024     // terminal/titleChanged title, createTerminal name
	MaxURI        = 2048     // channel URIs, subscriptions, createTerminal cwd
	MaxMeta       = 16 << 10 // encoded _meta (and initialize capabilities)
	MaxShortField = 256      // clientInfo name/version/title, locale, protocol versions
	MaxListItems  = 1024     // protocolVersions, subscriptions, cursors
)

// checkLen fails when a string is longer than limit bytes.
func checkLen(field, s string, limit int) error {
	if len(s) > limit {
		return fmt.Errorf("%s is longer than %d bytes", field, limit)
	}
	return nil
}

func checkMeta(field string, raw json.RawMessage) error {
	if len(raw) > MaxMeta {
		return fmt.Errorf("%s is larger than %d bytes", field, MaxMeta)
	}
	return nil
}

func checkURIs(field string, uris []string) error {
	if len(uris) > MaxListItems {
		return fmt.Errorf("%s has more than %d entries", field, MaxListItems)
	}
	for _, u := range uris {
		if err := checkLen(field+" entry", u, MaxURI); err != nil {
			return err
		}
	}
	return nil
}

// CheckLimits checks the bounds of a claim's ids.
func (c Claim) CheckLimits() error {
	for _, f := range []struct{ name, v string }{
		{"claim clientId", c.ClientID}, {"claim session", c.Session}, {"claim chat", c.Chat},
		{"claim turnId", c.TurnID}, {"claim toolCallId", c.ToolCallID},
	} {
		if err := checkLen(f.name, f.v, MaxClaimField); err != nil {
			return err
		}
	}
	return nil
}

// CheckLimits checks the bounds of the strings a client may dispatch in an
// action (a server's own actions are not bounded here: a shell's output is
// bounded by the scrollback instead).
func (a Action) CheckLimits() error {
	switch a.Type {
	case TerminalTitleChanged:
		return checkLen("title", a.Title, MaxTitle)
	case TerminalClaimed:
		return a.Claim.CheckLimits()
	}
	return nil
}

// CheckChannel checks the bound of a channel URI a client sent.
func CheckChannel(uri string) error { return checkLen("channel", uri, MaxURI) }

// MaxLogString is how much of a client-supplied string goes into a log line.
const MaxLogString = 128

// Clip cuts a client-supplied string to MaxLogString bytes (at a rune
// boundary) followed by "…", so that no client can write megabytes into the
// server's log.
func Clip(s string) string {
	if len(s) <= MaxLogString {
		return s
	}
	return Truncate(s, MaxLogString) + "…"
}

// Truncate cuts s to at most limit bytes at a character boundary.
func Truncate(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}
