package handover

import (
	"fmt"
	"net"
	"os"
	"testing"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// connPair is two connected ends, as Pair and Inherited give them.
func connPair(t *testing.T) (a, b *net.UnixConn) {
	t.Helper()
	a, f, err := Pair()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c, err := net.FileConn(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close(); _ = c.Close() })
	return a, c.(*net.UnixConn)
}

// TestDescriptorsAndMessage: descriptors (in batches past the kernel's
// per-message limit) arrive as working duplicates, in order, followed by
// the JSON message.
func TestDescriptorsAndMessage(t *testing.T) {
	for _, n := range []int{0, 1, maxBatch + 53} {
		t.Run(fmt.Sprintf("%d descriptors", n), func(t *testing.T) {
			a, b := connPair(t)
			var sent []*os.File
			var fds []int
			for range n {
				r, w, err := os.Pipe()
				if err != nil {
					t.Fatal(err)
				}
				sent = append(sent, r)
				defer r.Close()
				defer w.Close()
				fds = append(fds, int(w.Fd()))
			}
			errc := make(chan error, 1)
			go func() {
				if err := WriteFDs(a, fds); err != nil {
					errc <- err
					return
				}
				errc <- WriteJSON(a, map[string]int{"n": n})
			}()
			got, err := ReadFDs(b)
			if err != nil {
				t.Fatalf("ReadFDs: %v", err)
			}
			var msg map[string]int
			if err := ReadJSON(b, &msg); err != nil || msg["n"] != n {
				t.Fatalf("ReadJSON = %v, %v; want n=%d", msg, err, n)
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
			if len(got) != n {
				t.Fatalf("received %d descriptors, want %d", len(got), n)
			}
			for i, fd := range got {
				if _, err := unix.Write(fd, []byte{byte(i)}); err != nil {
					t.Fatalf("write to received fd %d: %v", i, err)
				}
				_ = unix.Close(fd)
				buf := make([]byte, 1)
				if _, err := sent[i].Read(buf); err != nil || buf[0] != byte(i) {
					t.Fatalf("pipe %d read %v, %v; want %d (descriptors out of order?)", i, buf, err, byte(i))
				}
			}
		})
	}
}
