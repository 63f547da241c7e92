// Package sso identifies people signed in by a single sign-on proxy in
// front of termhost (oauth2-proxy behind nginx auth_request, Caddy
// forward_auth, Tailscale Serve …): who a request is, from one header that
// only a trusted proxy may set (identity.go), and which role each person
// has, from patterns on the command line or a roles file re-read on change
// or on SIGHUP (roles.go, watch.go).
package sso
