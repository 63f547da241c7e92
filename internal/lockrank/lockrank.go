// Package lockrank is the lock order of packages terminals and handlers,
// written once as types: a mutex declared lockrank.Mutex[lockrank.Hub] is
// the hub's lock, and so on. A goroutine may take a lock only while every
// lock it holds has a lower rank. Built normally a Mutex is a sync.Mutex and
// costs nothing more; built with the tag lockrank (make test does) every
// Lock checks the order and panics on a violation, naming both locks, so
// that any test that takes locks in a wrong order fails at once instead of
// deadlocking one day under load.
//
// The order, outermost first:
//
//  1. SignIns: handlers/auth's persister, held across a snapshot of the
//     sign-ins and its write to disk; never under another lock.
//  2. Terminal: terminals' Manager.mu (the catalogue) and a terminal's
//     recorder (recordTap.mu); never both at once.
//  3. Hub: the one lock of every channel and the action stream. Under it
//     run the hub's Subscriber methods, the dispatch Policy callbacks and
//     the channels' taps (hub.Tap).
//  4. Server: handlers' Server.mu (client records, share connections).
//  5. Leaf: takes no other lock of these (presence counts, last inputs,
//     size wishes, a connection's queue, control requests, the ping timer,
//     auth's Store and Shares).
//
// Locks of the packages below (pty, screen, recording) are leaves of their
// own and stay sync.Mutex.
package lockrank

// Rank is one row of the order; only this package's types are ranks.
type Rank interface {
	order() (rank int, name string)
}

// The ranks, outermost first (see the package doc).
type (
	SignIns  struct{}
	Terminal struct{}
	Hub      struct{}
	Server   struct{}
	Leaf     struct{}
)

func (SignIns) order() (int, string)  { return 1, "SignIns" }
func (Terminal) order() (int, string) { return 2, "Terminal" }
func (Hub) order() (int, string)      { return 3, "Hub" }
func (Server) order() (int, string)   { return 4, "Server" }
func (Leaf) order() (int, string)     { return 5, "Leaf" }
