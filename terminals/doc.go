// Package terminals is the terminal server: the Manager composes shells on
// ptys (package pty) with shell integration (shellint) and the AHP hub
// (hub) they publish to, and owns the catalogue, claims, dispatch checks,
// create and dispose. What follows a terminal beside its subscribers, its
// screen model (screentap.go) and its recorder (recordtap.go), plugs into
// its hub channel as a hub.Tap: output goes pty → hub → subscribers.
//
// # Lock order
//
// The order of every lock is written once, in package lockrank, and each
// mutex here is declared with its rank there (make test checks the order
// under the build tag lockrank). In this package: Manager.mu and
// recordTap.mu (Terminal rank) may take the hub lock: Create and Adopt add
// channels and their taps and set catalogue _meta under Manager.mu, a
// recording's state is set under recordTap.mu; they are never held
// together (code that needs a terminal looks it up, Manager.live, and lets
// go of Manager.mu first). Under the hub lock run hub.Subscriber's
// methods, Policy's callbacks and the channels' taps: dispatch checks take
// leaves (presence.mu, lastInputs.mu, sizeWants.mu), and the taps only
// queue into their recorder and screen model, whose locks (like the pty's)
// are leaves of their own packages; a joiner waits for the model after the
// hub lock is released (hub.Amend). Nothing under the hub lock may block
// (see hub.Subscriber and hub.Tap).
package terminals
