package server_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
)

// BenchmarkSubmitRoundTripHTTPvsGRPC: the round trip of one job
// submission, committed, from one client to a one-server group, as JSON
// over HTTP and over gRPC, alternating so that both see the same load.
// The HTTP call goes through the gateway to the server's own gRPC
// listener, so it costs the gRPC call plus the gateway's hop; the
// ratio says how much.
func BenchmarkSubmitRoundTripHTTPvsGRPC(b *testing.B) {
	ctx := context.Background()
	c := testcluster.NewWith(b, 1, withHTTP)
	s := c.WaitLeader(ctx)
	account, user := setupAccount(ctx, b, c, "bench")
	jobs := longfairv1.NewJobsClient(c.Conn(s))
	hc := &http.Client{Timeout: 10 * time.Second}
	url := s.HTTPURL() + "/v1/jobs"
	const rounds = 200
	var viaGRPC, viaHTTP []time.Duration
	b.ResetTimer()
	for i := range rounds * b.N {
		start := time.Now()
		if _, err := jobs.SubmitJob(ctx, testcluster.ShellJob(account, user, fmt.Sprintf("g%d", i), 1, map[string]float64{"cpu": 1}, time.Minute, "true")); err != nil {
			b.Fatal(err)
		}
		viaGRPC = append(viaGRPC, time.Since(start))

		body := fmt.Sprintf(`{"account":%q,"user":%q,"demand":{"cpu":1},"tasks":1,"walltime":"60s","command":["true"],"request_id":"h%d"}`, account, user, i)
		start = time.Now()
		resp, err := hc.Post(url, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("HTTP submit: %s", resp.Status)
		}
		viaHTTP = append(viaHTTP, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(viaGRPC)
	slices.Sort(viaHTTP)
	g50, h50 := percentile(viaGRPC, 0.5), percentile(viaHTTP, 0.5)
	b.ReportMetric(ms(g50), "grpc_p50_ms")
	b.ReportMetric(ms(h50), "http_p50_ms")
	b.ReportMetric(ms(percentile(viaGRPC, 0.99)), "grpc_p99_ms")
	b.ReportMetric(ms(percentile(viaHTTP, 0.99)), "http_p99_ms")
	b.ReportMetric(float64(h50)/float64(g50), "http/grpc_p50")
	b.ReportMetric(0, "ns/op")
}
