package main

import (
	"encoding/csv"
	"slices"
	"strings"
	"testing"
)

// TestCLIWorkerTokenBoundToANode creates a worker token bound to a node,
// finds the node in every listing format, checks that 'longfair dev' gave
// each of its workers a token bound to that worker's node, and that a
// node on a token of another role is refused before anything is created.
func TestCLIWorkerTokenBoundToANode(t *testing.T) {
	d := needDev(t)
	var created struct {
		Token struct {
			ID   string `json:"id"`
			Role string `json:"role"`
			Node string `json:"node"`
		} `json:"token"`
		Secret string `json:"secret"`
	}
	d.okJSON(t, &created, "acl", "token", "create", "--role", "worker", "--node", "c01.rack3", "--description", "cli node test")
	if created.Token.ID == "" || created.Token.Role != "TOKEN_ROLE_WORKER" || created.Token.Node != "c01.rack3" {
		t.Fatalf("acl token create --node c01.rack3 --output json: %+v", created.Token)
	}
	defer d.ok(t, "acl", "token", "revoke", created.Token.ID)

	var list []struct {
		ID          string `json:"id"`
		Node        string `json:"node"`
		Description string `json:"description"`
	}
	d.okJSON(t, &list, "acl", "token", "list")
	jsonNode := map[string]string{}
	devNode := map[string]string{} // dev worker id -> node of its token
	for _, k := range list {
		jsonNode[k.ID] = k.Node
		if w, ok := strings.CutPrefix(k.Description, "longfair dev worker "); ok {
			devNode[w] = k.Node
		}
	}
	if jsonNode[created.Token.ID] != "c01.rack3" {
		t.Fatalf("acl token list --output json shows token %s bound to %q", created.Token.ID, jsonNode[created.Token.ID])
	}

	records, err := csv.NewReader(strings.NewReader(d.ok(t, "acl", "token", "list", "--output", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(records[0], "NODE")
	if col < 0 {
		t.Fatalf("acl token list --output csv has no NODE column: %v", records[0])
	}
	csvNode := map[string]string{}
	for _, r := range records[1:] {
		csvNode[r[0]] = r[col]
	}
	if csvNode[created.Token.ID] != "c01.rack3" {
		t.Fatalf("acl token list --output csv shows token %s bound to %q", created.Token.ID, csvNode[created.Token.ID])
	}

	table := d.ok(t, "acl", "token", "list")
	header, rows, _ := strings.Cut(table, "\n")
	if !strings.Contains(header, "NODE") {
		t.Fatalf("acl token list has no NODE column: %q", header)
	}
	found := false
	for _, row := range strings.Split(rows, "\n") {
		if f := strings.Fields(row); len(f) > 3 && f[0] == created.Token.ID {
			found = slices.Contains(f, "c01.rack3")
		}
	}
	if !found {
		t.Fatalf("acl token list does not show token %s bound to c01.rack3:\n%s", created.Token.ID, table)
	}

	// 'longfair dev' binds each worker's token to the worker's node.
	if d.info.ACL {
		if len(d.info.Workers) == 0 || len(devNode) != len(d.info.Workers) {
			t.Fatalf("dev workers %d, their tokens %v", len(d.info.Workers), devNode)
		}
		for _, w := range d.info.Workers {
			if devNode[w.ID] != w.ID {
				t.Errorf("dev worker %s holds a token bound to %q, want %q", w.ID, devNode[w.ID], w.ID)
			}
		}
	}

	// A node on a token of another role is a usage mistake.
	for _, role := range []string{"user", "admin"} {
		args := []string{"acl", "token", "create", "--role", role, "--node", "c01"}
		if role == "user" {
			args = append(args, "--user", "ann")
		}
		_, errOut, code := d.run(t, args...)
		if code != 2 {
			t.Fatalf("acl token create --role %s --node c01 exited %d: %s", role, code, errOut)
		}
		oneLine(t, "a "+role+" token with --node", errOut, "--node", "--role worker")
	}
	// A node id the worker could not have is refused by the cluster.
	_, errOut, code := d.run(t, "acl", "token", "create", "--role", "worker", "--node", "c01/x")
	if code != 1 {
		t.Fatalf("acl token create --node c01/x exited %d: %s", code, errOut)
	}
	oneLine(t, "a worker token bound to c01/x", errOut, "node", "c01/x")
	var after []struct{ ID string }
	d.okJSON(t, &after, "acl", "token", "list")
	if len(after) != len(list) {
		t.Fatalf("refused token creations changed the tokens: %d before, %d after", len(list), len(after))
	}
}
