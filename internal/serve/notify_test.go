package serve

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestNotifySystemd: a Type=notify unit hears READY and the new main pid.
func TestNotifySystemd(t *testing.T) {
	path := filepath.Join(t.TempDir(), "notify")
	sock, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer sock.Close()
	t.Setenv("NOTIFY_SOCKET", path)
	notifySystemd(slog.New(slog.DiscardHandler))
	if err := sock.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 256)
	n, err := sock.Read(buf)
	if err != nil {
		t.Fatalf("read the notification: %v", err)
	}
	if got, want := string(buf[:n]), fmt.Sprintf("READY=1\nMAINPID=%d", os.Getpid()); got != want {
		t.Errorf("notification = %q, want %q", got, want)
	}
}
