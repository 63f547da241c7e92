// Package audit keeps the audit trail: who signed in, connected, created,
// renamed or disposed a terminal, took or asked for control, shared a
// terminal, typed (how many bytes, never which; summed a line at a time,
// typing.go) and downloaded a recording.
// One JSON object a line, appended to a file and fsync'd in batches
// (log.go); Read filters a trail for `termhost audit` (read.go).
package audit
