package handover

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

// stage names what a re-run of this test binary does (see TestMain).
const stage = "HANDOVER_TEST_STAGE"

type testState struct {
	Pid  int    `json:"pid"`
	Keep int    `json:"keep"` // a pipe's write end kept across the exec
	Text string `json:"text"`
}

func TestMain(m *testing.M) {
	switch os.Getenv(stage) {
	case "exec": // before: write the state, exec this binary in place
		w, _ := strconv.Atoi(os.Getenv("HANDOVER_TEST_PIPE"))
		unix.CloseOnExec(w) // Exec must clear it
		f, err := Write(testState{Pid: os.Getpid(), Keep: w, Text: "über"})
		if err == nil {
			_ = os.Setenv(stage, "after")
			err = Exec(os.Args[0], os.Args, f, []int{w})
		}
		fmt.Fprintln(os.Stderr, "exec failed:", err)
		os.Exit(3)
	case "after": // after: report what arrived on the kept pipe
		var st testState
		ok, err := Inherited(&st)
		_, leaked := os.LookupEnv(EnvFD)
		msg := fmt.Sprintf("ok=%v err=%v leaked=%v samepid=%v text=%s\n", ok, err, leaked, st.Pid == os.Getpid(), st.Text)
		_, _ = unix.Write(st.Keep, []byte(msg))
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// TestExecInPlace: Exec runs the new program in the same process, which
// reads the state from the inherited memory file and still has the kept
// descriptor; the variable is gone from its environment.
func TestExecInPlace(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stage+"=exec", "HANDOVER_TEST_PIPE=3")
	cmd.ExtraFiles = []*os.File{w}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = w.Close()
	b := make([]byte, 200)
	n, _ := r.Read(b)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v, stderr %q", err, stderr.String())
	}
	if got, want := string(b[:n]), "ok=true err=<nil> leaked=false samepid=true text=über\n"; got != want {
		t.Fatalf("after the exec the program reported %q, want %q (stderr %q)", got, want, stderr.String())
	}
}

// TestExecFailure: a failed exec returns with the descriptors close-on-exec
// again.
func TestExecFailure(t *testing.T) {
	f, err := Write(map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Exec("/nonexistent/termhost", []string{"termhost"}, f, nil); err == nil {
		t.Fatal("Exec of a missing file returned no error")
	}
	flags, err := unix.FcntlInt(f.Fd(), unix.F_GETFD, 0)
	if err != nil || flags&unix.FD_CLOEXEC == 0 {
		t.Fatalf("descriptor flags after a failed exec = %#x, %v; want FD_CLOEXEC", flags, err)
	}
}

// TestProbe: the probe passes the state on descriptor 3 and wants the
// answer on standard output; a failure or a wrong answer says why.
func TestProbe(t *testing.T) {
	f, err := Write(map[string]string{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		name, script, wantErr string
	}{
		{"reads the state", `grep -q '"k":"v"' /proc/self/fd/$` + EnvFD + ` && echo probe-ok`, ""},
		{"fails", `echo broken >&2; exit 1`, "broken"},
		{"wrong answer", `echo hello`, "unexpected answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Probe("/bin/sh", []string{"-c", tc.script}, f, "probe-ok", 10*time.Second)
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Probe = %v, want error containing %q", err, tc.wantErr)
			}
		})
	}
	var back map[string]string
	if err := read(f, &back); err != nil || back["k"] != "v" {
		t.Fatalf("read = %v, %v", back, err)
	}
}
