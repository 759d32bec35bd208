// Package core holds the rules every layer of longfair applies the same
// way and that need nothing but the standard library: what a name, a node
// id and a piece of free text may contain, the walltime bounds, and the
// policy settings' ranges (QKnobler's ρ, the quantum, the FAWKES
// weightings' names). The API (api/longfair/v1) checks requests with them,
// the FSM (fsm) checks log entries with them, sched checks its settings
// with them, the worker checks its flags with them, and the CLI escapes
// what it prints with Escape. One rule, one home: no other package keeps
// a copy.
//
// The text rule refuses what can change how a terminal shows the text
// rather than what it says: control characters (C0, DEL, C1), the Unicode
// bidirectional formatting characters (U+202E and its kin, which reorder
// text so that it reads as something else), the line and paragraph
// separators, and invalid UTF-8.
package core
