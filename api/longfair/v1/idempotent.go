package longfairv1

// What may be sent again after an attempt whose outcome is unknown: the
// caller gave up on it (its deadline passed, the server stalled, the
// connection broke), yet the server may have applied it, and a paused
// leader that resumes may still get it committed. The client library and
// the servers that forward writes to the leader both decide from these two
// rules, so that they agree on which writes are retried blindly.
//
// The writes of the API, by what repeating them does:
//   - keyed: SubmitJob with a request_id and CreateGrant with an id are
//     applied once per key, and a repeat answers what the first one did;
//   - answer-stable: CancelJob of a cancelled job returns it unchanged;
//   - set state: UpdateAccount, UpdateSettings, memberships, group weights
//     and placement, peers, RevokeToken, RemoveLatencyQueue, restores set
//     state rather than add to it, so a repeat changes nothing more (its
//     answer may differ, for example NotFound after a removal);
//   - named creates: CreateAccount, CreateUser and CreateLatencyQueue are
//     refused with AlreadyExists when repeated; nothing is made twice;
//   - not repeatable: CreateToken and Bootstrap make a new token with a
//     new secret each time, and the secret of the first is only ever in
//     its answer. A repeat would leave a second working token behind.

// RepeatableWrite reports whether a write may be sent again after an
// attempt whose outcome is unknown with the same effect and the same answer
// as sending it once (the keyed and answer-stable writes above). Reads are
// always repeatable and are not listed.
func RepeatableWrite(req any) bool {
	switch m := req.(type) {
	case *SubmitJobRequest:
		return m.GetRequestId() != ""
	case *CreateGrantRequest:
		return m.GetId() != ""
	case *CancelJobRequest, *HoldJobRequest, *ReleaseJobRequest, *UpdateJobRequest:
		return true
	}
	return false
}

// NeverRepeat reports whether a write must not be sent again once an
// attempt may have reached a server: repeating it would create a second
// object (the not-repeatable writes above). The caller should instead say
// that the outcome is unknown and how to check it.
func NeverRepeat(req any) bool {
	switch req.(type) {
	case *CreateTokenRequest, *BootstrapACLRequest:
		return true
	}
	return false
}

// LongRunning reports whether a unary method's answer takes time that
// grows with the ledger (verifying every journal entry, a usage report
// over a long period, digesting every server's state), so that a short
// per-attempt deadline would only cut it off and send it again: the client
// and a forwarding server bound such a call by the caller's deadline alone.
func LongRunning(method string) bool {
	switch method {
	case Ledger_Verify_FullMethodName, Ledger_UsageReport_FullMethodName, Operator_VerifyState_FullMethodName:
		return true
	}
	return false
}
