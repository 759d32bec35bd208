package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func operatorGroup() *cmdGroup {
	raft := group("operator raft", "Manages the Raft configuration of the server group.", []subcommand{
		{"list-peers", "list the servers in the Raft configuration", raftListPeersCommand(), nil},
		{"add-peer", "add a server as a voter", raftAddPeerCommand(), nil},
		{"remove-peer", "remove a stopped server", raftRemovePeerCommand(), nil},
	})
	snapshot := group("operator snapshot", "Saves and restores the whole cluster state.", []subcommand{
		{"save", "save a consistent snapshot of the cluster state to a file", snapshotSaveCommand(), nil},
		{"restore", "replace the cluster state with a saved snapshot", snapshotRestoreCommand(), nil},
	})
	return group("operator", "Operates the server group: Raft peers, snapshots and state checks.", []subcommand{
		{name: "raft", summary: "list, add and remove Raft peers", group: raft},
		{name: "snapshot", summary: "save and restore snapshots of the cluster state", group: snapshot},
		{"verify-state", "compare every server's state at one checkpoint", verifyStateCommand(), nil},
	})
}

const verifyStateHelp = `Usage: longfair operator verify-state [flags]

Has the leader commit a checkpoint, every server digest its whole state at
that log index, and compares the digests: a server whose state differs
from most servers' is DIVERGED (its files were changed or damaged outside
the log). Such a server already refuses reads; restore it by moving its
data dir aside and starting it empty to rejoin, or from a snapshot. A
leader that most servers disagree with hands leadership over.

Exits 1 when any server diverged or could not be compared.

Example:
  longfair operator verify-state
`

func verifyStateCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("operator verify-state", verifyStateHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator verify-state", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Operator().VerifyState(ctx, &longfairv1.VerifyStateRequest{})
		if err != nil {
			return err
		}
		t := table{header: []string{"SERVER", "INDEX", "DIGEST", "STATUS", "DETAIL"}}
		var bad []string
		for _, s := range resp.GetServers() {
			digest := s.GetDigest()
			if len(digest) > 16 {
				digest = digest[:16]
			}
			t.add(s.GetId(), fmt.Sprint(s.GetIndex()), orDash(digest), s.GetStatus(), orDash(s.GetDetail()))
			if s.GetStatus() != "OK" {
				bad = append(bad, s.GetId()+" "+s.GetStatus())
			}
		}
		if err := writeListing(out.stdout, f.output, t, resp); err != nil {
			return err
		}
		if len(bad) > 0 {
			return fmt.Errorf("state check at index %d: %s", resp.GetIndex(), strings.Join(bad, ", "))
		}
		return nil
	})
}

func peersTable(peers []*longfairv1.Peer) table {
	t := table{header: []string{"SERVER", "RAFT_ADDRESS", "GRPC_ADDRESS", "SUFFRAGE", "LEADER"}}
	for _, p := range peers {
		t.add(p.GetId(), p.GetRaftAddress(), orDash(p.GetGrpcAddress()), p.GetSuffrage(), yesNo(p.GetLeader()))
	}
	return t
}

const raftListPeersHelp = `Usage: longfair operator raft list-peers [flags]

Lists the servers in the Raft configuration, as the server asked knows it.

Example:
  longfair operator raft list-peers
`

func raftListPeersCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("operator raft list-peers", raftListPeersHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator raft list-peers", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Operator().ListPeers(ctx, &longfairv1.ListPeersRequest{})
		if err != nil {
			return err
		}
		return writeListing(out.stdout, f.output, peersTable(resp.GetPeers()), messages(resp.GetPeers()))
	})
}

const raftAddPeerHelp = `Usage: longfair operator raft add-peer ID RAFT_ADDRESS [flags]

Adds a server to the Raft configuration as a voter. Servers that join the
gossip pool are added by the leader on their own; this is for a server that
cannot gossip with the group.

Example:
  longfair operator raft add-peer s4 10.0.0.4:7411
`

func raftAddPeerCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("operator raft add-peer", raftAddPeerHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator raft add-peer", args, 2, 2, "ID RAFT_ADDRESS"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Operator().AddPeer(ctx, &longfairv1.AddPeerRequest{Id: args[0], RaftAddress: args[1]})
		if err != nil {
			return err
		}
		return writeListing(out.stdout, f.output, peersTable(resp.GetPeers()), messages(resp.GetPeers()))
	})
}

const raftRemovePeerHelp = `Usage: longfair operator raft remove-peer ID [flags]

Removes a server from the Raft configuration. Stop it first: a server still
in the gossip pool would be added back, so the cluster refuses.

Example:
  longfair operator raft remove-peer s3
`

func raftRemovePeerCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("operator raft remove-peer", raftRemovePeerHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator raft remove-peer", args, 1, 1, "ID"); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		resp, err := c.Operator().RemovePeer(ctx, &longfairv1.RemovePeerRequest{Id: args[0]})
		if err != nil {
			return err
		}
		return writeListing(out.stdout, f.output, peersTable(resp.GetPeers()), messages(resp.GetPeers()))
	})
}

const snapshotSaveHelp = `Usage: longfair operator snapshot save FILE [flags]

Has the leader take a consistent snapshot of the whole cluster state (the
ledger, accounts, jobs) and writes it to FILE, showing progress on stderr.
The file is written next to FILE and renamed when complete, so an
interrupted save leaves no partial file. --timeout bounds the whole save.

Example:
  longfair operator snapshot save backup-$(date +%F).snap
`

func snapshotSaveCommand() func(args []string, stdout, stderr io.Writer) error {
	var quiet bool
	setup := func(fs *flag.FlagSet) {
		fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	}
	return clientCommand("operator snapshot save", snapshotSaveHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator snapshot save", args, 1, 1, "FILE"); err != nil {
			return err
		}
		path := args[0]
		if path == "-" {
			return Usagef("give a file name: the snapshot is binary and is not written to stdout")
		}
		w, commit, abort, err := createOutput(path, nil)
		if err != nil {
			return err
		}
		defer abort()
		bw := bufio.NewWriterSize(w, 1<<20)
		progressOut := out.stderr
		if quiet {
			progressOut = io.Discard
		}
		p := newProgress(progressOut, "saving snapshot", 0, "bytes")
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		info, err := c.SaveSnapshot(ctx, bw, p.set)
		if err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		p.done()
		if err := commit(); err != nil {
			return err
		}
		switch f.output {
		case "json":
			return writeJSON(out.stdout, jsonObject{{"file", path}, {"bytes", info.Bytes}, {"index", info.Index}, {"term", info.Term}, {"node_id", info.NodeID}})
		case "csv":
			t := table{header: []string{"FILE", "BYTES", "INDEX", "TERM", "NODE_ID"}}
			t.add(path, fmt.Sprint(info.Bytes), fmt.Sprint(info.Index), fmt.Sprint(info.Term), info.NodeID)
			return writeTable(out.stdout, "csv", t)
		}
		fmt.Fprintf(out.stdout, "saved a snapshot of the cluster state at raft index %d (term %d, taken by %s) to %s: %d bytes\n",
			info.Index, info.Term, orDash(info.NodeID), path, info.Bytes)
		return nil
	})
}

const snapshotRestoreHelp = `Usage: longfair operator snapshot restore FILE --yes [flags]

Replaces the WHOLE cluster state with a saved snapshot: everything written
since the snapshot was taken (jobs, charges, grants, accounts) is lost.
This is for disaster recovery; --yes confirms it. The servers check the
file's size and checksum before anything is replaced, so a damaged file
changes nothing. Shows progress on stderr.

Example:
  longfair operator snapshot restore backup-2026-03-01.snap --yes
`

func snapshotRestoreCommand() func(args []string, stdout, stderr io.Writer) error {
	var yes, quiet bool
	setup := func(fs *flag.FlagSet) {
		fs.BoolVar(&yes, "yes", false, "confirm that the cluster state is to be replaced")
		fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	}
	return clientCommand("operator snapshot restore", snapshotRestoreHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("operator snapshot restore", args, 1, 1, "FILE"); err != nil {
			return err
		}
		if !yes {
			return Usagef("restoring replaces the whole cluster state and loses everything written since the snapshot: add --yes to confirm")
		}
		file, err := os.Open(args[0])
		if err != nil {
			return fmt.Errorf("open snapshot: %w", err)
		}
		defer file.Close()
		st, err := file.Stat()
		if err != nil {
			return fmt.Errorf("open snapshot: %w", err)
		}
		progressOut := out.stderr
		if quiet {
			progressOut = io.Discard
		}
		p := newProgress(progressOut, "restoring snapshot", st.Size(), "bytes")
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		index, err := c.RestoreSnapshot(ctx, file, p.set)
		if err != nil {
			return err
		}
		p.done()
		switch f.output {
		case "json":
			return writeJSON(out.stdout, jsonObject{{"file", args[0]}, {"bytes", st.Size()}, {"index", index}})
		case "csv":
			t := table{header: []string{"FILE", "BYTES", "INDEX"}}
			t.add(args[0], fmt.Sprint(st.Size()), fmt.Sprint(index))
			return writeTable(out.stdout, "csv", t)
		}
		fmt.Fprintf(out.stdout, "restored the cluster state from %s (%d bytes); it is now at raft index %d\n", args[0], st.Size(), index)
		return nil
	})
}
