package server_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/worker"
)

// wantRefusal checks that err has code and mentions every one of words.
func wantRefusal(t *testing.T, err error, code codes.Code, words ...string) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("got %v, want %v", err, code)
	}
	for _, w := range words {
		if !strings.Contains(status.Convert(err).Message(), w) {
			t.Errorf("message %q does not mention %q", status.Convert(err).Message(), w)
		}
	}
}

// On a three-server group: qknobler's ρ and FAWKES's settings set through
// a follower read back the same from every server, bad values are refused
// with their range, and accounts arranged in groups through a follower
// show as a tree.
func TestPolicySettingsAndAccountTree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 3)
	follower := c.Follower(ctx)
	op := longfairv1.NewOperatorClient(c.Conn(follower))

	var s *longfairv1.Settings
	err := testcluster.RetryUnavailable(ctx, t, func() (err error) {
		s, err = op.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{
			Policy: proto.String("qknobler"), QknoblerRho: proto.Float64(0),
			Fawkes: &longfairv1.FawkesSettingsUpdate{Weighting: proto.String("jd"), Interval: durationpb.New(5 * time.Minute), Guarantee: proto.Float64(0.5)},
		})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	f := s.GetFawkes()
	if s.GetPolicy() != "qknobler" || s.GetQknoblerRho() != 0 || f.GetWeighting() != "jd" || f.GetInterval().AsDuration() != 5*time.Minute ||
		f.GetGuarantee() != 0.5 || f.GetThreshold() != 10 || f.GetBase() != 2 {
		t.Fatalf("settings after the update: %v", s)
	}
	c.WaitConverged(ctx)
	for _, srv := range c.Running() {
		got, err := longfairv1.NewOperatorClient(c.Conn(srv)).GetSettings(ctx, &longfairv1.GetSettingsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetQknoblerRho() != 0 || got.GetFawkes().GetWeighting() != "jd" {
			t.Fatalf("%s reads ρ %v and weighting %q", srv.NodeID(), got.GetQknoblerRho(), got.GetFawkes().GetWeighting())
		}
	}
	_, err = op.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{QknoblerRho: proto.Float64(1.5)})
	wantRefusal(t, err, codes.InvalidArgument, "qknobler_rho", "[0, 1]")
	_, err = op.UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{Fawkes: &longfairv1.FawkesSettingsUpdate{Disk: proto.String("ssd")}})
	wantRefusal(t, err, codes.InvalidArgument, "ssd", "not one of the cluster's resources")

	// The tree, built through the follower.
	accounts := longfairv1.NewAccountsClient(c.Conn(follower))
	groups := longfairv1.NewGroupsClient(c.Conn(follower))
	for _, name := range []string{"phys", "chem", "bio"} {
		if err := testcluster.RetryUnavailable(ctx, t, func() error {
			_, err := accounts.CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name, Weight: proto.Float64(1)})
			return ignoreExisting(err)
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := groups.SetGroupWeight(ctx, &longfairv1.SetGroupWeightRequest{Path: "science/physics", Weight: 3}); err != nil {
		t.Fatal(err)
	}
	a, err := groups.SetAccountGroup(ctx, &longfairv1.SetAccountGroupRequest{Account: "phys", Group: "science/physics"})
	if err != nil || a.GetGroup() != "science/physics" {
		t.Fatalf("set-account-group: %v, %v", a, err)
	}
	if _, err := groups.SetAccountGroup(ctx, &longfairv1.SetAccountGroupRequest{Account: "chem", Group: "science"}); err != nil {
		t.Fatal(err)
	}
	_, err = groups.SetGroupWeight(ctx, &longfairv1.SetGroupWeightRequest{Path: "bio", Weight: 1})
	wantRefusal(t, err, codes.FailedPrecondition, "bio", "same name")
	_, err = groups.RemoveGroup(ctx, &longfairv1.RemoveGroupRequest{Path: "science"})
	wantRefusal(t, err, codes.FailedPrecondition, "chem")
	_, err = groups.SetGroupWeight(ctx, &longfairv1.SetGroupWeightRequest{Path: "science//x", Weight: 1})
	wantRefusal(t, err, codes.InvalidArgument, "empty name")

	c.WaitConverged(ctx)
	leader := c.WaitLeader(ctx)
	list, err := longfairv1.NewGroupsClient(c.Conn(leader)).ListGroups(ctx, &longfairv1.ListGroupsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range list.GetGroups() {
		got = append(got, g.GetPath())
	}
	if strings.Join(got, " ") != "science science/physics" || list.GetGroups()[1].GetWeight() != 3 {
		t.Fatalf("groups %v", list.GetGroups())
	}
	tree, err := groups.GetAccountTree(ctx, &longfairv1.GetAccountTreeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, n := range tree.GetNodes() {
		paths = append(paths, n.GetPath())
		if n.GetPath() == "science/physics/phys" && (!n.GetIsAccount() || n.GetDepth() != 3) {
			t.Errorf("phys's node %v", n)
		}
		if n.GetPath() == "science/physics" && n.GetWeight() != 3 {
			t.Errorf("physics's node %v", n)
		}
	}
	if want := " bio science science/chem science/physics science/physics/phys"; strings.Join(paths, " ") != want {
		t.Fatalf("tree paths %q, want %q", strings.Join(paths, " "), want)
	}
	report, err := longfairv1.NewFairnessClient(c.Conn(leader)).GetFairnessReport(ctx, &longfairv1.GetFairnessReportRequest{Account: "phys"})
	if err != nil || report.GetAccounts()[0].GetGroup() != "science/physics" {
		t.Fatalf("fairness report of phys: %v, %v", report, err)
	}
}

// Latency queues are judged by admission control against the live
// cluster: none before a worker is up, hard when the burst fits, and a
// rejection with its reason once the cluster can no longer keep an
// earlier guarantee. Tasks a latency queue starts count against its burst.
func TestLatencyQueuesOnALiveCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	conn := c.Conn(leader)
	queues := longfairv1.NewQueuesClient(conn)
	accounts := longfairv1.NewAccountsClient(conn)
	account, user := setupAccount(ctx, t, c, "phys")
	for name, w := range map[string]float64{"phys": 1, "chem": 1} {
		if name != account {
			if _, err := accounts.CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := accounts.UpdateAccount(ctx, &longfairv1.UpdateAccountRequest{Name: name, Weight: proto.Float64(w)}); err != nil {
			t.Fatal(err)
		}
	}
	phys := &longfairv1.CreateLatencyQueueRequest{
		Account: "phys", Period: durationpb.New(10 * time.Minute), Deadline: durationpb.New(5 * time.Minute), Burst: map[string]float64{"cpu": 1},
	}
	_, err := queues.CreateLatencyQueue(ctx, phys)
	wantRefusal(t, err, codes.FailedPrecondition, "no worker node is up")

	testcluster.Worker(t, c, "w1", func(cfg *worker.Config) { cfg.Resources = map[string]float64{"cpu": 4, "mem": 8 << 30} })
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	// 1 cpu for 300 s per 10 minutes, within phys's half of 4 cpu × 600 s.
	q, err := queues.CreateLatencyQueue(ctx, phys)
	if err != nil {
		t.Fatal(err)
	}
	if q.GetClass() != longfairv1.QueueClass_QUEUE_CLASS_HARD || !strings.HasPrefix(q.GetReason(), "hard:") {
		t.Fatalf("phys's queue %v", q)
	}
	// bio weighs 10: phys's fair share falls to 4 × 600 / 12 = 200
	// cpu-seconds, under its 300, and admission control refuses any more
	// queues, saying why.
	if _, err := accounts.CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "bio", Weight: proto.Float64(10)}); err != nil {
		t.Fatal(err)
	}
	_, err = queues.CreateLatencyQueue(ctx, &longfairv1.CreateLatencyQueueRequest{
		Account: "chem", Period: durationpb.New(time.Hour), Deadline: durationpb.New(time.Minute), Burst: map[string]float64{"cpu": 1},
	})
	wantRefusal(t, err, codes.FailedPrecondition, "rejects", "safety condition", `"phys"`, "cpu")
	_, err = queues.CreateLatencyQueue(ctx, phys)
	wantRefusal(t, err, codes.AlreadyExists, "phys")

	// Under bpf, phys's tasks run and count against the burst: two tasks
	// of 1 cpu and a one-minute walltime are 120 cpu-seconds.
	if _, err := longfairv1.NewOperatorClient(conn).UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{Policy: proto.String("bpf")}); err != nil {
		t.Fatal(err)
	}
	resp, err := longfairv1.NewJobsClient(conn).SubmitJob(ctx, testcluster.ShellJob(account, user, "burst", 2, map[string]float64{"cpu": 1}, time.Minute, "true"))
	if err != nil {
		t.Fatal(err)
	}
	testcluster.WaitJobEnded(ctx, t, c, resp.GetJob().GetId())
	list, err := queues.ListLatencyQueues(ctx, &longfairv1.ListLatencyQueuesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetQueues()) != 1 || math.Abs(list.GetQueues()[0].GetUsed()["cpu"]-120) > 1e-9 {
		t.Fatalf("latency queues after the burst: %v", list.GetQueues())
	}
}

