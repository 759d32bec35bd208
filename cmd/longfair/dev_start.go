package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

// devAccount is one of the demo accounts dev creates.
type devAccount struct {
	name, user string
	grantSU    int64
}

func devAccounts() []devAccount {
	return []devAccount{{"astro", "ann", 1_000_000}, {"bio", "bob", 1_000_000}}
}

func devAccountsSummary() string {
	var parts []string
	for _, a := range devAccounts() {
		parts = append(parts, fmt.Sprintf("%s (user %s, %d SU)", a.name, a.user, a.grantSU))
	}
	return strings.Join(parts, ", ") + ", equal contributions"
}

// devWorker is one of the nodes dev starts: two CPU nodes, each
// contributed by one account, and a MIC node.
type devWorker struct {
	id, class, account, cpu, mem string
	mic                          int
}

func devWorkers() []devWorker {
	return []devWorker{
		{id: "cpu-1", class: "cpu", account: "astro", cpu: "4", mem: "8G"},
		{id: "cpu-2", class: "cpu", account: "bio", cpu: "4", mem: "8G"},
		{id: "mic-1", class: "mic", cpu: "4", mem: "8G", mic: 2},
	}
}

// start brings the cluster up: servers, a leader, the demo accounts, the
// workers, then dev.json and dev.env.
func (d *devCluster) start(ctx context.Context, exe, logLevel string, withWorkers bool, stdout io.Writer) error {
	// A dev.env left by a dev that was killed must not make anyone think
	// this cluster is up.
	if err := os.Remove(filepath.Join(d.Dir, "dev.env")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	prev, err := previousServerAddrs(d.Dir)
	if err != nil {
		return err
	}
	if len(prev) > 0 {
		fmt.Fprintf(stdout, "longfair dev: resuming the cluster in %s on its previous ports…\n", d.Dir)
	} else {
		fmt.Fprintf(stdout, "longfair dev: starting 3 servers in %s…\n", d.Dir)
	}
	for i := range 3 {
		id := fmt.Sprintf("s%d", i+1)
		// New servers take free ports; a resumed one takes its old ports
		// back, because the Raft configuration its peers hold names them
		// (if all three moved, no server could reach another to elect a
		// leader).
		raftAddr, grpcAddr, gossipAddr := "127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"
		if a, ok := prev[id]; ok {
			raftAddr, grpcAddr, gossipAddr = a["raft"], a["grpc"], a["gossip"]
		}
		args := []string{"server", "--node-id", id, "--data-dir", filepath.Join(d.Dir, id, "data"),
			"--raft-addr", raftAddr, "--grpc-addr", grpcAddr, "--gossip-addr", gossipAddr, "--http-addr", "127.0.0.1:0",
			"--bootstrap-expect", "3", "--log-format", "json", "--log-level", logLevel}
		for _, s := range d.Servers {
			args = append(args, "--join", s.Addrs["gossip"])
		}
		c, err := startChild(ctx, exe, "server", id, filepath.Join(d.Dir, id), args, "server started", []string{"grpc", "raft", "gossip", "http"})
		if err != nil {
			return err
		}
		d.Servers = append(d.Servers, c)
	}
	var addrs []string
	for _, s := range d.Servers {
		addrs = append(addrs, s.Addrs["grpc"])
	}
	d.Addr = strings.Join(addrs, ",")
	d.Token = devToken()
	c, err := client.New(addrs, client.WithToken(d.Token), client.WithConsistentReads(true), client.WithRetry(time.Minute, 5*time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(stdout, "longfair dev: waiting for a leader…")
	if err := waitLeader(ctx, c); err != nil {
		return err
	}
	if err := setupDevAccounts(ctx, c); err != nil {
		return fmt.Errorf("create the demo accounts: %w", err)
	}
	if withWorkers {
		fmt.Fprintln(stdout, "longfair dev: starting 3 workers…")
		if err := d.startWorkers(ctx, exe, logLevel); err != nil {
			return err
		}
		if err := waitNodesUp(ctx, c, len(d.Workers)); err != nil {
			return err
		}
	}
	return d.writeFiles()
}

func (d *devCluster) startWorkers(ctx context.Context, exe, logLevel string) error {
	for _, w := range devWorkers() {
		dir := filepath.Join(d.Dir, w.id)
		args := []string{"worker", "--node-id", w.id, "--work-dir", filepath.Join(dir, "work"),
			"--gossip-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
			"--cpu", w.cpu, "--mem", w.mem, "--class", w.class, "--log-format", "json", "--log-level", logLevel}
		if w.mic > 0 {
			args = append(args, "--mic", fmt.Sprint(w.mic))
		}
		if w.account != "" {
			args = append(args, "--account", w.account)
		}
		for _, s := range d.Servers {
			args = append(args, "--join", s.Addrs["gossip"])
		}
		c, err := startChild(ctx, exe, "worker", w.id, dir, args, "worker started", []string{"grpc", "gossip"})
		if err != nil {
			return err
		}
		d.Workers = append(d.Workers, c)
	}
	return nil
}

// previousServerAddrs reads the servers' addresses from the dev.json of
// an earlier run in dir, if there was one whose servers kept state.
func previousServerAddrs(dir string) (map[string]map[string]string, error) {
	data, err := os.ReadFile(filepath.Join(dir, "dev.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the previous dev.json: %w", err)
	}
	var prev struct {
		Servers []struct {
			ID    string            `json:"id"`
			Addrs map[string]string `json:"addresses"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(data, &prev); err != nil {
		return nil, fmt.Errorf("%s is not a dev.json this command wrote (%v): remove it, or use another --dir", filepath.Join(dir, "dev.json"), err)
	}
	out := make(map[string]map[string]string)
	for _, s := range prev.Servers {
		a := s.Addrs
		if a["raft"] == "" || a["grpc"] == "" || a["gossip"] == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, s.ID, "data")); err == nil {
			out[s.ID] = a
		}
	}
	return out, nil
}

// waitLeader waits until a server names a leader.
func waitLeader(ctx context.Context, c *client.Client) error {
	for {
		_, err := c.Operator().GetLeader(ctx, &longfairv1.GetLeaderRequest{})
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("no leader was elected in time: %v", status.Convert(err).Message())
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitNodesUp waits until n worker nodes are up in the ledger.
func waitNodesUp(ctx context.Context, c *client.Client, n int) error {
	var last error
	up := 0
	for {
		resp, err := c.Operator().ListNodes(ctx, &longfairv1.ListNodesRequest{})
		if err == nil {
			up = 0
			for _, nd := range resp.GetNodes() {
				if nd.GetUp() {
					up++
				}
			}
			if up >= n {
				return nil
			}
		} else {
			last = err
		}
		select {
		case <-ctx.Done():
			if last != nil {
				return fmt.Errorf("only %d of %d workers came up in time: %v", up, n, status.Convert(last).Message())
			}
			return fmt.Errorf("only %d of %d workers came up in time (see the worker logs)", up, n)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// setupDevAccounts creates the demo accounts, users and grants. Running
// it again (dev resumed in the same --dir) changes nothing.
func setupDevAccounts(ctx context.Context, c *client.Client) error {
	for _, a := range devAccounts() {
		_, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: a.name, Contribution: new(1.0)})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return err
		}
		_, err = c.Users().CreateUser(ctx, &longfairv1.CreateUserRequest{Name: a.user, Accounts: []string{a.name}})
		if err != nil && status.Code(err) != codes.AlreadyExists {
			return err
		}
		_, err = c.Grants().CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "dev-" + a.name, Account: a.name,
			AmountMicroSu: a.grantSU * client.MicroSUPerSU, Note: "longfair dev"})
		if err != nil {
			return err
		}
	}
	return nil
}

// writeFiles writes dev.json, then dev.env (whose presence says the
// cluster is ready), each atomically.
func (d *devCluster) writeFiles() error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(d.Dir, "dev.json"), append(data, '\n')); err != nil {
		return err
	}
	first := devAccounts()[0]
	env := fmt.Sprintf("# longfair dev cluster in %s (pid %d)\nexport %s=%s\nexport %s=%s\nexport LONGFAIR_ACCOUNT=%s\nexport LONGFAIR_USER=%s\n",
		d.Dir, d.PID, client.EnvAddr, d.Addr, client.EnvToken, d.Token, first.name, first.user)
	return writeFileAtomic(filepath.Join(d.Dir, "dev.env"), []byte(env))
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), os.Remove(tmp))
	}
	return nil
}
