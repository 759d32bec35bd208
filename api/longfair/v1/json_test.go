package longfairv1

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// AppendJSON writes what protojson writes with JSONOptions: by the
// generated code for the API's messages, by protojson for any other, and
// an error where protojson refuses.
func TestAppendJSONWritesWhatProtojsonWrites(t *testing.T) {
	compact := func(b []byte) string {
		var buf bytes.Buffer
		if err := json.Compact(&buf, b); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, b)
		}
		return buf.String()
	}
	for _, m := range []proto.Message{
		&Job{Id: 7, Name: "x\x1by", Account: "phys", Command: []string{"true"}, Demand: map[string]float64{"cpu": 2},
			Walltime: durationpb.New(time.Hour), SubmittedAt: timestamppb.New(time.Unix(1e9, 5))},
		&ListJobsResponse{},
		timestamppb.New(time.Unix(1e9, 0)), // no AppendProtoJSON: protojson writes it
	} {
		want, err := JSONOptions().Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendJSON([]byte("prefix"), m)
		if err != nil {
			t.Fatalf("%T: %v", m, err)
		}
		rest, ok := bytes.CutPrefix(got, []byte("prefix"))
		if !ok || compact(rest) != compact(want) {
			t.Errorf("%T:\n got %s\nwant %s", m, got, want)
		}
	}
	// Not UTF-8: the generated code refuses it and so does protojson,
	// which says why.
	if _, err := AppendJSON(nil, &Job{Name: "bad\xff"}); err == nil || !strings.Contains(err.Error(), "UTF-8") {
		t.Fatalf("a name that is not UTF-8: err = %v, want protojson's refusal", err)
	}
}
