package shellint

import (
	"encoding/json"
	"slices"
	"testing"
	"time"
)

// TestStateResume: a processor stopped after any read and
// resumed from its State, after a JSON round trip as at an upgrade, gives
// the same events as one that saw the whole stream: ids go on, a command
// running at the cut finishes with its line and duration, cwd and title
// are not announced again.
func TestStateResume(t *testing.T) {
	const n = "nonce1"
	for _, tc := range []struct {
		name  string
		opts  Options
		reads []string
	}{
		{"strict", Options{Nonce: n, Mode: Pending}, []string{
			osc("633;A;" + n), "$ ", osc("633;B;" + n), osc("633;E;echo hi;" + n), osc("633;C;" + n), "hi\r\n",
			osc("633;D;0;" + n), osc("633;P;Cwd=/tmp;" + n), osc("0;title"), osc("633;A;" + n), "$ ",
			osc("633;E;read v;" + n), osc("633;C;" + n), "z\r\n", osc("633;D;1;" + n),
			osc("633;C;" + n), "late\r\n", osc("633;D;2;" + n),
		}},
		{"lenient 133, nested", Options{Mode: Lenient}, []string{
			osc("133;A"), "$ ", osc("133;B"), osc("133;C;cmdline_url=bash"), osc("133;A"),
			osc("133;C;cmdline_url=ls"), "x\r\n", osc("133;D;0"), osc("133;D;3"), osc("7;file://myhost/home"),
			osc("133;C"), "out\r\n", osc("133;D;0"),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			whole, _ := run(t, tc.opts, "", tc.reads, false)
			want := normalize(whole, true)
			for cut := range len(tc.reads) + 1 {
				got := resumed(t, tc.opts, tc.reads, cut)
				if g := normalize(got, true); !slices.Equal(g, want) {
					t.Fatalf("cut after read %d:\n got %q\nwant %q", cut, g, want)
				}
			}
		})
	}
}

// resumed feeds reads[:cut] to one processor and the rest to one resumed
// from its State, with the clock of run.
func resumed(t *testing.T, opts Options, reads []string, cut int) []Event {
	t.Helper()
	clk := &testClock{t: epoch}
	opts.Clock, opts.Hostname = clk, "myhost"
	p := NewProcessor(opts)
	var all []Event
	emit := func(e Event) { all = append(all, e) }
	for k, r := range reads {
		clk.t = epoch.Add(time.Duration(k) * 100 * time.Millisecond)
		if k == cut {
			b, err := json.Marshal(p.State())
			if err != nil {
				t.Fatal(err)
			}
			var st State
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			p = Resume(opts, st)
		}
		p.Write([]byte(r), emit)
	}
	return all
}
