// Package longfairv1 is longfair's gRPC API: the .proto files in this folder,
// the code protoc generates from them (committed; `make proto` regenerates
// it), and the request validation every server runs before it proposes a
// command.
//
// The same API as JSON over HTTP is generated from the same protos too:
// http.yaml maps each public RPC to a method and path under /v1/ (kept out
// of the .proto files, so that they and their gRPC code need no googleapis
// annotations), protoc-gen-grpc-gateway turns it into the *.pb.gw.go
// handlers that NewHTTPGateway (gateway.go) mounts, and protoc-gen-openapiv2
// into longfair.swagger.json, the OpenAPI document (with openapi.yaml for
// its header), embedded as OpenAPIDocument. The gateway writes its answers
// with the *_pbjson.pb.go code, which protoc-gen-go-pbjson (ours,
// internal/pbjson) generates from the same protos: protojson's bytes
// without its reflection, about ten times faster.
//
// Two more generated methods spare the CLI protobuf's reflection, which
// is set up lazily on its first use in a process and cost each `longfair
// submit` from a shell milliseconds: CloneVT (vtprotobuf), which copies a
// request the client gives an idempotency key, and EscapeStrings
// (*_escape.pb.go, from protoc-gen-go-escape, ours: internal/pbescape),
// which escapes every string of a reply before the CLI prints it.
//
// Conventions for callers are in common.proto: bearer tokens and the
// consistent-read switch travel in metadata (see the constants in
// metadata.go), amounts of service units are integer micro-SU, and errors are
// gRPC status codes whose message names the field and the fix. Names, node
// ids and free text are checked by the rules in package core, the same the
// FSM applies to every log entry.
package longfairv1
