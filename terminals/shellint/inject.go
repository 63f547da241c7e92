package shellint

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

//go:embed scripts/bash.sh scripts/fish.fish scripts/zsh
var scripts embed.FS

// Environment variables shared with the scripts. All AHPSH_* variables are
// removed by the scripts before any user file runs. The nonce itself is not
// among them: unset or not, a process's initial environment stays readable
// in /proc/<pid>/environ. It travels in a file the script reads and empties
// with a builtin redirection (an rm would cost a process at every start);
// the caller deletes the empty file once the shell is up. The path left in
// the environment block leads to nothing afterwards.
const (
	envNonceFile = "AHPSH_NONCE_FILE"
	envInjected  = "AHPSH_INJECTED"
	envLogin     = "AHPSH_LOGIN"
	envNoHistory = "AHPSH_NO_HISTORY"
	envUserZDot  = "AHPSH_USER_ZDOTDIR"
	envUserXDG   = "AHPSH_XDG_DATA_DIRS"
)

// files maps embedded scripts to their place under the content-hash
// directory, with the shell that reads them.
var files = []struct{ src, dst, shell string }{
	{"scripts/bash.sh", "bash.sh", "bash"},
	{"scripts/zsh/zshenv", "zsh/.zshenv", "zsh"},
	{"scripts/zsh/zprofile", "zsh/.zprofile", "zsh"},
	{"scripts/zsh/zshrc", "zsh/.zshrc", "zsh"},
	{"scripts/zsh/zlogin", "zsh/.zlogin", "zsh"},
	{"scripts/fish.fish", "fish/fish/vendor_conf.d/termhost-shell-integration.fish", "fish"},
}

// Injection is how to start a shell: its argv and environment, the Mode for
// its Processor, and the nonce (empty without injection). NonceFile holds the
// nonce until the shell's script has read it and emptied it; the caller
// removes it once the shell is up (its first trusted marker), has ended, or
// did not start.
type Injection struct {
	Argv      []string
	Env       []string
	Mode      Mode
	Nonce     string
	NonceFile string
}

// Plain returns the shell without integration (--shell-integration=off,
// unknown shells, arbitrary arguments): Mode Lenient, no nonce. Inherited
// AHPSH_* variables are removed from env, except AHPSH_NO_HISTORY, which is
// the caller's request for history suppression.
func Plain(shell string, args, env []string) Injection {
	return Injection{
		Argv: append([]string{shell}, args...),
		Env:  cleanEnv(env),
		Mode: Lenient,
	}
}

// Inject prepares bash, zsh or fish to run with shell integration. dir
// is a private (0700, owned by us) per-server directory; the scripts are
// written under dir/<content hash>/ and reused across terminals. args may
// be empty or a login request (-l, --login, optionally with -i); anything
// else, or another shell, gives Plain. env is the full child environment.
//
// If the scripts cannot be written, Inject returns the Plain variant and
// the error, so the caller can log it and still start the shell.
func Inject(dir, shell string, args, env []string) (Injection, error) {
	login, ok := loginArgs(args)
	base := filepath.Base(shell)
	if !ok || (base != "bash" && base != "zsh" && base != "fish") {
		return Plain(shell, args, env), nil
	}
	root, err := writeScripts(dir, base) // checked at every start: only this shell's
	if err != nil {
		return Plain(shell, args, env), err
	}
	nonce, err := newNonce()
	if err != nil {
		return Plain(shell, args, env), err
	}
	nonceFile, err := writeNonce(dir, nonce)
	if err != nil {
		return Plain(shell, args, env), err
	}
	interactive := slices.Contains(args, "-i") || slices.Contains(args, "-il") || slices.Contains(args, "-li")
	env = cleanEnv(env)
	env = append(env, envInjected+"=1", envNonceFile+"="+nonceFile)
	var argv []string
	switch base {
	case "bash":
		// --init-file is ignored by login shells: the script imitates one.
		argv = []string{shell, "--init-file", filepath.Join(root, "bash.sh")}
		if interactive {
			argv = append(argv, "-i")
		}
		if login {
			env = append(env, envLogin+"=1")
		}
	case "zsh":
		flag := "-i"
		if login {
			flag = "-il"
		}
		argv = []string{shell, flag}
		if v, ok := lookupEnv(env, "ZDOTDIR"); ok {
			env = append(env, envUserZDot+"="+v)
		}
		env = setEnv(env, "ZDOTDIR", filepath.Join(root, "zsh"))
	case "fish":
		argv = []string{shell}
		if interactive {
			argv = append(argv, "-i")
		}
		if login {
			argv = append(argv, "-l")
		}
		data := filepath.Join(root, "fish")
		if v, ok := lookupEnv(env, "XDG_DATA_DIRS"); ok {
			env = append(env, envUserXDG+"="+v)
			if v != "" {
				data += ":" + v
			}
		}
		env = setEnv(env, "XDG_DATA_DIRS", data)
	}
	return Injection{Argv: argv, Env: env, Mode: Pending, Nonce: nonce, NonceFile: nonceFile}, nil
}

