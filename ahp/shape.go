package ahp

import (
	"bytes"
	"encoding/json"
)

// Shape selects the wire form of terminal states, catalogue entries and session
// claims, which changed in protocol 0.9.0.
type Shape int

const (
	// Current is the ≥ 0.9.0 shape: lifecycle objects, session claims with chat.
	Current Shape = iota
	// Legacy is the ≤ 0.8.x shape: optional exitCode, no lifecycle, no chat.
	Legacy
)

// shaped is implemented by values whose JSON depends on the Shape.
type shaped interface {
	wire(Shape) any
}

// Marshal encodes v as JSON in the given shape. Values that do not depend on the
// shape are encoded as encoding/json would, without HTML escaping.
func Marshal(v any, shape Shape) ([]byte, error) {
	if s, ok := v.(shaped); ok {
		v = s.wire(shape)
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
