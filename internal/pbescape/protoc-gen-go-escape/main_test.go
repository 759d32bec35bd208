package main

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/pluginpb"
)

// generate runs the plugin's message writer over one proto file with one
// message of the given fields, and returns the Go code it writes.
func generate(t *testing.T, fields ...*descriptorpb.FieldDescriptorProto) string {
	t.Helper()
	entry := &descriptorpb.DescriptorProto{
		Name: proto.String("LimitsEntry"),
		Field: []*descriptorpb.FieldDescriptorProto{
			{Name: proto.String("key"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), JsonName: proto.String("key")},
			{Name: proto.String("value"), Number: proto.Int32(2), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".google.protobuf.Duration"), JsonName: proto.String("value")},
		},
		Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
	}
	file := &descriptorpb.FileDescriptorProto{
		Name:       proto.String("t/v1/t.proto"),
		Package:    proto.String("t.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"google/protobuf/duration.proto"},
		Options:    &descriptorpb.FileOptions{GoPackage: proto.String("example.com/t/v1;tv1")},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Job"), Field: fields, NestedType: []*descriptorpb.DescriptorProto{entry},
		}},
	}
	req := &pluginpb.CodeGeneratorRequest{
		FileToGenerate: []string{"t/v1/t.proto"},
		ProtoFile:      []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(durationpb.File_google_protobuf_duration_proto), file},
	}
	p, err := protogen.Options{}.New(req)
	if err != nil {
		t.Fatal(err)
	}
	f := p.FilesByPath["t/v1/t.proto"]
	g := p.NewGeneratedFile("t.go", f.GoImportPath)
	g.P("package tv1")
	for _, m := range f.Messages {
		if err := message(g, f, m); err != nil {
			t.Fatal(err)
		}
	}
	b, err := g.Content()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A map keyed by string escapes its keys even when its values are a
// message of another package that holds no string (Duration).
func TestMapKeysAreEscapedWhateverTheValues(t *testing.T) {
	code := generate(t,
		&descriptorpb.FieldDescriptorProto{Name: proto.String("name"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), JsonName: proto.String("name")},
		&descriptorpb.FieldDescriptorProto{Name: proto.String("limits"), Number: proto.Int32(2), Label: descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".t.v1.Job.LimitsEntry"), JsonName: proto.String("limits")},
	)
	for _, want := range []string{"x.Name = esc(x.Name)", "pbescape.Keys(x.Limits, esc)"} {
		if !strings.Contains(code, want) {
			t.Errorf("the generated EscapeStrings lacks %q:\n%s", want, code)
		}
	}
	if strings.Contains(code, "v.EscapeStrings") {
		t.Errorf("the generated code escapes Duration values, which have no EscapeStrings:\n%s", code)
	}
}
