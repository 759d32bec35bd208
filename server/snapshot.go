package server

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"

	"github.com/hashicorp/raft"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A saved snapshot is a self-describing file: a magic line, one JSON line
// of metadata, the FSM's snapshot bytes, and a trailer line with their
// SHA-256. Restore checks the size and checksum before anything is
// replaced, so a truncated or corrupted file changes nothing.
const snapshotMagic = "longfair-snapshot 1\n"

type snapshotHeader struct {
	// RaftVersion is hashicorp/raft's snapshot format version.
	RaftVersion raft.SnapshotVersion `json:"raft_version"`
	Index       uint64               `json:"index"`
	Term        uint64               `json:"term"`
	Size        int64                `json:"size"`
	NodeID      string               `json:"node_id"`
}

const snapshotChunkSize = 256 << 10

// SaveSnapshot takes a Raft snapshot on this server and writes it to w in
// the saved-snapshot format. It returns the snapshot's index.
func (s *Server) SaveSnapshot(ctx context.Context, w io.Writer) (uint64, error) {
	meta, rc, err := s.openSnapshot(ctx)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	hdr, err := json.Marshal(snapshotHeader{RaftVersion: meta.Version, Index: meta.Index, Term: meta.Term, Size: meta.Size, NodeID: s.cfg.NodeID})
	if err != nil {
		return 0, status.Errorf(codes.Internal, "encode snapshot header: %v", err)
	}
	if _, err := io.WriteString(w, snapshotMagic+string(hdr)+"\n"); err != nil {
		return 0, err
	}
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, sum), rc)
	if err != nil {
		return 0, fmt.Errorf("stream snapshot: %w", err)
	}
	if n != meta.Size {
		return 0, status.Errorf(codes.Internal, "snapshot %s is %d bytes, its metadata says %d", meta.ID, n, meta.Size)
	}
	if _, err := io.WriteString(w, "sha256 "+hex.EncodeToString(sum.Sum(nil))+"\n"); err != nil {
		return 0, err
	}
	return meta.Index, nil
}

// openSnapshot takes a fresh snapshot, or opens the latest one when
// nothing was applied since it was taken.
func (s *Server) openSnapshot(ctx context.Context) (*raft.SnapshotMeta, io.ReadCloser, error) {
	f := s.raft.Snapshot()
	err := waitFuture(ctx, f)
	if err == nil {
		return f.Open()
	}
	if !errors.Is(err, raft.ErrNothingNewToSnapshot) {
		return nil, nil, raftError(err)
	}
	list, err := s.stores.snaps.List()
	if err != nil || len(list) == 0 {
		return nil, nil, status.Errorf(codes.Internal, "list snapshots: %v", err)
	}
	return s.stores.snaps.Open(list[0].ID)
}

// RestoreSnapshot replaces the cluster state with a saved snapshot read
// from r. It must run on the leader; followers receive the restored state
// from it. The snapshot is copied to the data dir and checked in full
// before Raft sees it.
func (s *Server) RestoreSnapshot(ctx context.Context, r io.Reader) (uint64, error) {
	tmp, err := os.CreateTemp(s.cfg.DataDir, "restore-*.snap")
	if err != nil {
		return 0, status.Errorf(codes.Internal, "stage snapshot: %v", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := io.Copy(tmp, r); err != nil {
		return 0, fmt.Errorf("receive snapshot: %w", err)
	}
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return 0, status.Errorf(codes.Internal, "rewind staged snapshot: %v", err)
	}
	hdr, offset, err := checkSnapshotFile(tmp)
	if err != nil {
		return 0, err
	}
	if _, err := tmp.Seek(offset, io.SeekStart); err != nil {
		return 0, status.Errorf(codes.Internal, "rewind staged snapshot: %v", err)
	}
	// Raft refuses a restore until the leader has applied the latest
	// configuration entry ("wait until the configuration entry at 1 has
	// been applied"), which a group just bootstrapped or a leader just
	// elected may not have: a barrier waits until everything committed is
	// applied. CI hit it restoring into a new one-server group.
	if err := waitFuture(ctx, s.raft.Barrier(timeoutFrom(ctx, defaultApplyTimeout))); err != nil {
		return 0, raftError(err)
	}
	meta := &raft.SnapshotMeta{Version: hdr.RaftVersion, Size: hdr.Size, Index: hdr.Index, Term: hdr.Term}
	if err := s.raft.Restore(meta, io.LimitReader(tmp, hdr.Size), timeoutFrom(ctx, defaultApplyTimeout)); err != nil {
		return 0, raftError(err)
	}
	s.logger.Info("restored snapshot", "from_node", hdr.NodeID, "from_index", hdr.Index, "index", s.raft.LastIndex())
	return s.raft.LastIndex(), nil
}

// checkSnapshotFile reads a saved snapshot through once: header, size and
// checksum. It returns the header and where the FSM bytes start.
func checkSnapshotFile(f *os.File) (snapshotHeader, int64, error) {
	var hdr snapshotHeader
	bad := func(format string, args ...any) (snapshotHeader, int64, error) {
		return hdr, 0, status.Errorf(codes.InvalidArgument, "not a complete longfair snapshot: "+format+"; use a file saved with 'longfair operator snapshot save'", args...)
	}
	br := bufio.NewReader(f)
	magic, err := br.ReadString('\n')
	if err != nil || magic != snapshotMagic {
		return bad("the first line is not %q", strings.TrimSpace(snapshotMagic))
	}
	line, err := br.ReadString('\n')
	if err != nil {
		return bad("the header line is missing")
	}
	if err := json.Unmarshal([]byte(line), &hdr); err != nil {
		return bad("the header is not valid JSON (%v)", err)
	}
	if hdr.Size < 0 || hdr.RaftVersion < raft.SnapshotVersionMin || hdr.RaftVersion > raft.SnapshotVersionMax {
		return bad("the header has size %d and raft version %d", hdr.Size, hdr.RaftVersion)
	}
	offset := int64(len(magic) + len(line))
	var sum hash.Hash = sha256.New()
	n, err := io.CopyN(sum, br, hdr.Size)
	if err != nil {
		return bad("it holds %d of %d state bytes", n, hdr.Size)
	}
	trailer, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(trailer, "sha256 ") {
		return bad("the checksum trailer is missing")
	}
	if want := strings.TrimSpace(strings.TrimPrefix(trailer, "sha256 ")); want != hex.EncodeToString(sum.Sum(nil)) {
		return bad("the checksum does not match its contents")
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return bad("there are bytes after the checksum trailer")
	}
	return hdr, offset, nil
}
