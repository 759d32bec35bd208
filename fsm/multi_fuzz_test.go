package fsm

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/hashicorp/raft"
)

// multiSeeds are multi-command entries built from the valid seed entries,
// plus a few broken ones.
func multiSeeds(t testing.TB) [][]byte {
	seeds := seedEntries(t)
	out := [][]byte{
		rawMulti(seeds),
		rawMulti(seeds[:1]),
		rawMulti([][]byte{seeds[7], {1, 2, 3}, seeds[8]}),
		rawMulti([][]byte{seeds[0], rawMulti(seeds[:2])}),
		{MultiVersion, 0, 0, 0, 2, 0, 0, 0, 1, 1},
		{MultiVersion},
	}
	for i := 0; i+3 <= len(seeds); i += 3 {
		out = append(out, rawMulti(seeds[i:i+3]))
	}
	return out
}

// FuzzSplitMulti: whatever the bytes, SplitMulti returns the parts or an
// *Error, never panics; the parts lie inside the entry in order, and when
// they are all version-1 entries EncodeMulti writes the same bytes back.
func FuzzSplitMulti(f *testing.F) {
	for _, e := range multiSeeds(f) {
		f.Add(e)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		parts, err := SplitMulti(data)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Msg == "" {
				t.Fatalf("refusal %v is not an *Error with a message", err)
			}
			return
		}
		if !IsMulti(data) || len(parts) == 0 || len(parts) > MaxMultiCommands {
			t.Fatalf("accepted %d parts of an entry with version %d", len(parts), data[0])
		}
		size := multiHeader
		allV1 := true
		for _, p := range parts {
			if IsMulti(p) {
				t.Fatal("a nested multi-command entry was accepted")
			}
			if !bytes.Contains(data, p) {
				t.Fatal("a part is not in the entry")
			}
			size += multiLength + len(p)
			allV1 = allV1 && len(p) >= envelopeHeader && p[0] == CommandVersion
		}
		if size != len(data) {
			t.Fatalf("parts cover %d of %d bytes", size, len(data))
		}
		if allV1 {
			again, err := EncodeMulti(parts)
			if err != nil || !bytes.Equal(again, data) {
				t.Fatalf("re-encoding gives %x, %v; want %x", again, err, data)
			}
		}
	})
}

// FuzzApplyMulti: an arbitrary multi-command entry applied to a busy FSM
// never panics or breaks it; refused whole it changes nothing, and
// otherwise it answers and changes exactly what its commands do as
// consecutive entries on a replica.
func FuzzApplyMulti(f *testing.F) {
	for _, e := range multiSeeds(f) {
		f.Add(e)
	}
	multi, single := busyHarness(f), busyHarness(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if !IsMulti(data) {
			return // FuzzApply covers single-command entries
		}
		before := stateDigest(t, multi.f)
		resp := multi.f.Apply(&raft.Log{Index: uint64(len(multi.log.entries)) + 1, Type: raft.LogCommand, Data: data})
		multi.log.addRaw(data)
		if multi.f.Err() != nil {
			t.Fatalf("FSM broke: %v", multi.f.Err())
		}
		parts, splitErr := SplitMulti(data)
		switch r := resp.(type) {
		case *Result:
			if splitErr == nil || r.Err == nil {
				t.Fatalf("entry answered %v as a whole; split error %v", r.Err, splitErr)
			}
			if stateDigest(t, multi.f) != before {
				t.Fatalf("refused entry (%v) changed the state", r.Err)
			}
			return
		case Results:
			if splitErr != nil || len(r) != len(parts) {
				t.Fatalf("%d answers for %d commands (split error %v)", len(r), len(parts), splitErr)
			}
			var want []any
			for _, p := range parts {
				want = append(want, single.f.Apply(single.log.addRaw(p)))
			}
			if got, want := flatten(t, []any{r}), flatten(t, want); !reflect.DeepEqual(got, want) {
				t.Fatalf("answers differ from the commands one per entry:\n%#v\n%#v", got, want)
			}
			if stateDigest(t, multi.f) != stateDigest(t, single.f) {
				t.Fatal("state differs from the commands one per entry")
			}
		default:
			t.Fatalf("response %T", resp)
		}
	})
}
