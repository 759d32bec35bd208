package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// BenchmarkDashboardAccountsData: the data the dashboard's accounts page
// asks for (the fairness report and the last week's fairness history,
// over the JSON API) from one server holding 1,000 accounts and 100,000
// pending jobs (LONGFAIR_BENCH_JOBS changes the count). The goal is
// ≤ 50 ms p99.
func BenchmarkDashboardAccountsData(b *testing.B) {
	const accounts = 1000
	jobs := 100_000
	if v, err := strconv.Atoi(os.Getenv("LONGFAIR_BENCH_JOBS")); err == nil && v > 0 {
		jobs = v
	}
	ctx := context.Background()
	c := testcluster.NewWith(b, 1, withHTTP)
	s := c.WaitLeader(ctx)
	conn := c.Conn(s)
	names := make([]string, accounts)
	for i := range names {
		names[i] = fmt.Sprintf("a%04d", i)
		if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: names[i]}); err != nil {
			b.Fatal(err)
		}
		if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: "g" + names[i], Account: names[i], AmountMicroSu: 1e15}); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := longfairv1.NewUsersClient(conn).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: "u", Accounts: names}); err != nil {
		b.Fatal(err)
	}
	// Submissions from 32 clients at once, so the group commit batches
	// them.
	jc := longfairv1.NewJobsClient(conn)
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for w := range 32 {
		wg.Go(func() {
			for i := w; i < jobs; i += 32 {
				if _, err := jc.SubmitJob(ctx, testcluster.ShellJob(names[i%accounts], "u", fmt.Sprintf("j%d", i), 1, map[string]float64{"cpu": 1}, time.Hour, "true")); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	get := func(path string) {
		resp, err := hc.Get(s.HTTPURL() + path)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n == 0 {
			b.Fatalf("GET %s: %s", path, resp.Status)
		}
	}
	since := url.QueryEscape(time.Now().Add(-7 * 24 * time.Hour).UTC().Format(time.RFC3339))
	var took []time.Duration
	// What the requests allocate (server and client, one process) and how
	// many collections they cause: the tail is the requests a
	// collection's mark phase overlaps.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for range 50 * b.N {
		start := time.Now()
		get("/v1/fairness")
		get("/v1/fairness/history?since=" + since)
		took = append(took, time.Since(start))
	}
	b.StopTimer()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(len(took))/(1<<20), "MiB-alloc/req")
	b.ReportMetric(float64(after.NumGC-before.NumGC), "gc-cycles")
	slices.Sort(took)
	b.ReportMetric(ms(percentile(took, 0.5)), "p50_ms")
	b.ReportMetric(ms(percentile(took, 0.99)), "p99_ms")
	b.ReportMetric(0, "ns/op")
}
