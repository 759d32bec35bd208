// Package pbjson holds what the code protoc-gen-go-pbjson generates calls
// to write a message as JSON: strings, numbers, enums, bytes, timestamps
// and durations, each the way google.golang.org/protobuf/encoding/protojson
// writes it.
//
// Why it exists: the JSON/HTTP gateway encoded every answer with
// protojson, which walks a message through reflection, boxes every value
// and sorts every map through an interface. A 1,000-account fairness
// report took about 6 ms and allocated megabytes that way, and that was
// most of a dashboard request (issue 14). The generated code writes the
// same bytes from the Go fields directly.
//
// The generated methods cover one protojson mode, the gateway's:
// MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}. On anything
// protojson refuses (a string that is not UTF-8, a timestamp out of range)
// they return an error, and the caller falls back to protojson, which
// returns its own error; so the answers are protojson's in every case.
// protojson may put a space after a comma (it does so, deliberately, in
// some builds); the generated code never does.
package pbjson
