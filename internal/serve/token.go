package serve

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/renameio/v2"

	"github.com/termhost/termhost/client"
	"github.com/termhost/termhost/internal/statefile"
)

// tokenFileName is the owner token's file in the state directory: kept
// across restarts, so that a restart signs nobody out.
const tokenFileName = "token"

// ownerToken is --token / $TERMHOST_TOKEN, else --token-file, else the
// token kept in the state directory; a new random one when there is none
// yet or --new-token asks for it (saved by saveToken once the server
// starts: a new token signs everyone out).
func (o *serveOptions) ownerToken(stateDir string) (tok string, fresh bool, err error) {
	if o.newToken && (o.token != "" || o.tokenFile != "") {
		return "", false, fmt.Errorf("--new-token makes a random token: it cannot be combined with --token or --token-file")
	}
	tok = o.token
	if tok == "" && o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return "", false, fmt.Errorf("--token-file: %w", err)
		}
		tok = strings.TrimSpace(string(b))
	}
	if tok == "" && !o.newToken {
		path := filepath.Join(stateDir, tokenFileName)
		switch saved, err := client.ReadToken(path); {
		case err == nil && len(saved) >= 16:
			return saved, false, nil
		case err == nil:
			return "", false, fmt.Errorf("the saved owner token in %s is too short: remove the file or start with --new-token", path)
		case !errors.Is(err, client.ErrNoToken):
			return "", false, fmt.Errorf("saved owner token: %w", err)
		}
	}
	if tok == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			return "", false, fmt.Errorf("random token: %w", err)
		}
		return base64.RawURLEncoding.EncodeToString(b), true, nil
	}
	if len(tok) < 16 {
		return "", false, fmt.Errorf("the owner token must have at least 16 characters")
	}
	return tok, false, nil
}

// saveToken keeps a new random owner token in the state directory (0600,
// replaced atomically) so that the next start uses it again.
func (s serveSetup) saveToken(log *slog.Logger) error {
	if !s.freshToken {
		return nil
	}
	loose, err := statefile.Private(s.stateDir)
	if err != nil {
		return err
	}
	if loose != 0 {
		log.Warn("the state directory was open to other users: made it private (0700)", "path", s.stateDir, "was", loose.String())
	}
	path := filepath.Join(s.stateDir, tokenFileName)
	_, err = os.Stat(path)
	replaced := err == nil
	if err := renameio.WriteFile(path, []byte(s.token+"\n"), 0o600, renameio.WithStaticPermissions(0o600)); err != nil {
		return fmt.Errorf("save the owner token: %w", err)
	}
	// Whether anyone is signed out by it is the sign-in state's to say
	// (auth.Store.Restore): only when there were sessions or share links.
	if replaced {
		log.Info("a new owner token replaced the saved one", "path", path)
	} else {
		log.Info("a new owner token was made and saved", "path", path)
	}
	return nil
}
