package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/server"
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
	tokenFile, token             string
}

func devWorkers() []devWorker {
	return []devWorker{
		{id: "cpu-1", class: "cpu", account: "astro", cpu: "4", mem: "8G"},
		{id: "cpu-2", class: "cpu", account: "bio", cpu: "4", mem: "8G"},
		{id: "mic-1", class: "mic", cpu: "4", mem: "8G", mic: 2},
	}
}

// start brings the cluster up: servers, a leader, the demo accounts, the
// workers, then dev.json and dev.env. serverFlags go to every server.
func (d *devCluster) start(ctx context.Context, exe, logLevel string, withWorkers bool, serverFlags []string, stdout io.Writer) error {
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
	// The token checks stay off when this binary's workers cannot present
	// a token (they would never reach the leader).
	var workerFlags map[string]bool
	if withWorkers {
		workerFlags = helpFlags(ctx, exe, "worker")
	}
	if withWorkers && server.DefaultConfig().ACL.Enabled && !workerFlags["token"] && !workerFlags["token-file"] {
		d.ACLOff = "this binary's workers cannot present a token yet, so the servers run with acl.enabled=false"
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
		args = append(args, serverFlags...)
		if d.ACLOff != "" {
			conf := filepath.Join(d.Dir, id, "dev-server.json")
			if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
				return err
			}
			if err := writeFileAtomic(conf, []byte(`{"acl": {"enabled": false}}`+"\n")); err != nil {
				return err
			}
			args = append(args, "--config", conf)
		}
		for _, s := range d.Servers {
			args = append(args, "--join", s.Addrs["gossip"])
		}
		c, err := startChild(ctx, exe, "server", id, filepath.Join(d.Dir, id), args, nil, "server started", []string{"grpc", "raft", "gossip", "http"})
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
	fmt.Fprintln(stdout, "longfair dev: waiting for a leader…")
	acl, err := d.adminToken(ctx, addrs)
	if err != nil {
		return err
	}
	d.ACL = acl && d.ACLOff == ""
	c, err := client.New(addrs, client.WithToken(d.Token), client.WithConsistentReads(true), client.WithRetry(time.Minute, 5*time.Second))
	if err != nil {
		return err
	}
	defer c.Close()
	if err := waitLeader(ctx, c); err != nil {
		return err
	}
	if err := setupDevAccounts(ctx, c); err != nil {
		return fmt.Errorf("create the demo accounts: %w", err)
	}
	if withWorkers {
		fmt.Fprintln(stdout, "longfair dev: starting 3 workers…")
		if err := d.startWorkers(ctx, c, d.ACL, workerFlags, exe, logLevel); err != nil {
			return err
		}
		if err := waitNodesUp(ctx, c, len(d.Workers)); err != nil {
			return err
		}
	}
	return d.writeFiles()
}

func (d *devCluster) startWorkers(ctx context.Context, c *client.Client, acl bool, workerFlags map[string]bool, exe, logLevel string) error {
	for _, w := range devWorkers() {
		dir := filepath.Join(d.Dir, w.id)
		var env []string
		if acl {
			// A worker holds a token of the worker role bound to its own
			// node id, as production workers should: in a file when the
			// worker takes one, else as a flag; in its environment too.
			created, err := c.ACL().CreateToken(ctx, &longfairv1.CreateTokenRequest{Role: longfairv1.TokenRole_TOKEN_ROLE_WORKER,
				Node: w.id, Description: "longfair dev worker " + w.id})
			if err != nil {
				return fmt.Errorf("create the token of worker %s: %w", w.id, err)
			}
			env = append(env, client.EnvToken+"="+created.GetSecret())
			if workerFlags["token-file"] {
				file := filepath.Join(dir, "worker.token")
				if err := os.MkdirAll(dir, 0o700); err != nil {
					return err
				}
				if err := os.WriteFile(file, []byte(created.GetSecret()+"\n"), 0o600); err != nil {
					return fmt.Errorf("write the token of worker %s: %w", w.id, err)
				}
				w.tokenFile = file
			} else if workerFlags["token"] {
				w.token = created.GetSecret()
			}
		}
		args := []string{"worker", "--node-id", w.id, "--work-dir", filepath.Join(dir, "work"),
			"--gossip-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0",
			"--cpu", w.cpu, "--mem", w.mem, "--class", w.class, "--log-format", "json", "--log-level", logLevel,
			// A development cluster runs on a laptop, as any user, and its
			// workers share the machine: their demands are for show.
			"--unconfined"}
		if w.mic > 0 {
			args = append(args, "--mic", fmt.Sprint(w.mic))
		}
		if workerFlags["as-self"] {
			// A dev cluster's users are names, not Unix accounts.
			args = append(args, "--as-self")
		}
		if w.account != "" {
			args = append(args, "--account", w.account)
		}
		if w.tokenFile != "" {
			args = append(args, "--token-file", w.tokenFile)
		} else if w.token != "" {
			args = append(args, "--token", w.token)
		}
		for _, s := range d.Servers {
			args = append(args, "--join", s.Addrs["gossip"])
		}
		child, err := startChild(ctx, exe, "worker", w.id, dir, args, env, "worker started", []string{"grpc", "gossip"})
		if err != nil {
			return err
		}
		d.Workers = append(d.Workers, child)
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

// adminToken gets the admin token dev and the CLI use, and reports
// whether the cluster checks tokens. A new cluster is bootstrapped with
// ACL.Bootstrap (which waits for a leader) and its secret kept in
// admin.token; a resumed one uses the admin.token of its first run. A
// cluster without the ACL service gets a random token, sent and ignored.
func (d *devCluster) adminToken(ctx context.Context, addrs []string) (bool, error) {
	path := filepath.Join(d.Dir, "admin.token")
	if data, err := os.ReadFile(path); err == nil {
		d.Token = strings.TrimSpace(string(data))
	}
	c, err := client.New(addrs, client.WithRetry(time.Minute, 5*time.Second))
	if err != nil {
		return false, err
	}
	defer c.Close()
	created, err := c.ACL().Bootstrap(ctx, &longfairv1.BootstrapACLRequest{})
	switch status.Code(err) {
	case codes.OK:
		d.Token = created.GetSecret()
	case codes.Unimplemented:
		if d.Token == "" {
			d.Token = devToken()
		}
		return false, writeFileAtomic(path, []byte(d.Token+"\n"))
	case codes.FailedPrecondition:
		if d.Token == "" {
			return false, fmt.Errorf("the cluster in %s already has an admin token, but %s is gone: start a new dev cluster in another --dir", d.Dir, path)
		}
		return true, nil
	default:
		if ctx.Err() != nil {
			return false, fmt.Errorf("no leader was elected in time: %v", status.Convert(err).Message())
		}
		return false, fmt.Errorf("create the admin token: %w", err)
	}
	return true, writeFileAtomic(path, []byte(d.Token+"\n"))
}

// helpFlags lists the flags 'longfair NAME --help' shows, so that dev
// passes only flags the binary's servers and workers take.
func helpFlags(ctx context.Context, exe, name string) map[string]bool {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(ctx, exe, name, "--help").CombinedOutput()
	flags := map[string]bool{}
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(out), -1) {
		flags[m[1]] = true
	}
	return flags
}

var helpFlagRE = regexp.MustCompile(`(?m)^\s+--?([a-z][a-z0-9-]*)`)

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
