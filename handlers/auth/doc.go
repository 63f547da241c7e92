// Package auth holds who may sign in: the owner token and owner sessions,
// share links, the failed-credential limiters, why an ended credential
// ended, and their persistence in the state directory. The HTTP side
// (cookies, sign-in and sign-out, identifying a request) is package
// handlers'; the lock order of these stores is written in handlers' package
// doc (persister.mu outermost, Store.mu and Shares.mu leaves).
package auth
