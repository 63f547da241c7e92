package ext

import (
	"encoding/binary"
	"errors"
	"unicode/utf8"

	"github.com/termhost/termhost/ahp"
)

// CapabilityBinaryData is the initialize capability with which a client asks
// for terminal output as binary WebSocket messages (AppendBinaryData) instead
// of JSON text: JSON must escape every ESC as \u001b, six bytes for one, and
// colourful output has one every few bytes. A client that does not send it
// gets JSON, as AHP defines. The choice belongs to the clientId: a reconnect
// keeps what its initialize asked for.
const CapabilityBinaryData = "x-termhost/binaryData"

// A binary data message is
//
//	uint32, big-endian: n, the length of the header
//	n bytes: the header, the `action` notification of the envelope with "data":""
//	the rest: the data, UTF-8
//
// The header is byte for byte what ahp.AppendEnvelope writes for the envelope
// with its data emptied, so a client decodes it as any other action frame
// and puts the rest in action.data. The data is what a JSON client decodes
// from the same envelope's JSON frame: invalid UTF-8 bytes are each replaced
// by U+FFFD, as encoding/json does, so both clients hold the same text.
const binaryHeaderLen = 4

// BinaryData reports whether env is sent as a binary data message to a
// client that asked for them: live terminal output (not a rejection, whose
// echo stays JSON like every other action).
func BinaryData(env ahp.Envelope) bool {
	return env.Action.Type == ahp.TerminalData && env.Action.Raw == nil && env.RejectionReason == ""
}

// AppendBinaryData appends the binary data message of env, which must be
// one that BinaryData accepts, to dst.
func AppendBinaryData(dst []byte, env ahp.Envelope, shape ahp.Shape) ([]byte, error) {
	if !BinaryData(env) {
		return nil, errors.New("binary data message: not terminal output")
	}
	data := env.Action.Data
	env.Action.Data = ""
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	dst, err := ahp.AppendEnvelope(dst, env, shape)
	if err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-binaryHeaderLen))
	return AppendValidUTF8(dst, data), nil
}

// DecodeBinaryData decodes a binary data message.
func DecodeBinaryData(msg []byte) (ahp.Envelope, error) {
	if len(msg) < binaryHeaderLen {
		return ahp.Envelope{}, errors.New("binary data message: shorter than its length field")
	}
	n := binary.BigEndian.Uint32(msg)
	if uint64(n) > uint64(len(msg)-binaryHeaderLen) {
		return ahp.Envelope{}, errors.New("binary data message: header longer than the message")
	}
	env, ok := ahp.DecodeDataFrame(msg[binaryHeaderLen : binaryHeaderLen+n])
	if !ok || !BinaryData(env) || env.Action.Data != "" {
		return ahp.Envelope{}, errors.New("binary data message: the header is not a terminal/data action without data")
	}
	data := msg[binaryHeaderLen+n:]
	if !utf8.Valid(data) {
		return ahp.Envelope{}, errors.New("binary data message: data is not UTF-8")
	}
	env.Action.Data = string(data)
	return env, nil
}

// AppendValidUTF8 appends s with each byte that is not part of valid UTF-8
// replaced by U+FFFD, the text encoding/json sends for s: the data of a
// binary data message, after the header AppendBinaryData writes for the
// envelope with its data emptied.
func AppendValidUTF8(dst []byte, s string) []byte {
	if utf8.ValidString(s) {
		return append(dst, s...)
	}
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}
