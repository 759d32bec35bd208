package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// SnapshotInfo describes a saved snapshot.
type SnapshotInfo struct {
	// Bytes written, the whole file.
	Bytes int64 `json:"bytes"`
	// Index and Term of the last Raft entry the snapshot holds, and the
	// server that took it, as its header says (zero if it had none).
	Index  uint64 `json:"index"`
	Term   uint64 `json:"term"`
	NodeID string `json:"node_id"`
}

// snapshotChunk is how much of a snapshot goes into one message on
// restore; the server sends chunks of the same size on save.
const snapshotChunk = 256 << 10

// final marks an error the retry loop must return as it is: the call got
// far enough that repeating it could repeat its effect.
type final struct{ err error }

func (f final) Error() string { return f.err.Error() }

func unwrapFinal(err error) error {
	var f final
	if errors.As(err, &f) {
		return f.err
	}
	return err
}

// SaveSnapshot has the leader take a consistent snapshot of the cluster
// state and writes it to w. progress, if not nil, is called with the
// bytes written so far after each chunk. If the stream breaks before any
// byte is written the call is retried; once bytes are written a failure
// is returned, and w holds a partial snapshot the caller should discard.
func (c *Client) SaveSnapshot(ctx context.Context, w io.Writer, progress func(written int64)) (SnapshotInfo, error) {
	var info SnapshotInfo
	hdr := &headerSniffer{}
	err := c.do(ctx, "/longfair.v1.Operator/SaveSnapshot", false, func(ctx context.Context, ep *endpoint) error {
		if err := c.connected(ctx, ep); err != nil {
			return err
		}
		stream, err := longfairv1.NewOperatorClient(ep.conn).SaveSnapshot(ctx, &longfairv1.SaveSnapshotRequest{})
		if err != nil {
			return err
		}
		for {
			chunk, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				return nil
			}
			if err != nil {
				if info.Bytes > 0 {
					return final{status.Errorf(status.Code(err), "the snapshot stream broke after %d bytes (%s): save it again", info.Bytes, status.Convert(err).Message())}
				}
				return err
			}
			n, err := w.Write(chunk.GetData())
			info.Bytes += int64(n)
			hdr.Write(chunk.GetData())
			if err != nil {
				return final{fmt.Errorf("write snapshot: %w", err)}
			}
			if progress != nil {
				progress(info.Bytes)
			}
		}
	})
	if err != nil {
		return info, unwrapFinal(err)
	}
	info.Index, info.Term, info.NodeID = hdr.parse()
	return info, nil
}

// headerSniffer keeps the first two lines of a saved snapshot: the magic
// line and the JSON header the server writes (see server/snapshot.go).
type headerSniffer struct{ buf []byte }

const maxHeaderBytes = 4 << 10

func (h *headerSniffer) Write(p []byte) {
	if room := maxHeaderBytes - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
}

func (h *headerSniffer) parse() (index, term uint64, node string) {
	lines := bytes.SplitN(h.buf, []byte("\n"), 3)
	if len(lines) < 3 || !strings.HasPrefix(string(lines[0]), "longfair-snapshot ") {
		return 0, 0, ""
	}
	var v struct {
		Index  uint64 `json:"index"`
		Term   uint64 `json:"term"`
		NodeID string `json:"node_id"`
	}
	if json.Unmarshal(lines[1], &v) != nil {
		return 0, 0, ""
	}
	return v.Index, v.Term, v.NodeID
}

// RestoreSnapshot replaces the whole cluster state with a snapshot saved
// by SaveSnapshot, read from r. Everything written since the snapshot was
// taken is lost: this is for disaster recovery. progress, if not nil, is
// called with the bytes sent so far. When r is an io.Seeker the upload is
// retried from the start if the cluster answers Unavailable; otherwise
// such a failure is returned. It returns the Raft index of the restored
// state.
func (c *Client) RestoreSnapshot(ctx context.Context, r io.Reader, progress func(sent int64)) (uint64, error) {
	seeker, canRetry := r.(io.Seeker)
	var start int64
	if canRetry {
		var err error
		if start, err = seeker.Seek(0, io.SeekCurrent); err != nil {
			canRetry = false
		}
	}
	attempt := 0
	var index uint64
	err := c.do(ctx, "/longfair.v1.Operator/RestoreSnapshot", false, func(ctx context.Context, ep *endpoint) error {
		// Nothing is read from r until a connection is up.
		if err := c.connected(ctx, ep); err != nil {
			return err
		}
		attempt++
		if attempt > 1 {
			if !canRetry {
				return final{status.Error(codes.Unavailable, "the restore was interrupted and its input cannot be re-read: run it again")}
			}
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return final{fmt.Errorf("rewind snapshot for a retry: %w", err)}
			}
		}
		var err error
		index, err = restoreOnce(ctx, ep.conn, r, progress)
		return err
	})
	return index, unwrapFinal(err)
}

func restoreOnce(ctx context.Context, conn grpc.ClientConnInterface, r io.Reader, progress func(int64)) (uint64, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := longfairv1.NewOperatorClient(conn).RestoreSnapshot(ctx)
	if err != nil {
		return 0, err
	}
	buf := make([]byte, snapshotChunk)
	var sent int64
	for {
		n, rerr := io.ReadFull(r, buf)
		if n > 0 {
			if err := stream.Send(&longfairv1.SnapshotChunk{Data: append([]byte(nil), buf[:n]...)}); err != nil {
				// The server's reason comes with CloseAndRecv.
				if _, rerr := stream.CloseAndRecv(); rerr != nil {
					return 0, rerr
				}
				return 0, err
			}
			sent += int64(n)
			if progress != nil {
				progress(sent)
			}
		}
		if errors.Is(rerr, io.EOF) || errors.Is(rerr, io.ErrUnexpectedEOF) {
			break
		}
		if rerr != nil {
			return 0, final{fmt.Errorf("read snapshot: %w", rerr)}
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil {
		return 0, err
	}
	return resp.GetIndex(), nil
}
