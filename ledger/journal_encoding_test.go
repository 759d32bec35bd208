package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestEntryBinaryRoundTrip(t *testing.T) {
	for _, e := range sampleJournal(t) {
		data, err := e.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back JournalEntry
		if err := back.UnmarshalBinary(data); err != nil {
			t.Fatalf("entry %d: %v", e.Seq, err)
		}
		if !reflect.DeepEqual(back, e) {
			t.Fatalf("entry %d read back as %+v, want %+v", e.Seq, back, e)
		}
		// The hash covers exactly the bytes before it.
		if got := back.ComputeHash(); got != e.Hash {
			t.Fatalf("entry %d: recomputed hash %v, stored %v", e.Seq, got, e.Hash)
		}
		if !bytes.HasSuffix(data, e.Hash[:]) {
			t.Fatalf("entry %d: encoding does not end with the hash", e.Seq)
		}
	}
}

func TestEntryBinaryRefusesDamagedBytes(t *testing.T) {
	e := sampleJournal(t)[5] // a detailed charge: every field is present
	data, _ := e.MarshalBinary()
	for cut := 0; cut < len(data); cut++ {
		var back JournalEntry
		if err := back.UnmarshalBinary(data[:cut]); !errors.Is(err, ErrBadEntryEncoding) {
			t.Fatalf("entry cut to %d of %d bytes: %v, want ErrBadEntryEncoding", cut, len(data), err)
		}
	}
	var back JournalEntry
	if err := back.UnmarshalBinary(append(bytes.Clone(data), 0)); err == nil || !strings.Contains(err.Error(), "left over") {
		t.Fatalf("entry with a trailing byte: %v", err)
	}
	bad := bytes.Clone(data)
	bad[0] = 3
	if err := back.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("entry of an unknown version: %v", err)
	}
	// A string length far beyond the input is refused before allocating.
	huge := bytes.Clone(data)
	copy(huge[1+8+8+1:], []byte{0xff, 0xff, 0xff, 0xff})
	if err := back.UnmarshalBinary(huge); !errors.Is(err, ErrBadEntryEncoding) {
		t.Fatalf("entry with a huge id length: %v", err)
	}
}

func TestEntryJSONRoundTrip(t *testing.T) {
	j := sampleJournal(t)
	data, err := json.Marshal(j)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`"kind":"charge"`, `"hash":"` + j[0].Hash.String() + `"`, `"funds":[{"grant":"g-2025"`} {
		if !strings.Contains(string(data), s) {
			t.Fatalf("JSON journal lacks %s", s)
		}
	}
	var back []JournalEntry
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if _, err := Verify(back); err != nil {
		t.Fatalf("journal read back from JSON does not verify: %v", err)
	}
	if !reflect.DeepEqual(back, j) {
		t.Fatal("JSON round trip changed the journal")
	}
}

func TestHashTextRefusesTruncation(t *testing.T) {
	h := sampleJournal(t)[0].Hash
	text, _ := h.MarshalText()
	var back Hash
	if err := back.UnmarshalText(text); err != nil || back != h {
		t.Fatalf("hash round trip: %v", err)
	}
	for _, bad := range [][]byte{text[:63], text[:40], append(bytes.Clone(text), '0'), bytes.Repeat([]byte("zz"), 32)} {
		if err := back.UnmarshalText(bad); err == nil {
			t.Fatalf("hash %q was accepted", bad)
		}
	}
	var e JournalEntry
	truncated := strings.Replace(`{"seq":1,"kind":"grant","hash":"`+string(text)+`"}`, string(text), string(text[:62]), 1)
	if err := json.Unmarshal([]byte(truncated), &e); err == nil {
		t.Fatal("a JSON entry with a truncated hash was accepted")
	}
	if err := json.Unmarshal([]byte(`{"kind":"refund"}`), &e); err == nil || !strings.Contains(err.Error(), "grant, hold, charge or release") {
		t.Fatalf("unknown kind: %v", err)
	}
}
