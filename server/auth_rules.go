package server

import (
	"slices"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/fsm"
)

// access is who may call a method at all.
type access int

const (
	// accessAdmin: admin tokens only. Unlisted methods get it.
	accessAdmin access = iota
	// accessOpen: no token needed (health checks, ACL.Bootstrap).
	accessOpen
	// accessAny: any valid token, whatever its role.
	accessAny
	// accessUser: admins, and user tokens within their accounts (the
	// rule's check and filter say which).
	accessUser
	// accessWorker: admins and worker tokens.
	accessWorker
)

// methodRule is who may call a method and, for user tokens, which
// requests are theirs and what of an answer they may see.
type methodRule struct {
	access access
	// check refuses a user's request for something outside the user's
	// accounts; nil allows every request.
	check func(u *userScope, req any) error
	// filter removes from an answer what lies outside the user's
	// accounts; nil leaves it whole.
	filter func(u *userScope, resp any)
}

// ruleOf returns the rule of a full gRPC method name. Every longfair.v1
// method is listed; a test checks that none is missing. An unlisted
// method is admin-only.
func ruleOf(fullMethod string) (methodRule, bool) {
	if strings.HasPrefix(fullMethod, "/grpc.health.v1.Health/") {
		return methodRule{access: accessOpen}, true
	}
	if !strings.HasPrefix(fullMethod, apiPrefix) {
		// gRPC's own services (reflection): anyone the cluster knows.
		return methodRule{access: accessAny}, true
	}
	switch strings.TrimPrefix(fullMethod, apiPrefix) {
	case "ACL/Bootstrap":
		return methodRule{access: accessOpen}, true
	case "Operator/GetStateDigest":
		// A server's digest at a checkpoint, already computed when the
		// checkpoint applied: a hash that tells nothing of the state, and
		// what the leader's periodic state check asks every server for,
		// holding no token of its own (integrity.go).
		return methodRule{access: accessOpen}, true
	case "ACL/WhoAmI",
		"Operator/ListPeers", "Operator/GetLeader", "Operator/GetRaftStatus", "Operator/GetSettings", "Operator/ListNodes",
		// The tree's shape is the cluster's layout, like the settings;
		// what accounts hold (GetAccountTree) is filtered below.
		"Groups/ListGroups":
		return methodRule{access: accessAny}, true
	case "ACL/CreateToken", "ACL/ListTokens", "ACL/RevokeToken",
		"Accounts/CreateAccount", "Accounts/UpdateAccount", "Accounts/SetLimits",
		"Users/CreateUser", "Users/AddMembership", "Users/RemoveMembership", "Users/SetUserUnix",
		"Grants/CreateGrant",
		"Ledger/Verify",
		"Operator/AddPeer", "Operator/RemovePeer", "Operator/SaveSnapshot", "Operator/RestoreSnapshot",
		"Operator/UpdateSettings", "Operator/VerifyState",
		"Groups/SetGroupWeight", "Groups/RemoveGroup", "Groups/SetAccountGroup",
		"Queues/CreateLatencyQueue", "Queues/RemoveLatencyQueue",
		// Served by workers; a server never serves them.
		"TaskOutput/ReadTaskOutput", "Allocation/Exec":
		return methodRule{access: accessAdmin}, true
	case "Workers/Connect":
		return methodRule{access: accessWorker}, true
	case "Accounts/GetAccount":
		return userRule(checkOf(func(u *userScope, r *longfairv1.GetAccountRequest) error { return u.member(r.GetName()) }), nil), true
	case "Accounts/ListAccounts":
		return userRule(nil, filterOf(func(u *userScope, r *longfairv1.ListAccountsResponse) {
			r.Accounts = slices.DeleteFunc(r.Accounts, func(a *longfairv1.Account) bool { return !u.isMember(a.GetName()) })
		})), true
	case "Users/GetUser":
		return userRule(checkOf(func(u *userScope, r *longfairv1.GetUserRequest) error { return u.self(r.GetName()) }), nil), true
	case "Users/ListUsers":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ListUsersRequest) error { return u.optionalMember(r.GetAccount()) }),
			filterOf(func(u *userScope, r *longfairv1.ListUsersResponse) {
				r.Users = slices.DeleteFunc(r.Users, func(o *longfairv1.User) bool {
					return o.GetName() != u.user && !slices.ContainsFunc(o.GetAccounts(), u.isMember)
				})
			})), true
	case "Grants/ListGrants":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ListGrantsRequest) error { return u.optionalMember(r.GetAccount()) }),
			filterOf(func(u *userScope, r *longfairv1.ListGrantsResponse) {
				r.Grants = slices.DeleteFunc(r.Grants, func(g *longfairv1.Grant) bool { return !u.isMember(g.GetAccount()) })
			})), true
	case "Jobs/SubmitJob", "Jobs/QuoteJob":
		// A quote answers for whoever may submit the same request.
		return userRule(checkOf(func(u *userScope, r *longfairv1.SubmitJobRequest) error {
			if err := u.self(r.GetUser()); err != nil {
				return err
			}
			return u.member(r.GetAccount())
		}), nil), true
	case "Jobs/CancelJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.CancelJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/UpdateJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.UpdateJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/SignalJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.SignalJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/RequeueJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.RequeueJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/HoldJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.HoldJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/ReleaseJob":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ReleaseJobRequest) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/GetJob", "Workers/ReadTaskOutput":
		// One rule: a worker asked for a job's output directly asks the
		// servers Jobs.GetJob with its caller's token, and serves the
		// output when they answer (worker/caller_auth.go).
		return userRule(checkOf(func(u *userScope, r interface{ GetJobId() uint64 }) error { return u.job(r.GetJobId()) }), nil), true
	case "Jobs/ExplainJob":
		// Whoever may see the job may see why it waits; the account
		// ranked first is named only to its members.
		return userRule(checkOf(func(u *userScope, r *longfairv1.ExplainJobRequest) error { return u.job(r.GetJobId()) }),
			filterOf(func(u *userScope, r *longfairv1.JobExplanation) { u.hideFirstAccount(r) })), true
	case "Jobs/ExplainJobs":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ExplainJobsRequest) error { return u.jobs(r.GetJobIds()) }),
			filterOf(func(u *userScope, r *longfairv1.ExplainJobsResponse) {
				for _, x := range r.GetExplanations() {
					u.hideFirstAccount(x)
				}
			})), true
	case "Jobs/ListTasks":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ListTasksRequest) error {
			if len(r.GetJobIds()) == 0 {
				return u.job(r.GetJobId())
			}
			return u.jobs(r.GetJobIds())
		}), nil), true
	case "Jobs/ListJobs":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ListJobsRequest) error { return u.optionalMember(r.GetAccount()) }),
			filterOf(func(u *userScope, r *longfairv1.ListJobsResponse) {
				r.Jobs = slices.DeleteFunc(r.Jobs, func(j *longfairv1.Job) bool { return !u.isMember(j.GetAccount()) })
			})), true
	case "Fairness/GetFairnessReport":
		return userRule(checkOf(func(u *userScope, r *longfairv1.GetFairnessReportRequest) error {
			return u.optionalMember(r.GetAccount())
		}),
			filterOf(func(u *userScope, r *longfairv1.FairnessReport) {
				r.Accounts = slices.DeleteFunc(r.Accounts, func(a *longfairv1.AccountFairness) bool { return !u.isMember(a.GetAccount()) })
			})), true
	case "Fairness/GetFairnessHistory":
		// As the report: a user names only accounts they belong to, and
		// sees only those.
		return userRule(checkOf(func(u *userScope, r *longfairv1.GetFairnessHistoryRequest) error {
			for _, a := range r.GetAccounts() {
				if err := u.optionalMember(a); err != nil {
					return err
				}
			}
			return nil
		}),
			filterOf(func(u *userScope, r *longfairv1.FairnessHistory) {
				for _, s := range r.GetSamples() {
					s.Accounts = slices.DeleteFunc(s.Accounts, func(a *longfairv1.AccountSample) bool { return !u.isMember(a.GetAccount()) })
				}
			})), true
	case "Groups/GetAccountTree":
		// Groups show what their subtrees hold in total; a user sees the
		// leaves of its own accounts only.
		return userRule(nil, filterOf(func(u *userScope, r *longfairv1.AccountTree) {
			r.Nodes = slices.DeleteFunc(r.Nodes, func(n *longfairv1.TreeNode) bool { return n.GetIsAccount() && !u.isMember(n.GetName()) })
		})), true
	case "Queues/ListLatencyQueues":
		return userRule(nil, filterOf(func(u *userScope, r *longfairv1.ListLatencyQueuesResponse) {
			r.Queues = slices.DeleteFunc(r.Queues, func(q *longfairv1.LatencyQueue) bool { return !u.isMember(q.GetAccount()) })
		})), true
	case "Ledger/GetBalance":
		return userRule(checkOf(func(u *userScope, r *longfairv1.GetBalanceRequest) error { return u.member(r.GetAccount()) }), nil), true
	case "Ledger/ListJournal":
		return userRule(checkOf(func(u *userScope, r *longfairv1.ListJournalRequest) error { return u.optionalMember(r.GetAccount()) }),
			filterOf(func(u *userScope, r *longfairv1.ListJournalResponse) {
				r.Entries = slices.DeleteFunc(r.Entries, func(e *longfairv1.JournalEntry) bool { return !u.isMember(e.GetAccount()) })
			})), true
	case "Ledger/UsageReport":
		return userRule(checkOf(func(u *userScope, r *longfairv1.UsageReportRequest) error {
			if r.GetAccount() == "" && r.GetGroupBy() == longfairv1.UsageGroupBy_USAGE_GROUP_BY_USER {
				return status.Error(codes.PermissionDenied, "a usage report by user spans every account: name one of your accounts (--account)")
			}
			return u.optionalMember(r.GetAccount())
		}), filterOf(func(u *userScope, r *longfairv1.UsageReportResponse) {
			r.Rows = slices.DeleteFunc(r.Rows, func(row *longfairv1.UsageRow) bool { return !u.isMember(row.GetKey()) })
		})), true
	}
	return methodRule{access: accessAdmin}, false
}

