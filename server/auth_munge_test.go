package server_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/internal/testcluster"
	"github.com/longfair/longfair/server"
)

func asMunge(ctx context.Context, cred string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, longfairv1.AuthorizationMetadataKey, "MUNGE "+cred)
}

// A MUNGE credential of a Unix user acts as the longfair user of that
// account, sent to the leader or to a follower; munged's refusals
// (replayed, expired, forged) and an unmapped uid are refused and change
// nothing.
func TestMungeCredentials(t *testing.T) {
	socket := testcluster.StartMunged(t)
	alice := testcluster.UnixUser(t, "lfmunge-alice")
	carl := testcluster.UnixUser(t, "lfmunge-carl")
	testcluster.UnixUser(t, "lfmunge-nobody")
	c := testcluster.NewACL(t, 3, func(cfg *server.Config) { cfg.ACL.MungeSocket = socket })
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := testcluster.As(ctx, testcluster.BootstrapSecret)
	lc := c.Conn(c.WaitLeader(ctx))
	if _, err := longfairv1.NewAccountsClient(lc).CreateAccount(admin, &longfairv1.CreateAccountRequest{Name: "phys"}); err != nil {
		t.Fatal(err)
	}
	if _, err := longfairv1.NewGrantsClient(lc).CreateGrant(admin, &longfairv1.CreateGrantRequest{Id: "g", Account: "phys", AmountMicroSu: 1e12}); err != nil {
		t.Fatal(err)
	}
	// alice by her own name; carl's account mapped to longfair user "cz" by uid.
	for _, u := range []string{alice.Username, "cz"} {
		if _, err := longfairv1.NewUsersClient(lc).CreateUser(admin, &longfairv1.CreateUserRequest{Name: u, Accounts: []string{"phys"}}); err != nil {
			t.Fatal(err)
		}
	}
	carlUID, _ := strconv.ParseUint(carl.Uid, 10, 32)
	uid := uint32(carlUID)
	if _, err := longfairv1.NewUsersClient(lc).SetUserUnix(admin, &longfairv1.SetUserUnixRequest{User: "cz", Unix: &longfairv1.UnixIdentity{Uid: &uid}}); err != nil {
		t.Fatal(err)
	}
	c.WaitApplied(ctx)

	follower := c.Follower(ctx)
	for i, s := range []*server.Server{c.WaitLeader(ctx), follower} {
		jobs := longfairv1.NewJobsClient(c.Conn(s))
		cred := testcluster.MungeAs(t, socket, alice.Username)
		name := "alice-" + strconv.Itoa(i)
		var job *longfairv1.SubmitJobResponse
		err := testcluster.RetryUnavailable(ctx, t, func() error {
			var err error
			job, err = jobs.SubmitJob(asMunge(ctx, cred), submitReq("phys", alice.Username, name))
			if status.Code(err) == codes.Unavailable {
				// Refused before it was decoded (no leader): not spent,
				// but make another to be sure.
				cred = testcluster.MungeAs(t, socket, alice.Username)
			}
			return err
		})
		if err != nil {
			t.Fatalf("alice's credential via %s: %v", s.NodeID(), err)
		}
		if job.GetJob().GetUser() != alice.Username {
			t.Fatalf("job of user %q", job.GetJob().GetUser())
		}
		// A user acts only as itself.
		_, err = jobs.SubmitJob(asMunge(ctx, testcluster.MungeAs(t, socket, alice.Username)), submitReq("phys", "cz", name+"-as-cz"))
		wantStatus(t, "alice submitting as cz", err, codes.PermissionDenied)
		// The same credential again is a replay.
		_, err = jobs.SubmitJob(asMunge(ctx, cred), submitReq("phys", alice.Username, name+"-replayed"))
		wantStatus(t, "a replayed credential", err, codes.Unauthenticated)
		if !strings.Contains(err.Error(), "Replayed") {
			t.Fatalf("replay refused with %v", err)
		}
	}
	jobs := longfairv1.NewJobsClient(c.Conn(c.WaitLeader(ctx)))
	// A fresh credential for each try: one that was decoded is spent.
	if err := testcluster.RetryUnavailable(ctx, t, func() error {
		_, err := jobs.SubmitJob(asMunge(ctx, testcluster.MungeAs(t, socket, carl.Username)), submitReq("phys", "cz", "cz-1"))
		return err
	}); err != nil {
		t.Fatalf("carl's credential as cz: %v", err)
	}
	// WhoAmI names the user the credential is (the CLI's default --user),
	// through the leader or a follower.
	for _, s := range []*server.Server{c.WaitLeader(ctx), c.Follower(ctx)} {
		who, err := longfairv1.NewACLClient(c.Conn(s)).WhoAmI(asMunge(ctx, testcluster.MungeAs(t, socket, carl.Username)), &longfairv1.WhoAmIRequest{})
		if err != nil || who.GetUser() != "cz" || who.GetRole() != longfairv1.TokenRole_TOKEN_ROLE_USER || who.GetId() != "munge:uid="+carl.Uid {
			t.Fatalf("WhoAmI with carl's credential via %s: %v, %v", s.NodeID(), who, err)
		}
	}
	before := testcluster.Fingerprint(t, c.WaitLeader(ctx))
	expired := testcluster.MungeAs(t, socket, alice.Username, "--ttl=1")
	forged := testcluster.MungeAs(t, socket, alice.Username)
	forged = forged[:len(forged)/2] + flip(forged[len(forged)/2]) + forged[len(forged)/2+1:]
	time.Sleep(2500 * time.Millisecond)
	for _, tc := range []struct {
		what, cred string
		code       codes.Code
		says       string
	}{
		{"an expired credential", expired, codes.Unauthenticated, "Expired"},
		{"a forged credential", forged, codes.Unauthenticated, "refused"},
		{"not a credential", "hello", codes.Unauthenticated, "not a MUNGE credential"},
		{"an unmapped uid", testcluster.MungeAs(t, socket, "lfmunge-nobody"), codes.PermissionDenied, "no longfair user"},
	} {
		_, err := jobs.SubmitJob(asMunge(ctx, tc.cred), submitReq("phys", alice.Username, "refused"))
		wantStatus(t, tc.what, err, tc.code)
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v; want it to say %q", tc.what, err, tc.says)
		}
	}
	if after := testcluster.Fingerprint(t, c.WaitLeader(ctx)); after != before {
		t.Fatalf("refused credentials changed the state:\n%s\n---\n%s", before, after)
	}
}

// flip changes one base64 character of a credential into another.
func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}
