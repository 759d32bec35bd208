package fsm

import (
	"bytes"
	"io"
	"testing"
)

// memSink is a raft.SnapshotSink in memory.
type memSink struct {
	bytes.Buffer
	cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }
func (s *memSink) Close() error  { return nil }

func (s *memSink) reader() io.ReadCloser { return io.NopCloser(bytes.NewReader(s.Bytes())) }

// snapshotOf persists a snapshot of f into memory.
func snapshotOf(t *testing.T, f *FSM) *memSink {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	sink := new(memSink)
	if err := snap.Persist(sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	return sink
}