// userRule is an accessUser rule.
func userRule(check func(*userScope, any) error, filter func(*userScope, any)) methodRule {
	return methodRule{access: accessUser, check: check, filter: filter}
}

// checkOf adapts a typed request check. A request of another type than
// the method's is a bug, refused rather than let through.
func checkOf[Req any](check func(*userScope, Req) error) func(*userScope, any) error {
	return func(u *userScope, req any) error {
		r, ok := req.(Req)
		if !ok {
			return status.Errorf(codes.Internal, "authorization: request is %T, not the method's type", req)
		}
		return check(u, r)
	}
}

// filterOf adapts a typed answer filter.
func filterOf[Resp any](filter func(*userScope, Resp)) func(*userScope, any) {
	return func(u *userScope, resp any) {
		if r, ok := resp.(Resp); ok {
			filter(u, r)
		}
	}
}

// userScope is what a user token may reach: its user's accounts, read
// from this server's replica when the call arrives.
type userScope struct {
	user     string
	accounts []string // sorted
	fsm      *fsm.FSM
}

func (u *userScope) isMember(account string) bool {
	_, ok := slices.BinarySearch(u.accounts, account)
	return ok
}

func (u *userScope) member(account string) error {
	if u.isMember(account) {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "user %s is not a member of account %q: a user token reaches only its user's accounts (%s)",
		u.user, account, u.accountList())
}

