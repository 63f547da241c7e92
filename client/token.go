package client

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoToken is returned by ReadToken for a missing or empty token file.
var ErrNoToken = errors.New("no token")

// LocalTokenPath is where a termhost server on this machine keeps its owner
// token: $XDG_STATE_HOME/termhost/token, else ~/.local/state/termhost/token.
// getenv is os.Getenv in production.
func LocalTokenPath(getenv func(string) string) (string, error) {
	if dir := getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "termhost", "token"), nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("local token path: %w", err)
		}
	}
	return filepath.Join(home, ".local", "state", "termhost", "token"), nil
}

// ReadToken reads a token file: its first line, trimmed. A missing file or one
// with no token wraps ErrNoToken.
func ReadToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token %s: %w", path, ErrNoToken)
	}
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	line, _, _ := strings.Cut(string(data), "\n")
	tok := strings.TrimSpace(line)
	if tok == "" {
		return "", fmt.Errorf("read token %s: the file is empty: %w", path, ErrNoToken)
	}
	return tok, nil
}
