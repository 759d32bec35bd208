package client_test

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

func TestAccountTreeAndLatencyQueues(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	c, err := client.New(g.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"}); err != nil {
		t.Fatal(err)
	}
	if grp, err := c.SetGroupWeight(ctx, "science", 2); err != nil || grp.GetWeight() != 2 {
		t.Fatalf("set group weight: %v, %v", grp, err)
	}
	if a, err := c.SetAccountGroup(ctx, "astro", "science/space"); err != nil || a.GetGroup() != "science/space" {
		t.Fatalf("set account group: %v, %v", a, err)
	}
	tree, err := c.AccountTree(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range tree.GetNodes() {
		paths = append(paths, n.GetPath())
	}
	if got := strings.Join(paths, ","); got != ",science,science/space,science/space/astro" {
		t.Fatalf("tree %q", got)
	}
	// No worker has joined: admission control has no capacity to judge by.
	_, err = c.CreateLatencyQueue(ctx, client.LatencyQueueSpec{Account: "astro", Period: time.Hour, Deadline: time.Minute, Burst: map[string]float64{"cpu": 1}})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "no worker node is up") {
		t.Fatalf("latency queue on an empty cluster: %v", err)
	}
	// A malformed spec is refused with what is wrong.
	_, err = c.CreateLatencyQueue(ctx, client.LatencyQueueSpec{Account: "astro", Period: time.Minute, Deadline: time.Hour, Burst: map[string]float64{"cpu": 1}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "deadline") {
		t.Fatalf("deadline past the period: %v", err)
	}
}
