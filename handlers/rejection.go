package handlers

import (
	"encoding/json"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/schemacheck"
)

// echoable prepares a decoded server-only action (terminal/data,
// terminal/exited, …), which is always rejected, for its rejection envelope:
// it is echoed as dispatched (AHP's "the same action") when that envelope
// validates against the official schema of the receiver's protocol version;
// otherwise it becomes an unknown action, for which the rejection carries
// the channel's no-op (docs/protocol.md, "Rejections"). Only the dispatcher
// receives it.
func (c *conn) echoable(uri string, a ahp.Action, raw json.RawMessage) ahp.Action {
	if !a.Known() || ahp.ClientDispatchable(a.Type) {
		return a
	}
	stub := rawAction(raw)
	check, err := schemacheck.New(c.shape)
	if err != nil {
		c.log.Warn("rejection echo: schemas", "err", err)
		return stub
	}
	env := ahp.Envelope{Channel: uri, Action: a, ServerSeq: 1, Origin: &ahp.Origin{ClientID: c.clientID}, RejectionReason: "x"}
	frame, err := ahp.EncodeEnvelope(env, c.shape)
	if err != nil || check.Frame(frame, "") != nil {
		return stub
	}
	return a
}
