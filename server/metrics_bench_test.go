package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// BenchmarkMetricsScrape measures one GET /metrics on a server whose
// ledger holds 1,000 accounts, each with a grant and a queued job: the
// per-account β, Ü and SU series are computed from the state at scrape
// time, so this is the cost a Prometheus scrape puts on a server of a
// large center. Reported: ms per scrape, bytes and series per scrape.
func BenchmarkMetricsScrape(b *testing.B) {
	const accounts = 1000
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := testcluster.NewWith(b, 1, withHTTP)
	s := c.WaitLeader(ctx)
	conn := c.Conn(s)
	var wg sync.WaitGroup
	errs := make(chan error, accounts)
	sem := make(chan struct{}, 64)
	for i := range accounts {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			name := fmt.Sprintf("acct%04d", i)
			if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(ctx, &longfairv1.CreateAccountRequest{Name: name, Contribution: ptr(float64(1 + i%7))}); err != nil {
				errs <- err
				return
			}
			if _, err := longfairv1.NewUsersClient(conn).CreateUser(ctx, &longfairv1.CreateUserRequest{Name: name + "-u", Accounts: []string{name}}); err != nil {
				errs <- err
				return
			}
			if _, err := longfairv1.NewGrantsClient(conn).CreateGrant(ctx, &longfairv1.CreateGrantRequest{Id: name + "-g", Account: name, AmountMicroSu: grantMicroSU}); err != nil {
				errs <- err
				return
			}
			if _, err := longfairv1.NewJobsClient(conn).SubmitJob(ctx, submitRequest(name, name+"-u", name+"-j", 4)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatalf("set up %d accounts: %v", accounts, err)
	}
	series := len(scrapeSeries(b, s))
	url := "http://" + s.HTTPAddr() + "/metrics"
	var bytes int64
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		resp, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("scrape: %s %v", resp.Status, err)
		}
		bytes = n
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/1000/float64(b.N), "ms/scrape")
	b.ReportMetric(float64(bytes), "bytes/scrape")
	b.ReportMetric(float64(series), "series/scrape")
}

// scrapeSeries lists every series of one scrape.
func scrapeSeries(tb testing.TB, s *server.Server) []string {
	tb.Helper()
	var out []string
	for name, f := range scrapeMetrics(tb, s) {
		for range f.GetMetric() {
			out = append(out, name)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
