// Package terminals is the terminal server: the Manager composes shells on
// ptys (package pty) with shell integration (shellint) and the AHP hub
// (hub) they publish to, and owns the catalogue, claims, dispatch checks,
// create and dispose.
//
// # Lock order
//
// Every mutex of this package and of the packages below it, outermost
// first; a lock may be taken while holding only locks of earlier rows.
// Locks on one row are never held together, except several terminals'
// screenSlot.mu, which are taken in URI order (Manager.marked).
//
//  1. Manager.mu (the catalogue of terminals), presence.publish,
//     recorderSlot.mu, screenSlot.mu. Each may take the hub lock: Create
//     and Adopt add channels and set catalogue _meta under Manager.mu, a
//     recording's state is set under recorderSlot.mu, output is published
//     and snapshots are taken under screenSlot.mu.
//  2. hub.Hub.mu, the one lock of every channel and the action stream.
//     Under it run hub.Subscriber's methods and Policy's callbacks, so
//     package handlers' locks come here (see handlers' package doc):
//     handlers.conn.mu and handlers.Server.mu; dispatch checks and effects
//     take the leaves below (presence.mu, lastInputs.mu, a recorder's and a
//     screen model's lock for a resize, the pty).
//  3. Leaves, which take no other lock: presence.mu (connection counts and
//     claim releases), lastInputs.mu, recording.Recorder.mu, screen.Model.mu
//     and pty.Process.deadlineMu.
//
// Manager.mu is never held while taking a screenSlot's or recorderSlot's
// lock or presence.publish: code that needs a terminal looks it up
// (Manager.live) and lets go of Manager.mu first. Nothing under the hub
// lock may block (see hub.Subscriber).
package terminals