// writeNonce writes the nonce to a new 0600 file with a random name in the
// private directory dir (checked by WriteScripts) and returns its path.
func writeNonce(dir, nonce string) (string, error) {
	f, err := os.CreateTemp(dir, "nonce-*")
	if err != nil {
		return "", fmt.Errorf("shell integration nonce: %w", err)
	}
	_, err = f.WriteString(nonce + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("shell integration nonce: %w", err)
	}
	return f.Name(), nil
}

// loginArgs accepts no arguments or a plain login request.
func loginArgs(args []string) (login, ok bool) {
	for _, a := range args {
		switch a {
		case "-l", "--login", "-il", "-li":
			login = true
		case "-i":
		default:
			return false, false
		}
	}
	return login, true
}

func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("shell integration nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// cleanEnv drops inherited AHPSH_* variables except AHPSH_NO_HISTORY.
func cleanEnv(env []string) []string {
	out := make([]string, 0, len(env)+4)
	for _, kv := range env {
		if strings.HasPrefix(kv, "AHPSH_") && !strings.HasPrefix(kv, envNoHistory+"=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func lookupEnv(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

func setEnv(env []string, key, value string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, key+"=") })
	return append(env, key+"="+value)
}

// embedded holds each script of files, read from the embedded FS once:
// embed.FS.ReadFile copies, and every terminal's start needs them.
var embedded = sync.OnceValue(func() [][]byte {
	out := make([][]byte, len(files))
	for i, f := range files {
		b, err := scripts.ReadFile(f.src)
		if err != nil {
			panic("shellint: embedded script missing: " + f.src) // programmer error
		}
		out[i] = b
	}
	return out
})

// scriptsHash is the content hash naming the script directory.
var scriptsHash = sync.OnceValue(func() string {
	h := sha256.New()
	for i, f := range files {
		b := embedded()[i]
		fmt.Fprintf(h, "%s\x00%d\x00", f.dst, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
})

// WriteScripts writes the integration scripts under dir/<content hash>/ and
// returns that directory. dir must be a directory owned by us, not a
// symlink, with no group or other permissions. Files are written to a
// temporary name and renamed into place (0600); existing identical files are
// left alone, so concurrent callers and running shells are safe.
func WriteScripts(dir string) (string, error) { return writeScripts(dir, "") }

// writeScripts writes the scripts of shell (every script when empty).
func writeScripts(dir, shell string) (string, error) {
	if err := checkPrivateDir(dir); err != nil {
		return "", err
	}
	root := filepath.Join(dir, "shellint-"+scriptsHash())
	for i, f := range files {
		if shell != "" && f.shell != shell {
			continue
		}
		if err := writePrivate(root, f.dst, embedded()[i]); err != nil {
			return "", err
		}
	}
	return root, nil
}

// writePrivate writes root/rel, creating and checking private directories.
func writePrivate(root, rel string, content []byte) error {
	path := filepath.Join(root, rel)
	d := root
	if err := mkPrivateDir(d); err != nil {
		return err
	}
	if sub := filepath.Dir(rel); sub != "." {
		for _, part := range strings.Split(sub, string(filepath.Separator)) {
			d = filepath.Join(d, part)
			if err := mkPrivateDir(d); err != nil {
				return err
			}
		}
	}
	if sameContent(path, content) {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("shell integration script: %w", err)
	}
	defer os.Remove(tmp.Name()) // no-op after the rename
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("shell integration script: %w", err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("shell integration script: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("shell integration script: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("shell integration script: %w", err)
	}
	return nil
}

// sameContent reports whether the file at path holds exactly content,
// reading it in small pieces (this runs at every terminal's start; a whole
// copy of every script each time was most of a start's garbage).
func sameContent(path string, content []byte) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || fi.Size() != int64(len(content)) {
		return false
	}
	buf := compareBuffers.Get().(*[4096]byte)
	defer compareBuffers.Put(buf)
	for rest := content; ; {
		n, err := f.Read(buf[:])
		if n > len(rest) || !bytes.Equal(buf[:n], rest[:n]) {
			return false
		}
		rest = rest[n:]
		if err == io.EOF {
			return len(rest) == 0
		}
		if err != nil {
			return false
		}
	}
}

var compareBuffers = sync.Pool{New: func() any { return new([4096]byte) }}

func mkPrivateDir(d string) error {
	if err := os.Mkdir(d, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("shell integration dir: %w", err)
	}
	return checkPrivateDir(d)
}

// ErrUnsafeDir is returned when the script directory is not private.
var ErrUnsafeDir = errors.New("shell integration dir is not private")

func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("shell integration dir: %w", err)
	}
	if !fi.IsDir() || fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafeDir, dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%w: %s has mode %v", ErrUnsafeDir, dir, fi.Mode().Perm())
	}
	if !ownedByUs(fi) {
		return fmt.Errorf("%w: %s is owned by another user", ErrUnsafeDir, dir)
	}
	return nil
}
