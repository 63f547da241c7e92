package audit

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func readAll(t *testing.T, path string, f Filter) []Event {
	t.Helper()
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	var out []Event
	if err := Read(file, f, func(e Event) error { out = append(out, e); return nil }); err != nil {
		t.Fatalf("Read: %v", err)
	}
	return out
}

// TestAuditLogBatches: events from many goroutines all reach the file, one
// JSON object a line, once Sync returns; Close is safe twice.
func TestAuditLogBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				l.Record(Event{Event: ControlTaken, Who: fmt.Sprintf("p%d@corp.com", g), Terminal: "terminal:/t1", Detail: fmt.Sprint(i)}) // not coalesced
			}
		}()
	}
	wg.Wait()
	l.Sync()
	if got := len(readAll(t, path, Filter{})); got != 800 {
		t.Errorf("after Sync the file has %d events, want 800", got)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	l.Record(Event{Event: Input}) // after Close: dropped, no panic
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode = %v, want 0600", st.Mode().Perm())
	}
	var nilLog *Log
	nilLog.Record(Event{Event: Input})
	nilLog.Sync()
}

// TestAuditLogReopen: after logrotate moves the file, Reopen starts a new one.
func TestAuditLogReopen(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	l.Record(Event{Event: SignIn, Who: "a@x"})
	l.Sync()
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	l.Reopen()
	l.Record(Event{Event: SignIn, Who: "b@x"})
	l.Sync()
	if got := readAll(t, path+".1", Filter{}); len(got) != 1 || got[0].Who != "a@x" {
		t.Errorf("rotated file = %+v, want a@x's sign-in only", got)
	}
	if got := readAll(t, path, Filter{}); len(got) != 1 || got[0].Who != "b@x" {
		t.Errorf("new file = %+v, want b@x's sign-in only", got)
	}
}

// TestAuditFilter answers "who typed into build at 14:03".
func TestAuditFilter(t *testing.T) {
	at := func(hm string) time.Time {
		tm, _ := time.Parse("2006-01-02 15:04", "2026-12-05 "+hm)
		return tm
	}
	events := []Event{
		{Time: at("14:02"), Event: Input, Who: "alice@corp.com", Name: "Alice", Terminal: "terminal:/t1", Title: "build", Bytes: 3},
		{Time: at("14:03"), Event: Input, Who: "bob@corp.com", Name: "Bob", Terminal: "terminal:/t1", Title: "build", Bytes: 5},
		{Time: at("14:03"), Event: Input, Who: "carol@corp.com", Terminal: "terminal:/t2", Title: "deploy", Bytes: 1},
		{Time: at("14:03"), Event: ControlTaken, Who: "bob@corp.com", Terminal: "terminal:/t1", Title: "build"},
		{Time: at("14:05"), Event: Input, Who: "alice@corp.com", Terminal: "terminal:/t1", Title: "build", Bytes: 2},
	}
	var buf bytes.Buffer
	for _, e := range events {
		b := fmt.Sprintf(`{"time":%q,"event":%q,"who":%q,"name":%q,"terminal":%q,"title":%q,"bytes":%d}`,
			e.Time.Format(time.RFC3339), e.Event, e.Who, e.Name, e.Terminal, e.Title, e.Bytes)
		buf.WriteString(b + "\n")
	}
	cases := []struct {
		name string
		f    Filter
		want []string
	}{
		{"who typed into build at 14:03", Filter{Terminal: "build", Events: []string{Input}, Since: at("14:03"), Until: at("14:04")}, []string{"bob@corp.com"}},
		{"by terminal id", Filter{Terminal: "t2"}, []string{"carol@corp.com"}},
		{"by name", Filter{Who: "alice"}, []string{"alice@corp.com"}},
		{"by pattern", Filter{Who: "*@corp.com", Events: []string{ControlTaken}}, []string{"bob@corp.com"}},
		{"everything", Filter{}, []string{"alice@corp.com", "bob@corp.com", "carol@corp.com", "bob@corp.com", "alice@corp.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			if err := Read(bytes.NewReader(buf.Bytes()), tc.f, func(e Event) error { got = append(got, e.Who); return nil }); err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("Read(%+v) = %v, want %v", tc.f, got, tc.want)
			}
		})
	}
	torn := buf.String() + `{"time":"2026-12`
	var n int
	err := Read(strings.NewReader(torn), Filter{}, func(Event) error { n++; return nil })
	if err == nil || n != len(events) {
		t.Errorf("Read of a torn trail = %d events, %v; want %d and an error naming the bad line", n, err, len(events))
	}
}
