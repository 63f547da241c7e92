package serve

import (
	"os"
	"strings"
	"testing"

	"github.com/termhost/termhost/handlers"
	"github.com/termhost/termhost/internal/bench"
)

// TestBenchServeFlags: the flags termhost bench starts `termhost serve`
// with are serve's own and valid: a kernel-chosen loopback port without
// authentication, the bench's shell and scrollback, and compression on so
// that the bench's compressed run gets it on loopback.
func TestBenchServeFlags(t *testing.T) {
	dir := t.TempDir()
	o := serveOptions{}
	args := bench.ServeFlags("/bin/bash", dir, false, 2<<20)
	if err := o.flags().Parse(args); err != nil {
		t.Fatalf("serve flags %q: %v", args, err)
	}
	setup, err := o.validate()
	if err != nil {
		t.Fatalf("serve flags %q: validate: %v", args, err)
	}
	if !setup.addr.IP.IsLoopback() || setup.addr.Port != 0 || o.authMode != "none" || o.shell != "/bin/bash" ||
		o.cwd != dir || o.shellIntegration != "off" || int64(o.scrollback) != 2<<20 || setup.compression != handlers.CompressionOn {
		t.Errorf("serve flags %q: got %+v, setup %+v", args, o, setup)
	}
}

// TestServeCompressionFlag: --compression takes auto (the default), on or
// off, and refuses anything else before serving.
func TestServeCompressionFlag(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		want    handlers.Compression
		wantErr bool
	}{
		{args: nil, want: handlers.CompressionAuto},
		{args: []string{"--compression=auto"}, want: handlers.CompressionAuto},
		{args: []string{"--compression=on"}, want: handlers.CompressionOn},
		{args: []string{"--compression=off"}, want: handlers.CompressionOff},
		{args: []string{"--compression=yes"}, wantErr: true},
	} {
		t.Run(strings.Join(append([]string{"args"}, tc.args...), " "), func(t *testing.T) {
			o := serveOptions{}
			if err := o.flags().Parse(append(tc.args, "--state-dir="+t.TempDir())); err != nil {
				t.Fatal(err)
			}
			setup, err := o.validate()
			switch {
			case tc.wantErr && (err == nil || !strings.Contains(err.Error(), "--compression")):
				t.Errorf("%q: err = %v, want a --compression error", tc.args, err)
			case !tc.wantErr && (err != nil || setup.compression != tc.want):
				t.Errorf("%q: compression %v, err %v; want %v", tc.args, setup.compression, err, tc.want)
			}
		})
	}
}

// TestBenchHostileServeFlags: the flags of the server the hostile row
// starts are serve's own and valid: a loopback port, the owner token from
// the bench's file, --auth proxy trusting only loopback, with the bench's
// people as viewers (never owners), and no compression or TLS.
func TestBenchHostileServeFlags(t *testing.T) {
	dir := t.TempDir()
	tokenFile := dir + "/token"
	if err := os.WriteFile(tokenFile, []byte("0123456789abcdef0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := serveOptions{}
	args := bench.HostileServeFlags("/bin/bash", dir, true, 1<<20, tokenFile)
	if err := o.flags().Parse(args); err != nil {
		t.Fatalf("serve flags %q: %v", args, err)
	}
	setup, err := o.validate()
	if err != nil {
		t.Fatalf("serve flags %q: validate: %v", args, err)
	}
	roles, err := o.roles()
	if err != nil {
		t.Fatal(err)
	}
	r := roles.Roles()
	loopbackOnly := len(setup.proxies) > 0
	for _, p := range setup.proxies {
		loopbackOnly = loopbackOnly && p.Addr().IsLoopback() && p.IsSingleIP()
	}
	if !setup.addr.IP.IsLoopback() || setup.addr.Port != 0 || o.authMode != "proxy" || setup.token != "0123456789abcdef0123456789abcdef" ||
		!loopbackOnly || o.identityHeader != bench.HostileIdentityHeader || o.shell != "/bin/bash" || o.cwd != dir || setup.tls != nil {
		t.Errorf("serve flags %q: got %+v, setup %+v", args, o, setup)
	}
	if got := r.RoleOf("hostile0@hostile.bench.invalid"); got != "viewer" || len(r.Owners) != 0 || len(r.Drivers) != 0 {
		t.Errorf("roles %+v: a hostile person is %q, want only viewers", r, got)
	}
}
