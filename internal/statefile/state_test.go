package statefile_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/termhost/termhost/internal/statefile"
)

// crashWriterEnv makes the test binary a process that saves documents in a
// loop until it is killed (TestCrashLeavesAWholeDocument).
const crashWriterEnv = "TERMHOST_STATE_CRASH_WRITER"

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashWriterEnv); dir != "" {
		saveForever(dir)
		return
	}
	goleak.VerifyTestMain(m)
}

type doc struct {
	N    int    `json:"n"`
	Fill string `json:"fill"`
}

// bigDoc is large enough (1 MiB) that a kill often lands inside a write.
func bigDoc(n int) doc { return doc{N: n, Fill: strings.Repeat(fmt.Sprint(n%10), 1<<20)} }

func saveForever(dir string) {
	f, err := statefile.Open(dir, "doc.json")
	if err != nil {
		panic(err)
	}
	for n := 1; ; n++ {
		if err := f.Save(bigDoc(n)); err != nil {
			panic(err)
		}
		fmt.Println("saved", n)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "termhost")
	f, err := statefile.Open(dir, "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	var got doc
	if found, err := f.Load(&got); found || err != nil {
		t.Fatalf("Load before any Save = %v, %v; want false, nil", found, err)
	}
	for _, want := range []doc{{N: 1, Fill: "one"}, {N: 2}} {
		if err := f.Save(want); err != nil {
			t.Fatal(err)
		}
		got = doc{}
		if found, err := f.Load(&got); !found || err != nil || got != want {
			t.Errorf("Load after Save(%+v) = %+v, %v, %v", want, got, found, err)
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("files in the state directory: %v, want only doc.json (no temporary file left)", entries)
	}
}

// Save replaces the document by renaming a new file over it, never by
// rewriting it in place: a reader (or a crash) sees the old or the new one.
func TestSaveReplacesNotRewrites(t *testing.T) {
	f, err := statefile.Open(t.TempDir(), "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Save(doc{N: 1, Fill: "old"}); err != nil {
		t.Fatal(err)
	}
	old, err := os.Open(f.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if err := f.Save(doc{N: 2, Fill: "new"}); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(old)
	if got, want := string(b), `{"n":1,"fill":"old"}`; err != nil || got != want {
		t.Errorf("the file open before the second Save reads %q, %v; want the untouched old document %q", got, err, want)
	}
}

func TestModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "termhost")
	f, err := statefile.Open(dir, "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f.Path(), []byte("{}"), 0o644); err != nil { // a mode loosened by hand
		t.Fatal(err)
	}
	if err := f.Save(doc{N: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want os.FileMode
	}{{dir, 0o700}, {f.Path(), 0o600}} {
		fi, err := os.Stat(c.path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != c.want {
			t.Errorf("mode of %s = %o, want %o", c.path, got, c.want)
		}
	}
}

func TestCorruptIsReported(t *testing.T) {
	for _, c := range []struct{ name, content string }{
		{"truncated", `{"n":1,"fill":"ab`},
		{"garbage", "\x00\x00\x00"},
		{"empty", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := statefile.Open(t.TempDir(), "doc.json")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f.Path(), []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			var got doc
			found, err := f.Load(&got)
			if found || !errors.Is(err, statefile.ErrCorrupt) || !strings.Contains(err.Error(), f.Path()) {
				t.Fatalf("Load of %q = %v, %v; want ErrCorrupt naming %s", c.content, found, err, f.Path())
			}
			aside, err := f.SetAside("corrupt")
			if err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(aside); err != nil || string(b) != c.content {
				t.Errorf("set aside %s = %q, %v; want the corrupt content", aside, b, err)
			}
			if found, err := f.Load(&got); found || err != nil {
				t.Errorf("Load after SetAside = %v, %v; want a missing document", found, err)
			}
		})
	}
}

// TestLooseDirectoryIsTightened: a state directory that
// exists open to others is made 0700, and the old mode reported.
func TestLooseDirectoryIsTightened(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	f, err := statefile.Open(dir, "doc.json")
	if err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o700 || f.Loosened != 0o755 {
		t.Errorf("Open of a 0755 directory: mode now %v, Loosened %v; want 0700 and 0755", fi.Mode().Perm(), f.Loosened)
	}
	if f, _ := statefile.Open(dir, "doc.json"); f.Loosened != 0 {
		t.Errorf("Open of a private directory: Loosened %v, want 0", f.Loosened)
	}
	file := filepath.Join(t.TempDir(), "file")
	_ = os.WriteFile(file, nil, 0o600)
	if _, err := statefile.Open(file, "doc.json"); err == nil {
		t.Errorf("Open of a file as the directory: no error")
	}
}

// A writer killed at any moment leaves a whole document: the last one saved
// or the next, never part of one.
func TestCrashLeavesAWholeDocument(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for kill := range 4 {
		t.Run(fmt.Sprint("after save ", kill+1), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), crashWriterEnv+"="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			lines := bufio.NewScanner(out)
			for range kill + 1 {
				if !lines.Scan() {
					t.Fatalf("the writer stopped: %v", cmd.Wait())
				}
			}
			_ = cmd.Process.Kill() // while it writes the next document
			_ = cmd.Wait()
			f, err := statefile.Open(dir, "doc.json")
			if err != nil {
				t.Fatal(err)
			}
			var got doc
			if found, err := f.Load(&got); !found || err != nil {
				t.Fatalf("Load after the crash = %v, %v; want a whole document", found, err)
			}
			if want := bigDoc(got.N); got.N < kill+1 || got != want {
				t.Errorf("document after a kill following save %d: n=%d, fill intact %v", kill+1, got.N, got == want)
			}
		})
	}
}
