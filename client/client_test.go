package client_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func setupAccountB(ctx context.Context, b *testing.B, c *client.Client) {
	setupAccount(ctx, b, c, "astro", "ann")
}

// setupAccount creates an account with a user and a large grant.
func setupAccount(ctx context.Context, t testing.TB, c *client.Client, account, user string) {
	t.Helper()
	if _, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: account}); err != nil {
		t.Fatalf("create account: %v", err)
	}
	if _, err := c.Users().CreateUser(ctx, &longfairv1.CreateUserRequest{Name: user, Accounts: []string{account}}); err != nil {
		t.Fatalf("create user: %v", err)
	}
	if _, err := c.Grants().CreateGrant(ctx, &longfairv1.CreateGrantRequest{Account: account, AmountMicroSu: 1_000_000 * client.MicroSUPerSU}); err != nil {
		t.Fatalf("grant: %v", err)
	}
}

func smallJob(account, user string) client.JobSpec {
	return client.JobSpec{Account: account, User: user, Tasks: 2, Demand: map[string]float64{"cpu": 1},
		Walltime: time.Minute, Command: []string{"/bin/true"}}
}

// TestSubmissionsSurviveTheLeaderStopping submits jobs from several
// goroutines through a client that knows all three servers while the
// leader stops: every submission must succeed (the client retries on the
// new leader) and the cluster must hold exactly one job per success.
func TestSubmissionsSurviveTheLeaderStopping(t *testing.T) {
	g := testcluster.New(t, 3)
	ctx := testContext(t, 60*time.Second)
	c, err := client.New(g.Addrs(), client.WithConsistentReads(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	setupAccount(ctx, t, c, "astro", "ann")

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		ids       = map[uint64]int{}
		submitted atomic.Int64
		failures  []error
	)
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				j, err := c.Submit(ctx, smallJob("astro", "ann"))
				mu.Lock()
				if err != nil {
					failures = append(failures, fmt.Errorf("worker %d submission %d: %w", w, i, err))
				} else {
					ids[j.GetId()]++
				}
				mu.Unlock()
				if submitted.Add(1) == 20 {
					if l := g.Leader(); l != nil {
						g.Stop(g.Index(l))
					} else {
						mu.Lock()
						failures = append(failures, errors.New("no leader to stop mid-run"))
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Fatalf("%d submissions failed across the leader change, first: %v", len(failures), failures[0])
	}
	for id, n := range ids {
		if n > 1 {
			t.Fatalf("job id %d was returned for %d different submissions", id, n)
		}
	}
	held := 0
	for j, err := range c.AllJobs(ctx, &longfairv1.ListJobsRequest{Account: "astro"}) {
		if err != nil {
			t.Fatal(err)
		}
		if ids[j.GetId()] != 1 {
			t.Errorf("the cluster holds job %d, which no submission returned", j.GetId())
		}
		held++
	}
	if held != len(ids) {
		t.Fatalf("the cluster holds %d jobs for %d acknowledged submissions", held, len(ids))
	}
}

// TestLostAnswersAreAppliedOnce loses the first answer to each kind of
// write after the server applied it. The client must retry and report
// success, and the cluster must have applied each write once.
func TestLostAnswersAreAppliedOnce(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	proxy := startProxy(t, g.Addrs()[0], func(method string, n int) bool {
		return n == 1 && strings.Contains(method, "/Create") || n == 1 && strings.HasSuffix(method, "/SubmitJob")
	})
	c, err := client.New([]string{proxy.addr}, client.WithToken("s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	acct, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "bio", Weight: new(2.0)})
	if err != nil {
		t.Fatalf("create account with a lost answer: %v", err)
	}
	if acct.GetName() != "bio" || acct.GetWeight() != 2 {
		t.Fatalf("create account returned %v", acct)
	}
	if _, err := c.Users().CreateUser(ctx, &longfairv1.CreateUserRequest{Name: "bob", Accounts: []string{"bio"}}); err != nil {
		t.Fatalf("create user with a lost answer: %v", err)
	}
	const amount = 5_000 * client.MicroSUPerSU
	if _, err := c.Grants().CreateGrant(ctx, &longfairv1.CreateGrantRequest{Account: "bio", AmountMicroSu: amount}); err != nil {
		t.Fatalf("grant with a lost answer: %v", err)
	}
	job, err := c.Submit(ctx, smallJob("bio", "bob"))
	if err != nil {
		t.Fatalf("submit with a lost answer: %v", err)
	}
	for _, m := range []string{"/longfair.v1.Accounts/CreateAccount", "/longfair.v1.Users/CreateUser", "/longfair.v1.Grants/CreateGrant", "/longfair.v1.Jobs/SubmitJob"} {
		if n := proxy.count(m); n < 2 {
			t.Errorf("%s was called %d times: the lost answer was not retried", m, n)
		}
	}

	bal, err := c.Ledger().GetBalance(ctx, &longfairv1.GetBalanceRequest{Account: "bio"})
	if err != nil {
		t.Fatal(err)
	}
	if bal.GetGrantedMicroSu() != amount {
		t.Errorf("granted %s SU after one grant of %s SU whose answer was lost", client.FormatSU(bal.GetGrantedMicroSu()), client.FormatSU(amount))
	}
	var jobs []uint64
	for j, err := range c.AllJobs(ctx, &longfairv1.ListJobsRequest{Account: "bio"}) {
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j.GetId())
	}
	if len(jobs) != 1 || jobs[0] != job.GetId() {
		t.Errorf("jobs %v after one submission (job %d) whose answer was lost", jobs, job.GetId())
	}
	for _, md := range proxy.metadata() {
		if got := md.Get(longfairv1.AuthorizationMetadataKey); len(got) != 1 || got[0] != "Bearer s3cret" {
			t.Fatalf("authorization metadata %q, want the bearer token on every call", got)
		}
	}
}

// TestCreateThatReallyExistsIsStillRefused: without a lost answer, a name
// that is taken is an error, not silently the existing object.
func TestCreateThatReallyExistsIsStillRefused(t *testing.T) {
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
	_, err = c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "astro"})
	if status.Code(err) != codes.AlreadyExists {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
}

func TestConsistentReadsAskTheLeader(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	proxy := startProxy(t, g.Addrs()[0], nil)
	c, err := client.New([]string{proxy.addr}, client.WithConsistentReads(true))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Accounts().ListAccounts(ctx, &longfairv1.ListAccountsRequest{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Accounts().ListAccounts(client.StaleRead(ctx), &longfairv1.ListAccountsRequest{}); err != nil {
		t.Fatal(err)
	}
	md := proxy.metadata()
	if len(md) != 2 {
		t.Fatalf("%d calls reached the server, want 2", len(md))
	}
	if v := md[0].Get(longfairv1.ConsistentReadMetadataKey); len(v) != 1 || v[0] != "true" {
		t.Errorf("default read carried %s=%q, want \"true\"", longfairv1.ConsistentReadMetadataKey, v)
	}
	if v := md[1].Get(longfairv1.ConsistentReadMetadataKey); len(v) != 0 {
		t.Errorf("StaleRead carried %s=%q, want nothing", longfairv1.ConsistentReadMetadataKey, v)
	}
}

// closedAddr returns a loopback address nobody listens on.
func closedAddr(t *testing.T) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func TestNoServerFailsFastWithTheAddress(t *testing.T) {
	addr := closedAddr(t)
	c, err := client.New([]string{addr}, client.WithRetry(time.Minute, 500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testContext(t, 30*time.Second)
	_, err = c.Accounts().ListAccounts(ctx, &longfairv1.ListAccountsRequest{})
	if status.Code(err) != codes.Unavailable || !errors.Is(err, client.ErrUnreachable) {
		t.Fatalf("call to a closed port: %v, want Unavailable and ErrUnreachable before the context's deadline", err)
	}
	msg := status.Convert(err).Message()
	if !strings.Contains(msg, addr) || !strings.Contains(msg, client.EnvAddr) {
		t.Errorf("message %q does not name the address and how to change it", msg)
	}
}

func TestMalformedRequestNeverLeavesTheProcess(t *testing.T) {
	c, err := client.New([]string{closedAddr(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := testContext(t, 10*time.Second)
	_, err = c.Submit(ctx, client.JobSpec{Account: "astro", User: "ann", Walltime: time.Minute, Command: []string{"x"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "demand") {
		t.Fatalf("submit without demand: %v, want InvalidArgument about demand", err)
	}
}

func TestIteratorsWalkEveryPage(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	c, err := client.New(g.Addrs(), client.WithPageSize(2))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("acct%02d", i)
		want = append(want, name)
		if _, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Grants().CreateGrant(ctx, &longfairv1.CreateGrantRequest{Account: name, AmountMicroSu: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for a, err := range c.AllAccounts(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, a.GetName())
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("accounts %v, want %v", got, want)
	}
	var seqs []uint64
	for e, err := range c.Journal(ctx, "", 0) {
		if err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.GetSeq())
	}
	if len(seqs) != 7 {
		t.Fatalf("journal has %d entries, want one per grant (7)", len(seqs))
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("journal sequence %v is not increasing", seqs)
		}
	}
	// Breaking out of the loop stops fetching.
	n := 0
	for range c.AllAccounts(ctx) {
		n++
		break
	}
	if n != 1 {
		t.Fatalf("loop ran %d times after break", n)
	}
}

func TestWaitJobEndsWhenTheJobIsCancelled(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	c, err := client.New(g.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	setupAccount(ctx, t, c, "astro", "ann")
	job, err := c.Submit(ctx, smallJob("astro", "ann"))
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	done := make(chan error, 1)
	go func() {
		_, err := c.WaitJob(ctx, job.GetId(), 20*time.Millisecond, func(j *longfairv1.Job) {
			seen = append(seen, client.StateName(j.GetState()))
		})
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if _, err := c.Cancel(ctx, job.GetId()); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if !errors.Is(err, client.ErrJobNotSucceeded) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("WaitJob on a cancelled job: %v, want ErrJobNotSucceeded saying cancelled", err)
	}
	if len(seen) != 2 || seen[0] != "pending" || seen[1] != "cancelled" {
		t.Fatalf("changes seen %v, want [pending cancelled]", seen)
	}
}

func TestSnapshotSaveAndRestore(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx := testContext(t, 30*time.Second)
	c, err := client.New(g.Addrs())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	setupAccount(ctx, t, c, "astro", "ann")
	var buf bytes.Buffer
	var last int64
	info, err := c.SaveSnapshot(ctx, &buf, func(n int64) {
		if n <= last {
			t.Errorf("progress went from %d to %d", last, n)
		}
		last = n
	})
	if err != nil {
		t.Fatal(err)
	}
	if info.Bytes != int64(buf.Len()) || last != info.Bytes {
		t.Fatalf("info says %d bytes, progress ended at %d, wrote %d", info.Bytes, last, buf.Len())
	}
	if info.Index == 0 || info.NodeID != "s1" {
		t.Errorf("snapshot header not read: %+v", info)
	}
	if _, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "late"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RestoreSnapshot(ctx, bytes.NewReader(buf.Bytes()), nil); err != nil {
		t.Fatal(err)
	}
	_, err = c.Accounts().GetAccount(client.ConsistentRead(ctx), &longfairv1.GetAccountRequest{Name: "late"})
	if status.Code(err) != codes.NotFound {
		t.Fatalf("account created after the snapshot: %v after restore, want NotFound", err)
	}
	if _, err := c.Accounts().GetAccount(client.ConsistentRead(ctx), &longfairv1.GetAccountRequest{Name: "astro"}); err != nil {
		t.Fatalf("account in the snapshot: %v", err)
	}
	// A damaged snapshot is refused and changes nothing.
	bad := bytes.Clone(buf.Bytes())
	bad[len(bad)/2] ^= 0xff
	if _, err := c.RestoreSnapshot(ctx, bytes.NewReader(bad), nil); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("restore of a damaged snapshot: %v, want InvalidArgument", err)
	}
}

// A listing that shows the first N asks pages of N: AllJobs and
// AllJournal fetch the page size their request gives, and the client's
// own without one.
func TestListingsAskThePageSizeTheyAreGiven(t *testing.T) {
	g := testcluster.New(t, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var mu sync.Mutex
	var asked []int32
	count := grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(interface{ GetPageSize() int32 }); ok {
			mu.Lock()
			asked = append(asked, r.GetPageSize())
			mu.Unlock()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
	c, err := client.New(g.Addrs(), client.WithPageSize(4), client.WithDialOptions(count))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Accounts().CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Users().CreateUser(ctx, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Grants().CreateGrant(ctx, &longfairv1.CreateGrantRequest{Account: "phys", AmountMicroSu: 1e12}); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if _, err := c.Submit(ctx, client.JobSpec{Account: "phys", User: "ann", Demand: map[string]float64{"cpu": 1}, Tasks: 1,
			Walltime: time.Minute, Command: []string{"true"}, Hold: true}); err != nil {
			t.Fatal(err)
		}
	}
	list := func(size int32, show int) []uint64 {
		mu.Lock()
		asked = nil
		mu.Unlock()
		var ids []uint64
		for j, err := range c.AllJobs(ctx, &longfairv1.ListJobsRequest{PageSize: size}) {
			if err != nil {
				t.Fatal(err)
			}
			if ids = append(ids, j.GetId()); len(ids) == show {
				break
			}
		}
		return ids
	}
	if ids := list(2, 2); len(ids) != 2 || ids[0] != 5 || ids[1] != 4 || !slices.Equal(asked, []int32{2}) {
		t.Errorf("the newest 2 in pages of 2: jobs %v, pages asked %v; want [5 4] in one page of 2", ids, asked)
	}
	if ids := list(0, 0); len(ids) != 5 || !slices.Equal(asked, []int32{4, 4}) {
		t.Errorf("every job in the client's pages: jobs %v, pages asked %v; want 5 jobs in pages of 4", ids, asked)
	}
	journal := func(size int32, show int) (n int) {
		mu.Lock()
		asked = nil
		mu.Unlock()
		for _, err := range c.AllJournal(ctx, &longfairv1.ListJournalRequest{PageSize: size}) {
			if err != nil {
				t.Fatal(err)
			}
			if n++; n == show {
				break
			}
		}
		return n
	}
	if n := journal(1, 1); n != 1 || !slices.Equal(asked, []int32{1}) {
		t.Errorf("the first journal entry in pages of 1: %d entries, pages asked %v; want one page of 1", n, asked)
	}
	if n := journal(5000, 0); n == 0 || len(asked) != 1 || asked[0] != longfairv1.MaxPageSize {
		t.Errorf("a page size above the most: %d entries, pages asked %v; want one page of %d", n, asked, longfairv1.MaxPageSize)
	}
	if n := journal(0, 0); n == 0 || len(asked) == 0 || asked[0] != 4 {
		t.Errorf("the journal in the client's pages: %d entries, pages asked %v; want pages of 4", n, asked)
	}
}
