package serve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/termhost/termhost/handlers/sso"
	"github.com/termhost/termhost/internal/audit"
	"github.com/termhost/termhost/internal/envflag"
)

// ssoFlags are serve's flags for --auth proxy and the audit trail.
func (o *serveOptions) ssoFlags(fs *envflag.Set) {
	fs.StringVar(&o.identityHeader, "identity-header", "", "with --auth proxy: the request `header` naming the person signed in, set by the proxy (X-Forwarded-Email for oauth2-proxy, X-Auth-Request-Email for its auth_request endpoint, Tailscale-User-Login for Tailscale Serve, Cf-Access-Authenticated-User-Email for Cloudflare Access); believed only from --trusted-proxy peers")
	fs.StringVar(&o.nameHeader, "name-header", "", "with --auth proxy: the request `header` with a person's display name (X-Forwarded-Preferred-Username, Tailscale-User-Name); default: the identity")
	fs.Var(&o.owners, "owners", "with --auth proxy: identities or patterns (alice@corp.com, *@corp.com) with the owner's rights (repeatable, comma-separated)")
	fs.Var(&o.drivers, "drivers", "with --auth proxy: identities or patterns that may type into every terminal (repeatable, comma-separated)")
	fs.Var(&o.viewers, "viewers", "with --auth proxy: identities or patterns that may watch every terminal (repeatable, comma-separated)")
	fs.StringVar(&o.rolesFile, "roles-file", "", "with --auth proxy: a `file` of \"owners:\", \"drivers:\", \"viewers:\" and \"contact:\" lines, added to the flags' lists and re-read when it changes or on SIGHUP")
	fs.StringVar(&o.rolesContact, "roles-contact", "", "with --auth proxy: whom people without a role should ask, shown on the \"not allowed\" page (default: the owners named without a pattern)")
	fs.StringVar(&o.auditLog, "audit-log", "", "append the audit trail (sign-ins, connections, terminals, control, share links, input sizes, downloads, upgrades) to this `file`, one JSON object a line; SIGHUP reopens it (for logrotate); read it with termhost audit")
}

// checkSSO checks the --auth proxy flags on their own.
func (o *serveOptions) checkSSO() error {
	proxyOnly := o.identityHeader != "" || o.nameHeader != "" || len(o.owners)+len(o.drivers)+len(o.viewers) > 0 || o.rolesFile != "" || o.rolesContact != ""
	if o.authMode != "proxy" {
		if proxyOnly {
			return fmt.Errorf("--identity-header, --name-header, --owners, --drivers, --viewers, --roles-file and --roles-contact need --auth proxy")
		}
		return nil
	}
	switch {
	case len(o.trustedProxies) == 0:
		return fmt.Errorf("--auth proxy needs --trusted-proxy: the address or CIDR of the proxy that signs people in (anyone else could send the identity header)")
	case o.identityHeader == "":
		return fmt.Errorf("--auth proxy needs --identity-header, e.g. X-Forwarded-Email (oauth2-proxy) or Tailscale-User-Login (Tailscale Serve)")
	case !validHeaderName(o.identityHeader) || (o.nameHeader != "" && !validHeaderName(o.nameHeader)):
		return fmt.Errorf("--identity-header and --name-header must be header names such as X-Forwarded-Email (letters, digits and dashes)")
	case len(o.owners)+len(o.drivers)+len(o.viewers) == 0 && o.rolesFile == "":
		return fmt.Errorf("--auth proxy needs --owners, --drivers, --viewers or --roles-file: nobody would have a role")
	}
	return nil
}

// validHeaderName: letters, digits and dashes (no underscores: many proxies
// drop or fold them, which is how identities get smuggled).
func validHeaderName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return s != ""
}

// roles loads the roles (nil without --auth proxy): the flags' lists and the
// roles file, which must parse now.
func (o *serveOptions) roles() (*sso.Directory, error) {
	if o.authMode != "proxy" {
		return nil, nil
	}
	base := sso.Roles{Owners: o.owners, Drivers: o.drivers, Viewers: o.viewers, Contact: o.rolesContact}
	for _, e := range slices.Concat(o.owners, o.drivers, o.viewers) {
		if err := sso.CheckPattern(e); err != nil {
			return nil, fmt.Errorf("--owners, --drivers, --viewers: %w", err)
		}
	}
	d, err := sso.NewDirectory(base, o.rolesFile, nil)
	if err != nil {
		return nil, fmt.Errorf("--roles-file: %w", err)
	}
	return d, nil
}

// startSSO opens the audit log, watches the roles file and the hosts file
// and, when any is set, re-reads them and reopens the audit log on SIGHUP
// (without them SIGHUP keeps its default: a server started in a terminal
// ends with it). The returned stop ends all of it and closes the audit log.
func startSSO(ctx context.Context, o serveOptions, setup *serveSetup, log *slog.Logger) (stop func(), err error) {
	if o.auditLog != "" {
		if setup.audit, err = audit.Open(o.auditLog, log); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	var waits []func()
	fail := func(err error) (func(), error) {
		cancel()
		for _, w := range waits {
			w()
		}
		_ = setup.audit.Close()
		return nil, err
	}
	if setup.roles != nil {
		setup.roles = setup.roles.WithLogger(log)
		wait, err := setup.roles.Watch(ctx)
		if err != nil {
			return fail(err)
		}
		waits = append(waits, wait)
	}
	if setup.hosts != nil {
		setup.hosts = setup.hosts.WithLogger(log)
		wait, err := setup.hosts.Watch(ctx)
		if err != nil {
			return fail(err)
		}
		waits = append(waits, wait)
	}
	hostsFile := setup.hosts != nil && setup.hosts.Path() != ""
	hups := make(chan os.Signal, 1)
	done := make(chan struct{})
	if setup.roles != nil || setup.audit != nil || hostsFile {
		signal.Notify(hups, syscall.SIGHUP)
	}
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-hups:
				log.Info("SIGHUP: re-reading the roles and hosts files and reopening the audit log")
				if setup.roles != nil {
					if err := setup.roles.Reload(); err != nil {
						log.Warn("roles file not reloaded; the previous roles stay in force", "err", err)
					}
				}
				if hostsFile {
					if err := setup.hosts.Reload(); err != nil {
						log.Warn("hosts file not reloaded; the previous hosts stay in force", "err", err)
					}
				}
				setup.audit.Reopen()
			}
		}
	}()
	return func() {
		signal.Stop(hups)
		cancel()
		<-done
		for _, w := range waits {
			w()
		}
		if err := setup.audit.Close(); err != nil && !errors.Is(err, os.ErrClosed) {
			log.Warn("close audit log", "err", err)
		}
	}, nil
}
