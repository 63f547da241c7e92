package ahptest

import (
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
)

func ownerClient(t *testing.T) *Client {
	t.Helper()
	s := testserver.New(t)
	c := MustDial(t, "ws"+strings.TrimPrefix(s.URL, "http")+"/ws", Options{Header: map[string][]string{"Authorization": {"Bearer " + s.Token}}})
	c.Initialize("1.0.0", "keepalive")
	return c
}

// runKeepalive runs keepalive until the test stops it or it returns; the
// returned channel is closed when it has returned.
func runKeepalive(t *testing.T, c *Client, pingAfter, dropAfter time.Duration) (stop chan struct{}, done chan struct{}) {
	stop, done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		keepalive(c, stop, pingAfter, dropAfter)
	}()
	t.Cleanup(func() {
		select {
		case <-stop:
		default:
			close(stop)
		}
		<-done
	})
	return stop, done
}

// TestKeepalivePings: after pingAfter of silence the keepalive pings, the
// server answers, and the answer resets the silence, so the socket stays up.
func TestKeepalivePings(t *testing.T) {
	c := ownerClient(t)
	stop, done := runKeepalive(t, c, 20*time.Millisecond, time.Hour)
	for range 2 { // two answers: the silence was reset and counted again
		c.WaitFrame("a ping answer", func(m *ahp.Message, i int) bool {
			if m.Method != "" || c.methods[string(m.ID)] != ahp.MethodPing || i < c.cursor {
				return false
			}
			c.cursor = i + 1
			return true
		})
	}
	if s := c.Silence(); s >= time.Hour {
		t.Errorf("Silence() = %v after a ping answer", s)
	}
	close(stop)
	<-done
	if _, errResp := c.Call(ahp.MethodPing, map[string]any{"channel": ahp.RootURI}); errResp != nil {
		t.Errorf("ping after the keepalive stopped: %v, want the socket still open", errResp)
	}
}

// TestKeepaliveDrops: after dropAfter of silence the keepalive drops the
// socket, as VS Code does, and returns.
func TestKeepaliveDrops(t *testing.T) {
	c := ownerClient(t)
	_, done := runKeepalive(t, c, 20*time.Millisecond, 20*time.Millisecond)
	if err := c.WaitClosed(); err == nil {
		t.Error("WaitClosed = nil, want why the keepalive dropped the socket")
	}
	<-done
}

func TestTruncate(t *testing.T) {
	long := strings.Repeat("x", 700)
	tests := []struct {
		name, in, want string
	}{
		{"short frame kept", `{"a":1}`, `{"a":1}`},
		{"600 bytes kept", long[:600], long[:600]},
		{"longer cut with an ellipsis", long, long[:600] + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := truncate([]byte(tt.in)); got != tt.want {
				t.Errorf("truncate(%d bytes) = %d bytes %q…, want %d bytes", len(tt.in), len(got), got[:min(len(got), 20)], len(tt.want))
			}
		})
	}
}
