package sso

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
)

func TestSSOIdentify(t *testing.T) {
	p := &Proxy{Header: "X-Forwarded-Email", NameHeader: "X-Forwarded-User", Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("::1/128")}}
	cases := []struct {
		name    string
		remote  string
		headers [][2]string
		want    Person
		err     error
	}{
		{"trusted", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "Alice@Corp.com"}}, Person{ID: "alice@corp.com", Name: "Alice@Corp.com"}, nil},
		{"trusted v6", "[::1]:5000", [][2]string{{"X-Forwarded-Email", "bob@corp.com"}, {"X-Forwarded-User", "Bob B"}}, Person{ID: "bob@corp.com", Name: "Bob B"}, nil},
		{"untrusted peer", "192.168.1.2:5000", [][2]string{{"X-Forwarded-Email", "alice@corp.com"}}, Person{}, ErrUntrusted},
		{"untrusted peer lookalike", "192.168.1.2:5000", [][2]string{{"x_forwarded_email", "alice@corp.com"}}, Person{}, ErrUntrusted},
		{"no header", "10.1.2.3:5000", nil, Person{}, ErrNoIdentity},
		{"two values", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "alice@corp.com"}, {"X-Forwarded-Email", "eve@corp.com"}}, Person{}, ErrAmbiguous},
		{"underscore lookalike beside", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "eve@corp.com"}, {"X_Forwarded_Email", "alice@corp.com"}}, Person{}, ErrAmbiguous},
		{"underscore alone", "10.1.2.3:5000", [][2]string{{"X_FORWARDED_EMAIL", "alice@corp.com"}}, Person{}, ErrAmbiguous},
		{"list", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "alice@corp.com, eve@corp.com"}}, Person{}, ErrMalformed},
		{"empty", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", " "}}, Person{}, ErrMalformed},
		{"control", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "a\x01b"}}, Person{}, ErrMalformed},
		{"kelvin sign refused, not mapped", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "\u212Aate@corp.test"}}, Person{Name: "\u212Aate@corp.test"}, ErrProfile},
		{"fullwidth refused", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "\uff4bate@corp.test"}}, Person{Name: "\uff4bate@corp.test"}, ErrProfile},
		{"right-to-left override refused", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "eve\u202E@corp.test"}}, Person{Name: "eve\u202E@corp.test"}, ErrProfile},
		{"non-ASCII letters kept", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "Jos\u00e9@corp.test"}}, Person{ID: "jos\u00e9@corp.test", Name: "Jos\u00e9@corp.test"}, nil},
		{"bad name falls back", "10.1.2.3:5000", [][2]string{{"X-Forwarded-Email", "c@corp.com"}, {"X-Forwarded-User", "a"}, {"X-Forwarded-User", "b"}}, Person{ID: "c@corp.com", Name: "c@corp.com"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = tc.remote
			for _, h := range tc.headers {
				r.Header[h[0]] = append(r.Header[h[0]], h[1]) // raw keys: what a server keeps for non-canonical names
			}
			got, err := p.Identify(r)
			if !errors.Is(err, tc.err) || got != tc.want {
				t.Errorf("Identify(%v from %s) = %+v, %v; want %+v, %v", tc.headers, tc.remote, got, err, tc.want, tc.err)
			}
		})
	}
}