// optionalMember allows an empty account (the answer is filtered) or one
// of the user's.
func (u *userScope) optionalMember(account string) error {
	if account == "" {
		return nil
	}
	return u.member(account)
}

func (u *userScope) self(user string) error {
	if user == u.user {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "this token acts as user %s, not %q: a user token acts only as its own user", u.user, user)
}

// job allows a job of one of the user's accounts. A job this replica does
// not know is left to the handler, which answers NotFound (or to the
// leader, which checks again with everything applied).
func (u *userScope) job(id uint64) error {
	j, err := u.fsm.Job(id)
	if err != nil {
		return nil
	}
	if u.isMember(j.Account) {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "job %d belongs to account %q, which user %s is not a member of", id, j.Account, u.user)
}

// jobs is job for each of ids.
func (u *userScope) jobs(ids []uint64) error {
	for _, id := range ids {
		if err := u.job(id); err != nil {
			return err
		}
	}
	return nil
}

// hideFirstAccount leaves the account an explanation ranks first unnamed
// unless the user is its member.
func (u *userScope) hideFirstAccount(x *longfairv1.JobExplanation) {
	if !u.isMember(x.GetFirstAccount()) {
		x.FirstAccount = ""
	}
}

func (u *userScope) accountList() string {
	if len(u.accounts) == 0 {
		return "none yet; an admin adds memberships with 'longfair user add-to'"
	}
	return strings.Join(u.accounts, ", ")
}
