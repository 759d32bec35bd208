package server

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

func TestEveryAPIMethodIsRouted(t *testing.T) {
	n := 0
	protoregistry.GlobalFiles.RangeFilesByPackage("longfair.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := 0; i < fd.Services().Len(); i++ {
			sd := fd.Services().Get(i)
			for j := 0; j < sd.Methods().Len(); j++ {
				full := "/" + string(sd.FullName()) + "/" + string(sd.Methods().Get(j).Name())
				n++
				if _, ok := methodKindOf(full); !ok {
					t.Errorf("%s is not classified as read, leader-only or local in methodKindOf", full)
				}
				if _, _, err := messageTypes(full); err != nil {
					t.Errorf("%s: %v", full, err)
				}
			}
		}
		return true
	})
	if n == 0 {
		t.Fatal("no longfair.v1 methods registered")
	}
	// Writes must never be served by a follower.
	for _, m := range []string{"/longfair.v1.Jobs/SubmitJob", "/longfair.v1.Grants/CreateGrant", "/longfair.v1.Operator/RestoreSnapshot"} {
		if k, _ := methodKindOf(m); k != kindLeader {
			t.Errorf("%s is not leader-only", m)
		}
	}
}