func TestSSORoles(t *testing.T) {
	r := &Roles{Owners: []string{"alice@corp.com"}, Drivers: []string{"*@corp.com"}, Viewers: []string{"*@partner.org", "x*y*z@q"}}
	cases := []struct{ id, want string }{
		{"alice@corp.com", RoleOwner},
		{"ALICE@corp.com", RoleOwner},
		{"bob@corp.com", RoleDriver},
		{"eve@corp.com.evil.org", ""},
		{"carol@partner.org", RoleViewer},
		{"xAyBz@q", RoleViewer},
		{"mallory@elsewhere.net", ""},
		{"", ""},
		// Lookalikes that strings.ToLower or a profile's mapping would make
		// alice or a corp.com address: refused, not mapped.
		{"\u212Aate@corp.com", ""},          // KELVIN SIGN
		{"\uff41lice@corp.com", ""},         // fullwidth a
		{"alice@corp\uff0ecom", ""},         // fullwidth full stop
		{"alice@corp.com\u200b", ""},        // zero-width space
		{"A\u0301lice@corp.com", ""},        // decomposed: not what an IdP sends
		{"\u0430lice@corp.com", RoleDriver}, // Cyrillic a: another corp.com identity, never alice's owner role
		{"\u00c1lice@corp.com", RoleDriver}, // composed: a real name, *@corp.com's

	}
	for _, tc := range cases {
		if got := r.RoleOf(tc.id); got != tc.want {
			t.Errorf("RoleOf(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
	kate := &Roles{Owners: []string{"kate@corp.test"}}
	if got := kate.RoleOf("\u212Aate@corp.test"); got != "" {
		t.Errorf("RoleOf(KELVIN SIGN + ate@corp.test) = %q, want no role (kate@corp.test is an owner)", got)
	}
	if got := kate.RoleOf("Kate@Corp.Test"); got != RoleOwner {
		t.Errorf("RoleOf(Kate@Corp.Test) = %q, want owner", got)
	}
	if got := r.Whom(); got != "alice@corp.com" {
		t.Errorf("Whom() = %q, want the exact owners", got)
	}
}

func TestSSOParseRoles(t *testing.T) {
	r, err := ParseRoles([]byte("# team\nowners: alice@corp.com\ndrivers: *@corp.com, bob@x.io\nviewer: v@x.io # one\ncontact: #ops on chat\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Owners) != 1 || len(r.Drivers) != 2 || len(r.Viewers) != 1 || r.Contact != "" {
		t.Errorf("ParseRoles = %+v", r)
	}
	for _, bad := range []string{"admins: a@b", "just a line", "owners: \u212Aate@corp.test", "drivers: *@\uff43orp.com"} {
		if _, err := ParseRoles([]byte(bad)); err == nil {
			t.Errorf("ParseRoles(%q) = nil error, want one naming the line", bad)
		}
	}
}

// TestSSORolesFileWatched: a roles file replaced by rename (as editors and
// deploy tools do) or written in place is re-read; a broken edit keeps the
// roles in force; Reload (SIGHUP) re-reads too.
func TestSSORolesFileWatched(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "roles")
	write := func(s string) {
		tmp := filepath.Join(dir, "roles.tmp")
		if err := os.WriteFile(tmp, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, path); err != nil {
			t.Fatal(err)
		}
	}
	write("viewers: bob@corp.com\n")
	d, err := NewDirectory(Roles{Owners: []string{"alice@corp.com"}}, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Roles().RoleOf("bob@corp.com"); got != RoleViewer {
		t.Fatalf("RoleOf(bob) = %q, want viewer", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	wait, err := d.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); wait() })
	waitRole := func(id, want string) {
		t.Helper()
		for {
			ch := d.Changed()
			if d.Roles().RoleOf(id) == want {
				return
			}
			select {
			case <-ch:
			case <-t.Context().Done():
				t.Fatalf("RoleOf(%s) stayed %q, want %q", id, d.Roles().RoleOf(id), want)
			}
		}
	}
	write("drivers: bob@corp.com\n")
	waitRole("bob@corp.com", RoleDriver)
	if err := os.WriteFile(path, []byte("owners: bob@corp.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitRole("bob@corp.com", RoleOwner)
	if got := d.Roles().RoleOf("alice@corp.com"); got != RoleOwner {
		t.Errorf("the command line's owner lost its role: %q", got)
	}
	write("admins: bob@corp.com\n")
	if err := d.Reload(); err == nil {
		t.Error("Reload of a broken file = nil, want an error")
	}
	if got := d.Roles().RoleOf("bob@corp.com"); got != RoleOwner {
		t.Errorf("a broken file changed the roles in force: RoleOf(bob) = %q", got)
	}
	if err := os.WriteFile(path, []byte("viewers: bob@corp.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitRole("bob@corp.com", RoleViewer)
}
