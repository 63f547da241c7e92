package handlers_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/poll"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
)

// bigRecording makes a recorded terminal whose recording is paused (its
// recorder writes no more) and grows its file to about size bytes of
// output events, with escape sequences and CRLFs for the text conversion.
func bigRecording(t *testing.T, size int, opts ...serverOption) (*testServer, string) {
	t.Helper()
	dir := t.TempDir()
	ts := newServer(t, append([]serverOption{testserver.Terminals(func(c *terminals.Config) { c.RecordDir = dir })}, opts...)...)
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	uri, _ := owner.CreateTerminal("big", "owner", map[string]any{"_meta": map[string]any{"termhost/record": true}})
	owner.MustCall("x-termhost/record", map[string]any{"channel": uri, "on": false})
	path := filepath.Join(dir, "big.cast")
	poll.Until(t, 10*time.Second, "the recording's pause marker", func() bool {
		b, _ := os.ReadFile(path)
		return strings.Contains(string(b), "recording paused")
	})
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Appendf(nil, "[9.5, \"o\", \"%s\\u001b[1mbold\\u001b[0m\\r\\n\"]\n", strings.Repeat("x", 1000))
	chunk := []byte(strings.Repeat(string(line), (1<<20)/len(line)))
	for written := 0; written < size; written += len(chunk) {
		if _, err := f.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return ts, uri
}

// TestDownloadMemoryBounded: a download of a large
// recording streams it: the server allocates a small fraction of the file
// for either format (it used to read the whole file, then parse it).
func TestDownloadMemoryBounded(t *testing.T) {
	const size = 4 << 20
	ts, _ := bigRecording(t, size)
	for _, name := range []string{"output.txt", "recording.cast"} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			resp, err := http.DefaultClient.Do(authorized(t, ts.URL+"/t/big/"+name, ownerToken))
			if err != nil {
				t.Fatal(err)
			}
			n, err := io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			runtime.ReadMemStats(&after)
			if resp.StatusCode != 200 || err != nil || n < size/2 {
				t.Fatalf("GET %s: status %d, %d bytes, %v", name, resp.StatusCode, n, err)
			}
			// Generous, as other goroutines allocate too: reading the whole
			// file alone is size bytes.
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("GET %s of a %d MiB recording allocated %.2f MiB", name, size>>20, float64(alloc)/(1<<20))
			if alloc > size/2 { // measured: 0.3 MiB (text), 0.1 MiB (cast)
				t.Errorf("GET %s of a %d MiB recording allocated %.1f MiB, want < %d MiB", name, size>>20, float64(alloc)/(1<<20), size/2>>20)
			}
		})
	}
}

// TestDownloadLimit: downloads in progress are bounded;
// one more is refused with 503 and Retry-After, and served once a slot is
// free again.
func TestDownloadLimit(t *testing.T) {
	ts, _ := bigRecording(t, 32<<20) // larger than the sockets' buffers
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	// Each body is left unread: its handler blocks on the full socket, in
	// its slot, until the body is closed.
	var open []io.Closer
	defer func() {
		for _, b := range open {
			b.Close()
		}
	}()
	for i := range handlers.MaxDownloads {
		resp, err := c.Do(authorized(t, ts.URL+"/t/big/output.txt", ownerToken))
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("download %d: %v, %v", i, resp, err)
		}
		open = append(open, resp.Body)
	}
	resp, err := c.Do(authorized(t, ts.URL+"/t/big/recording.cast", ownerToken))
	if err != nil {
		t.Fatal(err)
	}
	var body []byte
	if resp.StatusCode == http.StatusServiceUnavailable {
		body, _ = io.ReadAll(resp.Body)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "too many downloads") {
		t.Fatalf("download over the limit: status %d, Retry-After %q, body %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}
	for _, b := range open {
		b.Close()
	}
	open = nil
	poll.Until(t, 10*time.Second, "a free download slot", func() bool {
		resp, err := c.Do(authorized(t, ts.URL+"/t/big/recording.cast", ownerToken))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // the status is enough
		return resp.StatusCode == 200
	})
}

func authorized(t *testing.T, url, token string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	return req
}
