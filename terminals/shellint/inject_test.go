package shellint

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func privateDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(d, 0o700); err != nil {
		t.Fatal(err)
	}
	return d
}

func envValue(env []string, key string) (string, bool) { return lookupEnv(env, key) }

func TestInjectArgvAndEnv(t *testing.T) {
	base := []string{"PATH=/usr/bin", "HOME=/home/u", "AHPSH_NONCE=inherited", "AHPSH_INJECTED=1", "AHPSH_NO_HISTORY=1"}
	tests := []struct {
		name      string
		shell     string
		args      []string
		env       []string
		wantMode  Mode
		wantArgv  []string // "{root}" is the script directory
		wantEnv   map[string]string
		noEnvKeys []string
	}{
		{name: "bash", shell: "/bin/bash", wantMode: Pending,
			wantArgv: []string{"/bin/bash", "--init-file", "{root}/bash.sh"},
			wantEnv:  map[string]string{"AHPSH_INJECTED": "1", "AHPSH_NO_HISTORY": "1"}, noEnvKeys: []string{"AHPSH_LOGIN"}},
		{name: "bash login", shell: "/usr/bin/bash", args: []string{"-l"}, wantMode: Pending,
			wantArgv: []string{"/usr/bin/bash", "--init-file", "{root}/bash.sh"},
			wantEnv:  map[string]string{"AHPSH_LOGIN": "1"}},
		{name: "bash login interactive", shell: "bash", args: []string{"--login", "-i"}, wantMode: Pending,
			wantArgv: []string{"bash", "--init-file", "{root}/bash.sh", "-i"},
			wantEnv:  map[string]string{"AHPSH_LOGIN": "1"}},
		{name: "zsh", shell: "/bin/zsh", wantMode: Pending,
			wantArgv: []string{"/bin/zsh", "-i"},
			wantEnv:  map[string]string{"ZDOTDIR": "{root}/zsh"}, noEnvKeys: []string{"AHPSH_USER_ZDOTDIR"}},
		{name: "zsh login with user ZDOTDIR", shell: "/bin/zsh", args: []string{"-l"}, env: []string{"ZDOTDIR=/home/u/.zsh"}, wantMode: Pending,
			wantArgv: []string{"/bin/zsh", "-il"},
			wantEnv:  map[string]string{"ZDOTDIR": "{root}/zsh", "AHPSH_USER_ZDOTDIR": "/home/u/.zsh"}},
		{name: "fish", shell: "/usr/bin/fish", wantMode: Pending,
			wantArgv: []string{"/usr/bin/fish"},
			wantEnv:  map[string]string{"XDG_DATA_DIRS": "{root}/fish"}, noEnvKeys: []string{"AHPSH_XDG_DATA_DIRS"}},
		{name: "fish login with XDG_DATA_DIRS", shell: "/usr/bin/fish", args: []string{"-l"}, env: []string{"XDG_DATA_DIRS=/usr/local/share:/usr/share"}, wantMode: Pending,
			wantArgv: []string{"/usr/bin/fish", "-l"},
			wantEnv:  map[string]string{"XDG_DATA_DIRS": "{root}/fish:/usr/local/share:/usr/share", "AHPSH_XDG_DATA_DIRS": "/usr/local/share:/usr/share"}},
		{name: "unknown shell", shell: "/bin/dash", wantMode: Lenient,
			wantArgv: []string{"/bin/dash"}, noEnvKeys: []string{"AHPSH_NONCE", "AHPSH_INJECTED"}},
		{name: "sh", shell: "/bin/sh", wantMode: Lenient, wantArgv: []string{"/bin/sh"}},
		{name: "bash with a command", shell: "/bin/bash", args: []string{"-c", "echo hi"}, wantMode: Lenient,
			wantArgv: []string{"/bin/bash", "-c", "echo hi"}, noEnvKeys: []string{"AHPSH_NONCE", "AHPSH_INJECTED"}},
		{name: "zsh with --norcs", shell: "/bin/zsh", args: []string{"--norcs"}, wantMode: Lenient, wantArgv: []string{"/bin/zsh", "--norcs"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := privateDir(t)
			inj, err := Inject(dir, tc.shell, tc.args, append(slices.Clone(base), tc.env...))
			if err != nil {
				t.Fatalf("Inject(%q, %q): %v", tc.shell, tc.args, err)
			}
			root := filepath.Join(dir, "shellint-"+scriptsHash())
			fill := func(s string) string { return strings.ReplaceAll(s, "{root}", root) }
			var wantArgv []string
			for _, a := range tc.wantArgv {
				wantArgv = append(wantArgv, fill(a))
			}
			if !slices.Equal(inj.Argv, wantArgv) || inj.Mode != tc.wantMode {
				t.Fatalf("Inject(%q, %q) = argv %q mode %v, want %q %v", tc.shell, tc.args, inj.Argv, inj.Mode, wantArgv, tc.wantMode)
			}
			for k, v := range tc.wantEnv {
				if got, ok := envValue(inj.Env, k); !ok || got != fill(v) {
					t.Errorf("env %s = %q (set %v), want %q", k, got, ok, fill(v))
				}
			}
			for _, k := range tc.noEnvKeys {
				if got, ok := envValue(inj.Env, k); ok {
					t.Errorf("env %s = %q, want unset", k, got)
				}
			}
			nonces := 0
			for _, kv := range inj.Env {
				if strings.HasPrefix(kv, "AHPSH_NONCE=") || strings.HasPrefix(kv, "AHPSH_NONCE_FILE=") {
					nonces++
				}
			}
			if tc.wantMode == Pending {
				if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(inj.Nonce) {
					t.Fatalf("nonce %q is not 32 lower-case hex digits", inj.Nonce)
				}
				// The nonce is in a private file named in the environment,
				// never in the environment itself (/proc/<pid>/environ).
				if _, ok := envValue(inj.Env, "AHPSH_NONCE"); ok {
					t.Fatalf("env has AHPSH_NONCE, want the nonce only in a file")
				}
				path, _ := envValue(inj.Env, "AHPSH_NONCE_FILE")
				if path != inj.NonceFile || filepath.Dir(path) != dir || nonces != 1 {
					t.Fatalf("env has %d AHPSH_NONCE*, AHPSH_NONCE_FILE=%q; want exactly one, the file %q in %s", nonces, path, inj.NonceFile, dir)
				}
				fi, err := os.Lstat(path)
				if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
					t.Fatalf("nonce file %s: %v, %v; want a regular 0600 file", path, fi, err)
				}
				if b, _ := os.ReadFile(path); string(b) != inj.Nonce+"\n" {
					t.Fatalf("nonce file holds %q, want %q", b, inj.Nonce+"\n")
				}
				for _, kv := range append(slices.Clone(inj.Argv), inj.Env...) {
					if strings.Contains(kv, inj.Nonce) {
						t.Fatalf("argv or env entry %q contains the nonce", kv)
					}
				}
			} else if inj.Nonce != "" || inj.NonceFile != "" || nonces != 0 {
				t.Fatalf("plain injection has nonce %q, file %q and %d AHPSH_NONCE* in env", inj.Nonce, inj.NonceFile, nonces)
			}
		})
	}
}

