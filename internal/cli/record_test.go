package cli

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/recording"
)

// TestRunRecord: termhost run --record asks the server
// to record the terminal (createTerminal _meta termhost/record), prints
// where the recording is, and the recording holds the command's output and
// its exit, downloadable after the command ended.
func TestRunRecord(t *testing.T) {
	s := testserver.New(t, testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }))
	ts := &testServer{Server: s, m: s.Manager}
	code, stdout, stderr := call(t, ownerEnv(ts), "run", "--record", "--", "sh", "-c", "printf 'built \\033[32mok\\033[0m\\n'; exit 2")
	if code != 2 || !strings.Contains(stdout, "built") {
		t.Fatalf("run --record: exit %d, stdout %q, stderr %q; want 2 and the output", code, stdout, stderr)
	}
	m := regexp.MustCompile(`termhost: recording (\S+/t/\S+/recording\.cast)\n`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("run --record stderr %q names no recording", stderr)
	}
	req, _ := http.NewRequest("GET", m[1], nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", m[1], resp.StatusCode, body)
	}
	cast, err := recording.Parse(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("the recording is not asciicast v2: %v", err)
	}
	if got := cast.Output(); got != "built \x1b[32mok\x1b[0m\r\n" {
		t.Errorf("recorded output = %q, want the command's", got)
	}
	if last := cast.Events[len(cast.Events)-1]; last.Code != "m" || last.Data != "exited with code 2" {
		t.Errorf("last event = %+v, want the exit marker", last)
	}
}
