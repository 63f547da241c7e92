package handlers_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/internal/testserver"
	"github.com/termhost/termhost/terminals"
	"github.com/termhost/termhost/terminals/recording"

	"github.com/termhost/termhost/internal/poll"
)

type download struct {
	status      int
	contentType string
	disposition string
	body        string
}

func getDownload(t *testing.T, url, token string) download {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return download{resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Disposition"), string(body)}
}

// waitDownload polls url until ok accepts the download: the recorder
// writes in the background.
func waitDownload(t *testing.T, url, token string, ok func(download) bool) download {
	t.Helper()
	d, done := poll.Last(poll.Short, func() (download, bool) { d := getDownload(t, url, token); return d, ok(d) })
	if !done {
		t.Fatalf("GET %s: last got %d %q", url, d.status, d.body)
	}
	return d
}

// TestRecordingDownloads: recording.cast and output.txt
// follow the terminal's access rules, and x-termhost/record is the
// owner's toggle, shown in the catalogue's _meta.
func TestRecordingDownloads(t *testing.T) {
	ts := newServer(t, testserver.Terminals(func(c *terminals.Config) { c.RecordDir = t.TempDir() }))
	owner := ts.dial(t)
	owner.Initialize("1.0.0", "owner")
	rec, _ := owner.CreateTerminal("rec", "owner", map[string]any{"_meta": map[string]any{"termhost/record": true}})
	plain, _ := owner.CreateTerminal("plain", "owner", nil)
	// Input typed before the first prompt waits for it (the prompt may be in
	// the subscribe snapshot, not in the output frames).
	owner.Dispatch(rec, ahp.Action{Type: ahp.TerminalInput, Data: "printf 'hel''lo \\033[1mbold\\033[0m\\n'\r"})
	owner.Dispatch(plain, ahp.Action{Type: ahp.TerminalInput, Data: "printf 'scroll''back \\033[4mline\\033[0m\\n'\r"})
	owner.WaitOutput(rec, "hello \x1b[1mbold")
	owner.WaitOutput(plain, "scrollback \x1b[4mline")
	_, viewerRec := share(t, owner, rec, "viewer", 0)
	_, driverRec := share(t, owner, rec, "driver", 0)
	_, viewerPlain := share(t, owner, plain, "viewer", 0)

	base := ts.URL + "/t/"
	cast := waitDownload(t, base+"rec/recording.cast", ownerToken, func(d download) bool {
		return strings.Contains(d.body, "hello")
	})
	if cast.contentType != "application/x-asciicast" || cast.disposition != `attachment; filename=rec.cast` {
		t.Errorf("recording.cast headers: got %q, %q", cast.contentType, cast.disposition)
	}
	parsed, err := recording.Parse(strings.NewReader(cast.body))
	if err != nil {
		t.Fatalf("recording.cast is not asciicast v2: %v", err)
	}
	if !strings.Contains(parsed.Output(), "hello \x1b[1mbold\x1b[0m") {
		t.Errorf("recorded output %q lacks the command's output", parsed.Output())
	}

	for _, tc := range []struct {
		name, path, token string
		status            int
		body              string // contained in the body, when 200
	}{
		{"owner, cast", "rec/recording.cast", ownerToken, 200, `"version":2`},
		{"owner, text", "rec/output.txt", ownerToken, 200, "hello bold\n"},
		{"viewer of the terminal, cast", "rec/recording.cast", viewerRec, 200, `"version":2`},
		{"viewer of the terminal, text", "rec/output.txt", viewerRec, 200, "hello bold\n"},
		{"driver of the terminal, cast", "rec/recording.cast", driverRec, 200, `"version":2`},
		{"viewer of another terminal, cast", "rec/recording.cast", viewerPlain, 403, ""},
		{"viewer of another terminal, text", "rec/output.txt", viewerPlain, 403, ""},
		{"no credentials, cast", "rec/recording.cast", "", 401, ""},
		{"no credentials, text", "rec/output.txt", "", 401, ""},
		{"wrong token", "rec/output.txt", "wrong-token-wrong-token", 401, ""},
		{"unknown terminal", "nope/output.txt", ownerToken, 404, ""},
		{"no recording, cast", "plain/recording.cast", ownerToken, 404, ""},
		{"no recording, text is the scrollback", "plain/output.txt", viewerPlain, 200, "scrollback line\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := getDownload(t, base+tc.path, tc.token)
			if d.status != tc.status {
				t.Fatalf("GET %s: status %d, want %d (body %q)", tc.path, d.status, tc.status, d.body)
			}
			if tc.status == 200 && !strings.Contains(d.body, tc.body) {
				t.Errorf("GET %s: body %q, want it to contain %q", tc.path, d.body, tc.body)
			}
			if strings.HasSuffix(tc.path, ".txt") && tc.status == 200 && strings.Contains(d.body, "\x1b") {
				t.Errorf("GET %s: escape sequences left in %q", tc.path, d.body)
			}
		})
	}

	// The toggle: owner only, shown in the catalogue.
	owner.MustCall("x-termhost/record", map[string]any{"channel": plain, "on": true})
	owner.WaitAction("catalogue shows the recording", func(e ahp.Envelope) bool {
		if e.Action.Type != ahp.RootTerminalsChanged {
			return false
		}
		for _, info := range e.Action.Terminals {
			if info.Resource == plain && bytes.Contains(info.Meta, []byte(`"termhost/recording":"recording"`)) {
				return true
			}
		}
		return false
	})
	if d := getDownload(t, base+"plain/recording.cast", ownerToken); d.status != 200 {
		t.Errorf("recording.cast once recording: status %d", d.status)
	}
	owner.CallErr("x-termhost/record", map[string]any{"channel": ahp.TerminalURI("nope"), "on": true}, ahp.CodeNotFound)
	owner.CallErr("x-termhost/record", map[string]any{"channel": plain}, ahp.CodeInvalidParams)
	viewer := ts.dial(t, "Authorization", "Bearer "+viewerPlain)
	viewer.Initialize("1.0.0", "viewer", plain)
	viewer.CallErr("x-termhost/record", map[string]any{"channel": plain, "on": false}, ahp.CodePermissionDenied)
}
