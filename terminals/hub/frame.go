package hub

import (
	"bytes"
	"sync"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/ahp/ext"
)

// Frame is one envelope on its way to subscribers. The hub creates it under
// its lock; each connection's writer asks it for the bytes of its wire shape
// later, outside the lock. It is encoded at most once per shape (once in all
// when the encoding does not depend on the shape), and the bytes are shared
// by every subscriber with that shape.
type Frame struct {
	env    ahp.Envelope
	raw    []byte // a notification of the server's own (newRawFrame), not an envelope
	size   int
	shaped bool // the two wire shapes encode it differently
	once   [2]sync.Once
	bytes  [2][]byte
	binary struct {
		once  sync.Once
		bytes []byte
	}
}

// frameOverhead is what an envelope's frame adds to the strings it holds
// (channel, type, serverSeq, origin and JSON punctuation), roughly.
const frameOverhead = 96

// newFrame prepares env for delivery. terminal/data, the hot path, is
// counted by what it holds (its text plus overhead) and encoded later by the
// writers; any other action is small and rare: it is encoded at once and
// counted exactly.
func newFrame(env ahp.Envelope) *Frame {
	f := &Frame{env: env, shaped: shapeDependent(env.Action.Type)}
	if env.Action.Type == ahp.TerminalData && env.RejectionReason == "" {
		f.size = len(env.Action.Data) + len(env.Channel) + frameOverhead
		return f
	}
	f.size = len(f.Bytes(ahp.Current))
	return f
}

// newRawFrame is a complete notification frame, the same in every shape.
func newRawFrame(b []byte) *Frame { return &Frame{raw: b, size: len(b)} }

// Size is the frame's byte count for queue bounds and the replay budget:
// exact except for terminal/data, where JSON escapes are not counted.
func (f *Frame) Size() int { return f.size }

// Envelope is the envelope the frame carries.
func (f *Frame) Envelope() ahp.Envelope { return f.env }

// Bytes is the frame encoded in a wire shape. Safe for concurrent use.
func (f *Frame) Bytes(shape ahp.Shape) []byte {
	if f.raw != nil {
		return f.raw
	}
	i := 0
	if f.shaped && shape == ahp.Legacy {
		i = 1
	}
	f.once[i].Do(func() { f.bytes[i] = encode(f.env, shape) })
	return f.bytes[i]
}

// Binary is the frame as a binary data message (ext.AppendBinaryData) for
// the connections that asked for them, or nil when it is not terminal
// output. Safe for concurrent use.
func (f *Frame) Binary() []byte {
	if f.raw != nil || !ext.BinaryData(f.env) {
		return nil
	}
	f.binary.once.Do(func() { f.binary.bytes = encodeBinary(f.env) })
	return f.binary.bytes
}

// encodeBinary encodes a binary data message with a single copy of its
// data: the header alone goes through a scratch buffer.
func encodeBinary(env ahp.Envelope) []byte {
	data := env.Action.Data
	env.Action.Data = ""
	header := encodeWith(ext.AppendBinaryData, env, ahp.Current)
	msg := append(make([]byte, 0, len(header)+len(data)), header...)
	return ext.AppendValidUTF8(msg, data)
}

// scratch holds encoding buffers: a frame is encoded into one, then copied
// out at its exact size (queued frames hold no slack, and the escaper
// never regrows a guessed buffer).
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// maxScratch bounds the encoding buffers kept between frames.
const maxScratch = 512 << 10

func encode(env ahp.Envelope, shape ahp.Shape) []byte {
	return encodeWith(ahp.AppendEnvelope, env, shape)
}

func encodeWith(appendFrame func([]byte, ahp.Envelope, ahp.Shape) ([]byte, error), env ahp.Envelope, shape ahp.Shape) []byte {
	buf := scratch.Get().(*[]byte)
	b, err := appendFrame((*buf)[:0], env, shape)
	if err != nil {
		panic("hub: encode envelope: " + err.Error()) // our own types always encode
	}
	out := bytes.Clone(b)
	if cap(b) <= maxScratch {
		*buf = b
		scratch.Put(buf)
	}
	return out
}

func shapeDependent(actionType string) bool {
	return actionType == ahp.RootTerminalsChanged || actionType == ahp.TerminalClaimed || actionType == ""
}
