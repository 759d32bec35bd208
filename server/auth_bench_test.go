package server_test

import (
	"context"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// BenchmarkUnaryCallACL measures a whole unary call (GetBalance, served
// from the local replica) over a loopback connection, with and without
// token checks; the difference is what the ACL costs a call, membership
// check and all.
func BenchmarkUnaryCallACL(b *testing.B) {
	for _, acl := range []bool{false, true} {
		name := "acl=off"
		if acl {
			name = "acl=on,user"
		}
		b.Run(name, func(b *testing.B) {
			c := testcluster.NewACL(b, 1, func(cfg *server.Config) { cfg.ACL.Enabled = acl })
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			conn := c.Conn(c.WaitLeader(ctx))
			admin := testcluster.As(ctx, testcluster.BootstrapSecret)
			if _, err := longfairv1.NewAccountsClient(conn).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
				b.Fatal(err)
			}
			if _, err := longfairv1.NewUsersClient(conn).CreateUser(admin, &longfairv1.CreateUserRequest{Name: "ann", Accounts: []string{"phys"}}); err != nil {
				b.Fatal(err)
			}
			secret, _ := c.CreateToken(ctx, longfairv1.TokenRole_TOKEN_ROLE_USER, "ann", 0)
			call := testcluster.As(ctx, secret)
			ledger := longfairv1.NewLedgerClient(conn)
			req := &longfairv1.GetBalanceRequest{Account: "phys"}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				if _, err := ledger.GetBalance(call, req); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/call")
		})
	}
}
