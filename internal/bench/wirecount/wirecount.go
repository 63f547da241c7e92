// Package wirecount measures what crosses the wire: the bytes a client's
// connections read, WebSocket headers and compression included.
package wirecount

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"
)

// Client is an HTTP client whose connections add the bytes they read to n.
func Client(n *atomic.Int64) *http.Client {
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &conn{Conn: c, n: n}, nil
	}}}
}

// conn is a net.Conn that counts the bytes it reads.
type conn struct {
	net.Conn
	n *atomic.Int64
}

func (c *conn) Read(p []byte) (int, error) {
	k, err := c.Conn.Read(p)
	c.n.Add(int64(k))
	return k, err
}
