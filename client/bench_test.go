package client_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
	"github.com/longfair/longfair/internal/testcluster"
)

// BenchmarkSubmit submits one-task jobs through the client (validation,
// idempotency key, retry loop) to a one-server group on loopback, from
// several goroutines, and reports submissions per second.
func BenchmarkSubmit(b *testing.B) {
	g := testcluster.New(b, 1)
	c, err := client.New(g.Addrs())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	setupAccountB(ctx, b, c)
	spec := smallJob("astro", "ann")
	spec.Tasks = 1
	b.ResetTimer()
	start := time.Now()
	b.SetParallelism(8)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Submit(ctx, spec); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submits/s")
}

// BenchmarkReadOverhead compares one read through the client with the same
// read through a bare generated stub, to show what the retrying layer
// costs when nothing fails.
func BenchmarkReadOverhead(b *testing.B) {
	g := testcluster.New(b, 1)
	ctx := context.Background()
	b.Run("client", func(b *testing.B) {
		c, err := client.New(g.Addrs())
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if _, err := c.Operator().GetSettings(ctx, &longfairv1.GetSettingsRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-stub", func(b *testing.B) {
		conn, err := grpc.NewClient(g.Addrs()[0], grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close()
		op := longfairv1.NewOperatorClient(conn)
		for b.Loop() {
			if _, err := op.GetSettings(ctx, &longfairv1.GetSettingsRequest{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
