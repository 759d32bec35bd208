package client

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// Groups is the Groups service: the account tree of the hdrf and dff
// policies.
func (c *Client) Groups() longfairv1.GroupsClient { return longfairv1.NewGroupsClient(c.Conn()) }

// Queues is the Queues service: latency queues of the bpf and sp policies.
func (c *Client) Queues() longfairv1.QueuesClient { return longfairv1.NewQueuesClient(c.Conn()) }

// SetGroupWeight creates a group of the account tree ("org" or
// "org/group") or changes its weight.
func (c *Client) SetGroupWeight(ctx context.Context, path string, weight float64) (*longfairv1.Group, error) {
	return c.Groups().SetGroupWeight(ctx, &longfairv1.SetGroupWeightRequest{Path: path, Weight: weight})
}

// SetAccountGroup moves an account into a group, or under the root when
// group is empty.
func (c *Client) SetAccountGroup(ctx context.Context, account, group string) (*longfairv1.Account, error) {
	return c.Groups().SetAccountGroup(ctx, &longfairv1.SetAccountGroupRequest{Account: account, Group: group})
}

// AccountTree returns the account tree with every node's DFF and H-DRF
// figures, as of the latest write the cluster acknowledged.
func (c *Client) AccountTree(ctx context.Context) (*longfairv1.AccountTree, error) {
	return c.Groups().GetAccountTree(ConsistentRead(ctx), &longfairv1.GetAccountTreeRequest{})
}

// LatencyQueueSpec declares an account's latency queue: its n-th burst
// arrives at Start + n·Period, holds up to Burst while it runs, and should
// be done Deadline later.
type LatencyQueueSpec struct {
	Account string
	// Start is when the first burst arrives; zero means now.
	Start            time.Time
	Period, Deadline time.Duration
	// Burst by resource name, as a job's demand.
	Burst map[string]float64
}

// Request is the API request for the spec.
func (s LatencyQueueSpec) Request() *longfairv1.CreateLatencyQueueRequest {
	r := &longfairv1.CreateLatencyQueueRequest{
		Account: s.Account, Period: durationpb.New(s.Period), Deadline: durationpb.New(s.Deadline), Burst: s.Burst,
	}
	if !s.Start.IsZero() {
		r.Start = timestamppb.New(s.Start)
	}
	return r
}

// CreateLatencyQueue declares a latency queue. Admission control's class
// and reason are in the answer; a rejection is a FailedPrecondition error
// whose message gives the reason.
func (c *Client) CreateLatencyQueue(ctx context.Context, spec LatencyQueueSpec) (*longfairv1.LatencyQueue, error) {
	return c.Queues().CreateLatencyQueue(ctx, spec.Request())
}
