// Package longfairv1 is longfair's gRPC API: the .proto files in this folder,
// the code protoc generates from them (committed; `make proto` regenerates
// it), and the request validation every server runs before it proposes a
// command.
//
// Conventions for callers are in common.proto: bearer tokens and the
// consistent-read switch travel in metadata (see the constants in
// metadata.go), amounts of service units are integer micro-SU, and errors are
// gRPC status codes whose message names the field and the fix. Names, node
// ids and free text are checked by the rules in package core, the same the
// FSM applies to every log entry.
package longfairv1
