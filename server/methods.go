package server

import "strings"

// methodKind says where an RPC may be served.
type methodKind int

const (
	// kindLocal is served by whichever server receives it (gRPC's own
	// services, and questions about this server's view of the group).
	kindLocal methodKind = iota
	// kindRead is served from the local FSM, or by the leader after
	// confirming its leadership when the caller asks for a consistent read.
	kindRead
	// kindLeader runs on the leader only, and followers forward it there:
	// every write (proposed through Raft) and the operator actions that
	// need the leader's state.
	kindLeader
)

// apiPrefix is the gRPC path prefix of longfair's own services.
const apiPrefix = "/longfair.v1."

// methodKindOf classifies a full gRPC method name. Every longfair.v1 method
// is listed; a test checks that none is missing. An unlisted method is sent
// to the leader, which can serve anything.
func methodKindOf(fullMethod string) (methodKind, bool) {
	if !strings.HasPrefix(fullMethod, apiPrefix) {
		return kindLocal, true
	}
	switch strings.TrimPrefix(fullMethod, apiPrefix) {
	case "Accounts/CreateAccount", "Accounts/UpdateAccount", "Accounts/SetLimits",
		"Users/CreateUser", "Users/AddMembership", "Users/RemoveMembership", "Users/SetUserUnix",
		"Grants/CreateGrant",
		"Jobs/SubmitJob", "Jobs/CancelJob", "Jobs/HoldJob", "Jobs/ReleaseJob", "Jobs/UpdateJob", "Jobs/RequeueJob",
		// Sent through the workers' streams, which the leader holds.
		"Jobs/SignalJob",
		"Operator/AddPeer", "Operator/RemovePeer",
		"Operator/UpdateSettings", "Operator/RestoreSnapshot",
		"ACL/Bootstrap", "ACL/CreateToken", "ACL/RevokeToken",
		"Groups/SetGroupWeight", "Groups/RemoveGroup", "Groups/SetAccountGroup",
		"Queues/CreateLatencyQueue", "Queues/RemoveLatencyQueue",
		// A snapshot is taken by the leader so that it holds everything
		// acknowledged so far.
		"Operator/SaveSnapshot",
		// The leader commits the checkpoint and asks every server.
		"Operator/VerifyState":
		return kindLeader, true
	case "Accounts/GetAccount", "Accounts/ListAccounts",
		"Users/GetUser", "Users/ListUsers",
		"Grants/ListGrants",
		"Jobs/GetJob", "Jobs/ListJobs", "Jobs/ListTasks", "Jobs/ExplainJob", "Jobs/ExplainJobs", "Jobs/QuoteJob",
		"Fairness/GetFairnessReport", "Fairness/GetFairnessHistory",
		"Ledger/GetBalance", "Ledger/ListJournal", "Ledger/Verify", "Ledger/UsageReport",
		"Operator/GetSettings", "Operator/ListNodes",
		"ACL/ListTokens", "ACL/WhoAmI",
		"Groups/ListGroups", "Groups/GetAccountTree", "Queues/ListLatencyQueues":
		return kindRead, true
	case "Operator/ListPeers", "Operator/GetLeader",
		// A server's own digest and Raft state, whatever state it is in.
		"Operator/GetStateDigest", "Operator/GetRaftStatus",
		// A worker's stream must reach the leader itself (the handler
		// refuses it elsewhere, naming the leader), and any server can
		// find a task's worker for its output.
		"Workers/Connect", "Workers/ReadTaskOutput",
		// Served by workers, not servers; listed so that nothing is
		// forwarded to the leader by mistake.
		"TaskOutput/ReadTaskOutput", "Allocation/Exec":
		return kindLocal, true
	}
	return kindLeader, false
}
