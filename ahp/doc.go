// Package ahp is the Agent Host Protocol as far as a terminal server needs it:
// JSON-RPC messages, method params and results, action envelopes, the root and
// terminal channel states and their pure reducers, error codes and version
// negotiation.
//
// It uses the standard library only and does no I/O. One internal model serves
// every protocol version; the wire shape of terminal states, catalogue entries and
// session claims is chosen per connection with a Shape when encoding
// (legacy ≤ 0.8: exitCode; current ≥ 0.9: lifecycle and claim chat).
package ahp

// Well-known URIs and schemes.
const (
	RootURI        = "ahp-root://"
	TerminalScheme = "ahp-terminal:"
	JSONRPCVersion = "2.0"
)