func TestInjectNoncesDiffer(t *testing.T) {
	dir := privateDir(t)
	a, err1 := Inject(dir, "/bin/bash", nil, nil)
	b, err2 := Inject(dir, "/bin/bash", nil, nil)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if a.Nonce == b.Nonce {
		t.Fatalf("two terminals got the same nonce %q", a.Nonce)
	}
}

func TestWriteScriptsFiles(t *testing.T) {
	dir := privateDir(t)
	root, err := WriteScripts(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Twice: existing files are kept, nothing else appears.
	if root2, err := WriteScripts(dir); err != nil || root2 != root {
		t.Fatalf("second WriteScripts = %q, %v; want %q", root2, err, root)
	}
	var got []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if fi.Mode().Perm() != 0o700 {
				t.Errorf("dir %s has mode %v, want 0700", rel, fi.Mode().Perm())
			}
			return nil
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("file %s has mode %v, want 0600", rel, fi.Mode().Perm())
		}
		got = append(got, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range files {
		want = append(want, f.dst)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("files %q, want %q", got, want)
	}
}

func TestWriteScriptsRejectsUnsafeDirs(t *testing.T) {
	base := privateDir(t)
	open := filepath.Join(base, "open")
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(base, "target")
	if err := os.Mkdir(target, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	// A symlink planted where the content-hash directory goes.
	planted := privateDir(t)
	if err := os.Symlink(target, filepath.Join(planted, "shellint-"+scriptsHash())); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{"group/world readable": open, "symlink": link, "planted symlink": planted, "file": file, "missing": filepath.Join(base, "nope")} {
		t.Run(name, func(t *testing.T) {
			inj, err := Inject(dir, "/bin/bash", nil, []string{"AHPSH_NONCE=x"})
			if err == nil {
				t.Fatalf("Inject(%s) succeeded, want an error", dir)
			}
			if name != "missing" && !errors.Is(err, ErrUnsafeDir) {
				t.Fatalf("Inject(%s) error %v, want ErrUnsafeDir", dir, err)
			}
			if inj.Mode != Lenient || inj.Nonce != "" || !slices.Equal(inj.Argv, []string{"/bin/bash"}) || len(inj.Env) != 0 {
				t.Fatalf("Inject(%s) on error = %+v, want the plain variant", dir, inj)
			}
		})
	}
}

func TestScriptsHaveNoSecrets(t *testing.T) {
	// The scripts are static: the nonce only ever comes from the file
	// named in the environment. Guard against a template slipping in.
	for _, f := range files {
		b, err := scripts.ReadFile(f.src)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "{{") {
			t.Errorf("%s looks like a template", f.src)
		}
		if !strings.Contains(string(b), "AHPSH_NONCE_FILE") && !strings.HasSuffix(f.dst, ".zprofile") && !strings.HasSuffix(f.dst, ".zlogin") && !strings.HasSuffix(f.dst, ".zshrc") {
			t.Errorf("%s does not read AHPSH_NONCE_FILE", f.src)
		}
	}
}