// Under fawkes the leader gives the accounts with work partitions, and at
// the end of each interval resizes them by the weighting: with TD, the
// account with more tasks waiting gets the larger partition.
func TestFawkesPartitionsOnALiveCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c := testcluster.New(t, 1)
	leader := c.WaitLeader(ctx)
	conn := c.Conn(leader)
	phys, physUser := setupAccount(ctx, t, c, "phys")
	chem, chemUser := setupAccount(ctx, t, c, "chem")
	testcluster.Worker(t, c, "w1", func(cfg *worker.Config) { cfg.Resources = map[string]float64{"cpu": 4, "mem": 8 << 30} })
	testcluster.WaitNodesUp(ctx, t, leader, "w1")
	if _, err := longfairv1.NewOperatorClient(conn).UpdateSettings(ctx, &longfairv1.UpdateSettingsRequest{
		Policy: proto.String("fawkes"),
		Fawkes: &longfairv1.FawkesSettingsUpdate{Weighting: proto.String("td"), Interval: durationpb.New(2 * time.Second), Threshold: proto.Float64(-1)},
	}); err != nil {
		t.Fatal(err)
	}
	jobs := longfairv1.NewJobsClient(conn)
	var ids []uint64
	for _, j := range []*longfairv1.SubmitJobRequest{
		testcluster.ShellJob(phys, physUser, "many", 12, map[string]float64{"cpu": 1}, time.Minute, "sleep 30"),
		testcluster.ShellJob(chem, chemUser, "few", 3, map[string]float64{"cpu": 1}, time.Minute, "sleep 30"),
	} {
		resp, err := jobs.SubmitJob(ctx, j)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, resp.GetJob().GetId())
	}
	defer func() {
		for _, id := range ids {
			jobs.CancelJob(context.Background(), &longfairv1.CancelJobRequest{JobId: id})
		}
	}()
	fair := longfairv1.NewFairnessClient(conn)
	shares := func() map[string]float64 {
		r, err := fair.GetFairnessReport(ctx, &longfairv1.GetFairnessReportRequest{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, a := range r.GetAccounts() {
			out[a.GetAccount()] = a.GetFawkesShare()
		}
		return out
	}
	// First both get a partition, then TD favours phys's longer queue.
	testcluster.WaitFor(ctx, t, "partitions for both accounts", func() bool { s := shares(); return s["phys"] > 0 && s["chem"] > 0 })
	testcluster.WaitFor(ctx, t, "phys's partition to grow past chem's", func() bool {
		s := shares()
		return s["phys"] > s["chem"] && math.Abs(s["phys"]+s["chem"]-1) < 1e-9
	})
	// Every server's scheduling view carries them: here, the FSM's.
	v := leader.FSM().View(ledger.Time(time.Now().UnixNano()))
	for _, a := range v.Accounts {
		if a.Share <= 0 {
			t.Errorf("the view gives %s no partition", a.Name)
		}
	}
}
