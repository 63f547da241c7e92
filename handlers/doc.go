// Package handlers is termhost's HTTP side: the chi router, middleware, pages,
// sign-in and sign-out (the credential stores are package handlers/auth),
// the AHP WebSocket endpoint with its JSON-RPC connections, health and metrics.
//
// # Lock order
//
// Every mutex of this package, and where it sits among those of package
// terminals (see its package doc), outermost first; a lock may be taken
// while holding only locks of earlier rows.
//
//  1. auth's persister.mu (handlers/auth/persist.go), held across a snapshot
//     of the sign-ins and its write to disk; it takes auth.Store.mu and
//     auth.Shares.mu in turn. Never taken under another lock: the stores
//     save after unlocking.
//  2. The terminals hub's lock. conn's hub.Subscriber methods (Deliver,
//     Hold, Backlog, Drained) and the dispatch Policy callbacks run under
//     it.
//  3. Server.mu (client records, share connections), taken under the hub
//     lock when an accepted claim binds a clientId (bindClaimed); under it
//     only the Manager's presence counts are read or changed (Connected,
//     Disconnected, Connections), whose lock is a leaf. Anything else of the
//     Manager is called before taking it (remember, resume).
//  4. Leaves, which take no other lock: auth.Store.mu, auth.Shares.mu, conn.mu (a
//     connection's outbound queue; the hub is told of an eviction after it
//     is released), controls.mu (pending control requests; the claim is
//     moved and connections told after it is released), the ping timer's
//     lock in conn.startPings, people.mu (when SSO people were last seen)
//     and Server.persons (a sync.Map the manager reads when a command
//     starts, never under a lock of ours).
package handlers
