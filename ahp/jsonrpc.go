package ahp

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Message is any JSON-RPC 2.0 message as received. ID is the raw id (nil when the
// key is absent, "null" when it was null); a message with a Method and no ID is a
// notification.
type Message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

// MarshalJSON keeps "result" present on success responses even when it is null.
func (m Message) MarshalJSON() ([]byte, error) {
	type plain Message
	if m.Method == "" && m.Error == nil && m.ID != nil {
		result := m.Result
		if result == nil {
			result = json.RawMessage("null")
		}
		return Marshal(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}{m.JSONRPC, m.ID, result}, Current)
	}
	return Marshal(plain(m), Current)
}

// IsNotification reports whether m is a notification (a method and no id key).
func (m *Message) IsNotification() bool { return m.Method != "" && m.ID == nil }

// Errors returned by DecodeMessage; both map to a JSON-RPC error code.
var (
	ErrParse          = errors.New("parse error")
	ErrInvalidRequest = errors.New("invalid request")
)

// DecodeMessage parses one inbound frame. It returns ErrParse for bytes that are
// not JSON and ErrInvalidRequest for JSON that is not a single JSON-RPC 2.0
// request or notification object (arrays, wrong version, missing method, an id
// that is not a number or string).
func DecodeMessage(frame []byte) (*Message, error) {
	if !json.Valid(frame) {
		return nil, ErrParse
	}
	trimmed := bytes.TrimLeft(frame, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, ErrInvalidRequest
	}
	var m Message
	if err := json.Unmarshal(frame, &m); err != nil {
		return nil, ErrInvalidRequest
	}
	if m.JSONRPC != JSONRPCVersion || m.Method == "" {
		return &m, ErrInvalidRequest
	}
	if m.ID != nil {
		switch m.ID[0] {
		case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		default:
			return &m, ErrInvalidRequest
		}
	}
	if m.Params != nil && (len(m.Params) == 0 || (m.Params[0] != '{' && string(m.Params) != "null")) {
		return &m, ErrInvalidRequest
	}
	return &m, nil
}

// ResponseID returns the id to answer with: the request's id, or null.
func ResponseID(m *Message) json.RawMessage {
	if m == nil || m.ID == nil {
		return json.RawMessage("null")
	}
	return m.ID
}

// EncodeResult encodes a success response. result is marshalled with shape.
func EncodeResult(id json.RawMessage, result any, shape Shape) ([]byte, error) {
	raw := []byte("null")
	if result != nil {
		var err error
		if raw, err = Marshal(result, shape); err != nil {
			return nil, err
		}
	}
	if id == nil {
		return Marshal(Message{JSONRPC: JSONRPCVersion, Result: raw}, Current)
	}
	// What Marshal(Message{…}) writes, without encoding the result twice more.
	b := make([]byte, 0, len(raw)+len(id)+40)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	var err error
	if b, err = appendCompact(b, id); err != nil {
		return nil, err
	}
	b = append(b, `,"result":`...)
	b = append(b, raw...)
	return append(b, '}'), nil
}

// appendCompact appends a raw JSON value as encoding/json embeds a
// json.RawMessage: validated, insignificant space removed.
func appendCompact(dst, raw []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EncodeError encodes an error response.
func EncodeError(id json.RawMessage, e *Error) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, err := Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *Error          `json:"error"`
	}{JSONRPCVersion, id, e}, Current)
	if err != nil { // only if Data is unmarshalable: a programmer error
		panic(err)
	}
	return b
}

// EncodeNotification encodes a server → client notification.
func EncodeNotification(method string, params any, shape Shape) ([]byte, error) {
	raw, err := Marshal(params, shape)
	if err != nil {
		return nil, err
	}
	return appendNotification(make([]byte, 0, len(raw)+len(method)+40), method, raw), nil
}

// appendNotification writes what Marshal(Message{Method: method, Params: raw})
// writes; raw is compact JSON from Marshal.
func appendNotification(dst []byte, method string, raw []byte) []byte {
	dst = append(dst, `{"jsonrpc":"2.0","method":`...)
	dst = AppendString(dst, method)
	dst = append(dst, `,"params":`...)
	dst = append(dst, raw...)
	return append(dst, '}')
}
