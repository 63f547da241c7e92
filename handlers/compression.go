package handlers

import (
	"fmt"
	"net/http"
	"net/netip"

	"github.com/coder/websocket"
)

// Compression is whether the WebSocket endpoint negotiates permessage-deflate
// (RFC 7692) with a client that offers it.
type Compression int

const (
	// CompressionAuto compresses for clients that are not on this machine:
	// on loopback the CPU costs more than the bytes it saves.
	CompressionAuto Compression = iota
	CompressionOn
	CompressionOff
)

// ParseCompression reads "auto", "on" or "off".
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "auto":
		return CompressionAuto, nil
	case "on":
		return CompressionOn, nil
	case "off":
		return CompressionOff, nil
	}
	return 0, fmt.Errorf("compression must be auto, on or off, not %q", s)
}

func (c Compression) String() string {
	return [...]string{"auto", "on", "off"}[c]
}

// compressionMode is the AcceptOptions.CompressionMode for r. Compression
// is always without context takeover: each message is compressed with a
// flate writer borrowed from a pool, so an idle connection holds none,
// where context takeover would keep a 1.2 MB writer and a 32 KiB window
// per connection once it sent one compressed message. Auto looks at the
// client's address (behind a trusted proxy, the forwarded one: a proxy
// tunnels the frames, compressed or not, to the browser).
func (s *Server) compressionMode(r *http.Request) websocket.CompressionMode {
	switch s.cfg.Compression {
	case CompressionOn:
		return websocket.CompressionNoContextTakeover
	case CompressionOff:
		return websocket.CompressionDisabled
	}
	if ip, err := netip.ParseAddr(s.clientAddr(r)); err == nil && ip.Unmap().IsLoopback() {
		return websocket.CompressionDisabled
	}
	return websocket.CompressionNoContextTakeover
}
