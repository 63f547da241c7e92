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
//  2. Terminal: terminals' Manager.mu (the catalogue), a terminal's
//     recorder slot and screen slot. Never two of them at once, except
//     several screen slots, taken in URI order (terminals' Manager.marked).
//  3. Hub: the one lock of every channel and the action stream. Under it
//     run the hub's Subscriber methods and the dispatch Policy callbacks.
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
	order() (rank int, name string, nests bool)
}

// The ranks, outermost first (see the package doc).
type (
	SignIns  struct{}
	Terminal struct{}
	// ScreenSlot is a terminal's screen slot: on the Terminal row, and
	// several may be held at once (taken in URI order).
	ScreenSlot struct{}
	Hub        struct{}
	Server     struct{}
	Leaf       struct{}
)

func (SignIns) order() (int, string, bool)    { return 1, "SignIns", false }
func (Terminal) order() (int, string, bool)   { return 2, "Terminal", false }
func (ScreenSlot) order() (int, string, bool) { return 2, "ScreenSlot", true }
func (Hub) order() (int, string, bool)        { return 3, "Hub", false }
func (Server) order() (int, string, bool)     { return 4, "Server", false }
func (Leaf) order() (int, string, bool)       { return 5, "Leaf", false }
