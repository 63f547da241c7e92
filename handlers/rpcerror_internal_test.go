package handlers

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"

	"github.com/termhost/termhost/ahp"
	"github.com/termhost/termhost/terminals"
)

// TestRPCErrorIsSafe: an internal error's message never
// carries the raw error (paths, errnos, internals go to the log); the
// manager's own errors keep their messages and codes.
func TestRPCErrorIsSafe(t *testing.T) {
	var logged strings.Builder
	c := &conn{log: slog.New(slog.NewTextHandler(&logged, nil))}
	cases := []struct {
		name     string
		err      error
		code     int
		want     string
		mustNot  string
		toTheLog string
	}{
		{"internal", fmt.Errorf("open /var/secret/state: %w", syscall.EACCES), ahp.CodeInternalError, "internal error", "/var/secret", "/var/secret/state"},
		{"start failure", &terminals.StartError{Program: "/bin/zsh", Err: fmt.Errorf("fork/exec: %w", syscall.ENOMEM)}, ahp.CodeInternalError,
			"internal error: cannot start /bin/zsh", "cannot allocate", "cannot allocate memory"},
		{"not found", fmt.Errorf("%w: ahp-terminal:/x", terminals.ErrNotFound), ahp.CodeNotFound, "no such terminal: ahp-terminal:/x", "", ""},
		{"exists", fmt.Errorf("%w: ahp-terminal:/x", terminals.ErrExists), ahp.CodeAlreadyExists, "terminal already exists", "", ""},
		{"invalid", fmt.Errorf("%w: bad cwd", terminals.ErrInvalid), ahp.CodeInvalidParams, "bad cwd", "", ""},
		{"limit", fmt.Errorf("%w: at most 2", terminals.ErrLimit), ahp.CodePermissionDenied, "at most 2", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			logged.Reset()
			got := c.rpcError(tc.err)
			if got.Code != tc.code || !strings.Contains(got.Message, tc.want) {
				t.Errorf("rpcError(%v) = %d %q, want %d %q", tc.err, got.Code, got.Message, tc.code, tc.want)
			}
			if tc.mustNot != "" && strings.Contains(got.Message, tc.mustNot) {
				t.Errorf("rpcError(%v) message %q leaks %q", tc.err, got.Message, tc.mustNot)
			}
			if tc.toTheLog != "" && !strings.Contains(logged.String(), tc.toTheLog) {
				t.Errorf("log %q lacks the detail %q", logged.String(), tc.toTheLog)
			}
		})
	}
	if !errors.Is(&terminals.StartError{Program: "x", Err: syscall.ENOENT}, syscall.ENOENT) {
		t.Errorf("StartError does not unwrap to its cause")
	}
}
