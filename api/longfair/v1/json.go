package longfairv1

import (
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// JSONOptions is how longfair writes a message as JSON, on the JSON/HTTP
// API and in the CLI's --output json: fields named as in the protos
// (job_id, not jobId), every field present.
func JSONOptions() protojson.MarshalOptions {
	return protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}
}

// protoJSONAppender is a message with generated JSON encoding.
type protoJSONAppender interface {
	AppendProtoJSON(b []byte) ([]byte, error)
}

// AppendJSON appends m to b as JSONOptions writes it: by m's generated
// AppendProtoJSON (protoc-gen-go-pbjson) where it has one, without
// protojson's reflection, which is set up lazily on its first use in a
// process and walks every field through an interface; by protojson for
// any other message and for a value the generated code refuses, so that
// protojson says why it refuses it too.
func AppendJSON(b []byte, m proto.Message) ([]byte, error) {
	if a, ok := m.(protoJSONAppender); ok {
		if out, err := a.AppendProtoJSON(b); err == nil {
			return out, nil
		}
	}
	return JSONOptions().MarshalAppend(b, m)
}
