package handlers

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
)

// Buffers a WebSocket keeps for its whole life. net/http hands a hijacker
// 4 KiB each way, which coder/websocket keeps: 8 KiB in every idle tab.
// Smaller ones cost nothing on a flood: bufio reads and writes a payload
// larger than its buffer directly, so an output frame takes two writes
// (header and first bytes, then the rest) with either size; only frames
// between the sizes take two instead of one.
const (
	wsReadBuffer  = 512  // inbound: keystrokes and requests, mostly small
	wsWriteBuffer = 1024 // outbound: an echo's frame fits
)

// leanBuffers is a ResponseWriter whose Hijack returns smaller buffers.
type leanBuffers struct{ http.ResponseWriter }

func (w leanBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w leanBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// Bytes the client sent after its request (an early frame) stay
	// buffered: coder/websocket takes what is buffered, then reads the conn.
	var br *bufio.Reader
	if n := brw.Reader.Buffered(); n > 0 {
		early, _ := brw.Reader.Peek(n)
		br = bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(early)), conn), max(n, wsReadBuffer))
		if _, err := br.Peek(n); err != nil {
			return nil, nil, err
		}
	} else {
		br = bufio.NewReaderSize(conn, wsReadBuffer)
	}
	// net/http has flushed the 101 response: brw.Writer is empty.
	return conn, bufio.NewReadWriter(br, bufio.NewWriterSize(conn, wsWriteBuffer)), nil
}
