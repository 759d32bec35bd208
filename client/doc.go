// Package client is the Go library for programs that talk to a longfair
// cluster: submit work, follow it, read fairness and the SU ledger, and run
// the admin and operator calls. The longfair CLI is built on it.
//
// A Client holds one gRPC connection per server address it is given and
// sends each call to one of them. Any server answers: reads come from its
// replica (or, with consistent reads, from the leader after it confirms it
// is current) and writes are forwarded to the leader. While leadership
// moves, servers answer Unavailable; the client then retries the call,
// moving to the next address, with backoff, until the call succeeds, fails
// for another reason, or its retry budget or context runs out.
//
// A server that stops answering (a paused or hung process keeps its
// connections open and silent) does not hold a call until its context
// ends: each attempt of a unary call has its own deadline (2 s by default,
// at most a third of the time the context leaves; WithAttemptTimeout,
// LONGFAIR_ATTEMPT_TIMEOUT, the CLI's --attempt-timeout), after which the
// call moves on to the next server. The silent server is set aside until a
// cheap probe (GetLeader) finds it answering again, and keepalive pings
// close connections to servers that stopped. Servers do the same for the
// writes they forward to a leader that stopped.
//
// Retrying a write is only safe when applying it twice does no harm, so the
// client makes every write idempotent before it is sent:
//
//   - SubmitJob without a request_id gets a random one, so a retried
//     submission returns the job the first attempt created;
//   - CreateGrant without an id gets a random one, so a retried grant
//     credits the account once;
//   - CreateAccount and CreateUser that find the name taken after an
//     attempt whose outcome was unknown return what is there;
//   - the other writes (settings, weights, memberships, cancel, peers,
//     restore) set state rather than add to it;
//   - tokens (ACL CreateToken and Bootstrap) cannot be made idempotent:
//     their secret is only ever in the first answer. One whose attempt
//     reached a server that then did not answer is not retried; the call
//     fails with ErrOutcomeUnknown, which says to check the token list.
//
// Which writes may be repeated is decided in one place for the client and
// the servers: longfairv1.RepeatableWrite and longfairv1.NeverRepeat.
//
// A program that submits work:
//
//	c, err := client.New([]string{"10.0.0.1:7410", "10.0.0.2:7410", "10.0.0.3:7410"},
//		client.WithToken(os.Getenv("LONGFAIR_TOKEN")))
//	if err != nil { ... }
//	defer c.Close()
//	job, err := c.Submit(ctx, client.JobSpec{
//		Account: "astro", User: "ann", Tasks: 100,
//		Demand:   map[string]float64{"cpu": 2, "mem": 4 << 30},
//		Walltime: 30 * time.Minute,
//		Command:  []string{"./simulate", "--seed", "$LONGFAIR_TASK_INDEX"},
//	})
//	if err != nil { ... }
//	job, err = c.WaitJob(ctx, job.GetId(), time.Second, nil)
//
// Errors are gRPC status errors (google.golang.org/grpc/status) whose
// message says what was wrong and what to do; status.Code tells them
// apart: InvalidArgument, NotFound, AlreadyExists, FailedPrecondition,
// ResourceExhausted (not enough SUs), Unavailable (no server reachable or
// no leader within the retry budget).
package client
