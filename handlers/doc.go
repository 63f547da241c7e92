// Package handlers is termhost's HTTP side: the chi router, middleware, pages,
// sign-in and sign-out (the credential stores are package handlers/auth),
// the AHP WebSocket endpoint with its JSON-RPC connections, health and metrics.
//
// # Lock order
//
// The order of every lock is written once, in package lockrank, and each
// mutex here is declared with its rank there (make test checks the order
// under the build tag lockrank). In this package: conn's hub.Subscriber
// methods (Deliver, Hold, Backlog, Drained) and the dispatch Policy
// callbacks run under the hub lock; Server.mu (client records, share
// connections) is taken under it when an accepted claim binds a clientId,
// and under Server.mu only the Manager's presence counts (a leaf) are read
// or changed; conn.mu, controls.mu, the ping timer's lock and people.mu (when SSO
// people were last seen) are leaves, and Server.persons is a sync.Map the
// manager reads when a command starts (a
// hub eviction, a claim's move and the notices to connections happen after
// they are released). auth's persister saves after the stores unlock.
package handlers
