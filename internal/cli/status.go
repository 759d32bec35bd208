package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

const statusHelp = `Usage: longfair status [flags]

Shows the cluster at a glance: each server of the Raft group (its
addresses, suffrage, whether it answers and which leader it sees), the
leader, and the worker nodes with their used and total resources.

Example:
  longfair status
  longfair status --output json
`

// serverHealth is one server as status sees it.
type serverHealth struct {
	Peer       *longfairv1.Peer
	Reachable  bool
	SeesLeader string
	Error      string
}

func statusCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("status", statusHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("status", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		peers, err := c.Operator().ListPeers(ctx, &longfairv1.ListPeersRequest{})
		if err != nil {
			return err
		}
		leader, lerr := c.Operator().GetLeader(ctx, &longfairv1.GetLeaderRequest{})
		health := probeServers(ctx, f, peers.GetPeers())
		nodes, err := c.Operator().ListNodes(ctx, &longfairv1.ListNodesRequest{})
		if err != nil {
			return err
		}
		servers := table{header: []string{"SERVER", "RAFT_ADDRESS", "GRPC_ADDRESS", "SUFFRAGE", "LEADER", "REACHABLE", "SEES_LEADER"}}
		for _, h := range health {
			p := h.Peer
			reach := "yes"
			if !h.Reachable {
				reach = "no: " + h.Error
			}
			servers.add(p.GetId(), p.GetRaftAddress(), orDash(p.GetGrpcAddress()), p.GetSuffrage(), yesNo(p.GetLeader()), reach, orDash(h.SeesLeader))
		}
		workers := nodesTable(nodes.GetNodes())
		switch f.output {
		case "json":
			var list jsonArray
			for _, h := range health {
				list = append(list, jsonObject{{"peer", h.Peer}, {"reachable", h.Reachable}, {"sees_leader", h.SeesLeader}, {"error", h.Error}})
			}
			obj := jsonObject{{"leader", leader}, {"servers", list}, {"workers", messages(nodes.GetNodes())}}
			if lerr != nil {
				obj = append(obj, jsonField{"leader_error", status.Convert(lerr).Message()})
			}
			return writeJSON(out.stdout, obj)
		case "csv":
			if err := writeTable(out.stdout, "csv", servers); err != nil {
				return err
			}
			fmt.Fprintln(out.stdout)
			return writeTable(out.stdout, "csv", workers)
		}
		if lerr != nil {
			fmt.Fprintf(out.stdout, "leader: none (%s)\n", status.Convert(lerr).Message())
		} else {
			fmt.Fprintf(out.stdout, "leader: %s at %s\n", leader.GetId(), orDash(leader.GetGrpcAddress()))
		}
		fmt.Fprintf(out.stdout, "raft: %s\n\n", raftHealth(health))
		if err := writeTable(out.stdout, "table", servers); err != nil {
			return err
		}
		fmt.Fprintln(out.stdout)
		if len(nodes.GetNodes()) == 0 {
			fmt.Fprintln(out.stdout, "workers: none has joined (start 'longfair worker --join SERVER_GOSSIP_ADDR' on each compute node)")
			return nil
		}
		fmt.Fprintf(out.stdout, "workers: %s\n\n", workersSummary(nodes.GetNodes()))
		return writeTable(out.stdout, "table", workers)
	})
}

// probeServers asks every server directly which leader it sees.
func probeServers(ctx context.Context, f *clientFlags, peers []*longfairv1.Peer) []serverHealth {
	out := make([]serverHealth, len(peers))
	var wg sync.WaitGroup
	for i, p := range peers {
		out[i].Peer = p
		if p.GetGrpcAddress() == "" {
			out[i].Error = "its gRPC address is unknown (not in the gossip pool)"
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pc, err := client.New([]string{p.GetGrpcAddress()}, client.WithToken(f.resolvedToken()), client.WithRetry(0, 0))
			if err != nil {
				out[i].Error = err.Error()
				return
			}
			defer pc.Close()
			pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			l, err := pc.Operator().GetLeader(pctx, &longfairv1.GetLeaderRequest{})
			switch {
			case err == nil:
				out[i].Reachable, out[i].SeesLeader = true, l.GetId()
			case status.Code(err) == codes.Unavailable && !errors.Is(err, client.ErrUnreachable):
				// Unavailable from the server itself: it answers but sees
				// no leader.
				out[i].Reachable = true
				out[i].Error = status.Convert(err).Message()
			default:
				out[i].Error = status.Convert(err).Message()
			}
		}()
	}
	wg.Wait()
	return out
}

// raftHealth sums up the group: how many voters answer, and whether they
// agree on the leader.
func raftHealth(h []serverHealth) string {
	voters, up := 0, 0
	leaders := map[string]bool{}
	for _, s := range h {
		if s.Peer.GetSuffrage() != "voter" {
			continue
		}
		voters++
		if s.Reachable {
			up++
			if s.SeesLeader != "" {
				leaders[s.SeesLeader] = true
			}
		}
	}
	quorum := voters/2 + 1
	state := "healthy"
	switch {
	case up < quorum:
		state = "NO QUORUM"
	case up < voters:
		state = "degraded"
	case len(leaders) != 1:
		state = "electing"
	}
	return fmt.Sprintf("%s: %d of %d voters answer (quorum %d, tolerates %d more failure(s))", state, up, voters, quorum, max(0, up-quorum))
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
