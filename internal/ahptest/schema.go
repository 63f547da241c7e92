package ahptest

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/schemacheck"
)

// validFrames holds the SHA-256 sums of frames found valid, with their version
// and method: a crowd of clients receives the same frames, and validating
// each copy again would take most of a crowd test's time under -race.
var validFrames sync.Map

// checkFrames validates every frame received against the schemas of the
// connection's version; before a version was negotiated (only pings and
// errors), against those of every version.
func (c *Client) checkFrames() {
	c.mu.Lock()
	defer c.mu.Unlock()
	versions := []string{c.version}
	if c.version == "" {
		versions = []string{"0.8.0", "1.0.0"}
	}
	for _, v := range versions {
		checker, err := schemacheck.ForVersion(v)
		if err != nil {
			c.t.Errorf("schemas for %s: %v", v, err)
			return
		}
		for _, f := range c.frames {
			var head struct {
				ID json.RawMessage `json:"id"`
			}
			_ = json.Unmarshal(f, &head)
			method := c.methods[string(head.ID)]
			key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%s\x00%s", v, method, f))
			if _, ok := validFrames.Load(key); ok {
				continue
			}
			if err := checker.Frame(f, method); err != nil {
				c.t.Errorf("frame not valid against the %s schemas: %v\n%s", v, err, truncate(f))
				continue
			}
			validFrames.Store(key, struct{}{})
		}
	}
}

// DecodeEnvelope decodes an action envelope; a rejection may carry an
// invalid action, which is kept raw with its type.
func DecodeEnvelope(params json.RawMessage) (ahp.Envelope, error) {
	var e ahp.Envelope
	if err := json.Unmarshal(params, &e); err == nil {
		return e, nil
	}
	var raw struct {
		Channel   string `json:"channel"`
		ServerSeq int64  `json:"serverSeq"`
		Origin    *ahp.Origin
		Reason    string          `json:"rejectionReason"`
		Action    json.RawMessage `json:"action"`
	}
	if err := json.Unmarshal(params, &raw); err != nil || raw.Reason == "" {
		return ahp.Envelope{}, fmt.Errorf("bad envelope %s: %v", truncate(params), err)
	}
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(raw.Action, &head)
	return ahp.Envelope{Channel: raw.Channel, ServerSeq: raw.ServerSeq, Origin: raw.Origin, RejectionReason: raw.Reason,
		Action: ahp.Action{Type: head.Type, Raw: raw.Action}}, nil
}
