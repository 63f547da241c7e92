// Package terminals is the terminal server: the Manager composes shells on
// ptys (package pty) with shell integration (shellint) and the AHP hub
// (hub) they publish to, and owns the catalogue, claims, dispatch checks,
// create and dispose. What follows a terminal beside its subscribers, its
// screen model (screentap.go) and its recorder (recordtap.go), plugs into
// its hub channel as a hub.Tap: output goes pty → hub → subscribers.
//
// # Lock order
//
// Every mutex of this package and of the packages below it, outermost
// first; a lock may be taken while holding only locks of earlier rows.
// Locks on one row are never held together.
//
//  1. Manager.mu (the catalogue of terminals), presence.publish,
//     recordTap.mu. Each may take the hub lock: Create and Adopt add
//     channels and their taps and set catalogue _meta under Manager.mu, a
//     recording's state is set under recordTap.mu.
//  2. hub.Hub.mu, the one lock of every channel and the action stream.
//     Under it run hub.Subscriber's methods, Policy's callbacks and the
//     channels' taps (hub.Tap), so package handlers' locks come here (see
//     handlers' package doc): handlers.conn.mu and handlers.Server.mu;
//     dispatch checks and effects take the leaves below (presence.mu,
//     lastInputs.mu, the pty), and the taps take their recorder's and
//     screen model's locks: they only queue (output, a resize, a mark
//     where a joiner's snapshot ends), and a joiner waits for the model
//     after the hub lock is released (hub.Amend).
//  3. Leaves, which take no other lock: presence.mu (connection counts and
//     claim releases), lastInputs.mu, recording.Recorder.mu, screen.Model.mu
//     and pty.Process.deadlineMu.
//
// Manager.mu is never held while taking a recordTap's lock or
// presence.publish: code that needs a terminal looks it up (Manager.live)
// and lets go of Manager.mu first. Nothing under the hub lock may block
// (see hub.Subscriber and hub.Tap).
package terminals
