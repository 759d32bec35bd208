package fsm

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/longfair/longfair/ledger"
)

// CommandVersion is the envelope version of a single command, which Encode
// writes and Decode reads; MultiVersion wraps several of them in one entry.
// A change to any command's body or meaning gets a new version; entries of
// any other version are refused on every server, so a mixed-version cluster
// never applies one entry two ways. Decode still reads the versions before
// it, each by its own rules (see rules), so an old log replays as it
// applied:
//
//   - 1 (legacyVersion): the first.
//   - 2 is MultiVersion, the envelope of several commands.
//   - 3: the same bodies; text fields (job names, notes, descriptions,
//     reasons, node classes and addresses, command arguments) refuse
//     control, bidirectional formatting and invalid UTF-8 characters
//     (core.CheckText; commands may hold newlines and tabs), and a
//     walltime is at least core.MinWalltime.
//   - 4: the same bodies; an UpdateJob that lowers a walltime leaves the
//     job's placed tasks the limit they were sent (jobs_update.go), where
//     before it bounded their charge too (markVersion); a lost attempt
//     whose task runs again is charged against a hold of its own
//     (rules.fundsRetries); a TaskStarted's
//     runtime dates the start back (TaskEvent), which needs no mark: the
//     leaders before version 4 never logged a start with a runtime.
//
// Servers of releases before version 4 refuse its entries, as they refuse
// any version they do not know: upgrade every server before a leader of
// this release proposes.
const CommandVersion = limitsVersion

// limitsVersion is the version from which placed tasks keep their limits
// and reruns are paid for (see the list above). Rules compare with it, not
// with CommandVersion, so that a later version leaves them as they are.
const limitsVersion = 4

// wholeUnitsVersion is the version that brought whole units and the text
// and walltime rules; Decode still reads it.
const wholeUnitsVersion = 3

// legacyVersion is the first single-command version, which Decode still
// reads, by its own rules.
const legacyVersion = 1

// envelopeHeader is version (1 byte), type (1 byte), leader time (8 bytes,
// big-endian); the JSON body follows.
const envelopeHeader = 10

// MaxCommandBytes bounds an encoded command; bigger ones are refused before
// their body is decoded.
const MaxCommandBytes = 16 << 20

// CommandType names the kind of a command.
type CommandType uint8

// The commands the FSM applies. Values are part of the log format: never
// renumber them.
const (
	TypeCreateAccount    CommandType = 1
	TypeUpdateAccount    CommandType = 2
	TypeCreateUser       CommandType = 3
	TypeAddMembership    CommandType = 4
	TypeRemoveMembership CommandType = 5
	TypeGrant            CommandType = 6
	TypeUpdateSettings   CommandType = 7
	TypeSubmitJob        CommandType = 8
	TypeCancelJob        CommandType = 9
	TypeAssign           CommandType = 10
	TypeTaskEvents       CommandType = 11
	TypeNodeUp           CommandType = 12
	TypeNodeDown         CommandType = 13
	TypeCreateToken      CommandType = 14
	TypeRevokeToken      CommandType = 15
	// The account tree, latency queues and FAWKES partitions
	// (groups.go, queues.go, shares.go).
	TypeSetGroupWeight     CommandType = 16
	TypeRemoveGroup        CommandType = 17
	TypeSetAccountGroup    CommandType = 18
	TypeCreateLatencyQueue CommandType = 19
	TypeRemoveLatencyQueue CommandType = 20
	TypeSetShares          CommandType = 21
	// Integrity checks (integrity.go).
	TypeCheckpoint CommandType = 22
	// Users' Unix accounts (identity.go).
	TypeSetUserUnix CommandType = 23
	// Holding and releasing jobs (jobs_hold.go).
	TypeHoldJob CommandType = 24
	// Account and user limits (limits.go).
	TypeSetLimits CommandType = 25
	// Updating jobs (jobs_update.go).
	TypeUpdateJob CommandType = 26
	// Requeueing jobs (jobs_requeue.go).
	TypeRequeueJob CommandType = 27
)

var commandNames = [...]string{
	TypeCreateAccount:      "create-account",
	TypeUpdateAccount:      "update-account",
	TypeCreateUser:         "create-user",
	TypeAddMembership:      "add-membership",
	TypeRemoveMembership:   "remove-membership",
	TypeGrant:              "grant",
	TypeUpdateSettings:     "update-settings",
	TypeSubmitJob:          "submit-job",
	TypeCancelJob:          "cancel-job",
	TypeHoldJob:            "hold-job",
	TypeSetLimits:          "set-limits",
	TypeUpdateJob:          "update-job",
	TypeRequeueJob:         "requeue-job",
	TypeAssign:             "assign",
	TypeTaskEvents:         "task-events",
	TypeNodeUp:             "node-up",
	TypeNodeDown:           "node-down",
	TypeCreateToken:        "create-token",
	TypeRevokeToken:        "revoke-token",
	TypeSetGroupWeight:     "set-group-weight",
	TypeRemoveGroup:        "remove-group",
	TypeSetAccountGroup:    "set-account-group",
	TypeCreateLatencyQueue: "create-latency-queue",
	TypeRemoveLatencyQueue: "remove-latency-queue",
	TypeSetShares:          "set-shares",
	TypeCheckpoint:         "checkpoint",
	TypeSetUserUnix:        "set-user-unix",
}

func (t CommandType) String() string {
	if int(t) < len(commandNames) && commandNames[t] != "" {
		return commandNames[t]
	}
	return fmt.Sprintf("command-type-%d", uint8(t))
}

// Command is the body of one log entry: one of the command structs of this
// package (CreateAccount, SubmitJob, Assign, …).
type Command interface {
	Type() CommandType
}

// newCommand returns an empty body for t, or nil for an unknown type.
func newCommand(t CommandType) Command {
	switch t {
	case TypeCreateAccount:
		return &CreateAccount{}
	case TypeUpdateAccount:
		return &UpdateAccount{}
	case TypeCreateUser:
		return &CreateUser{}
	case TypeAddMembership:
		return &AddMembership{}
	case TypeRemoveMembership:
		return &RemoveMembership{}
	case TypeGrant:
		return &Grant{}
	case TypeUpdateSettings:
		return &UpdateSettings{}
	case TypeSubmitJob:
		return &SubmitJob{}
	case TypeCancelJob:
		return &CancelJob{}
	case TypeHoldJob:
		return &HoldJob{}
	case TypeSetLimits:
		return &SetLimits{}
	case TypeUpdateJob:
		return &UpdateJob{}
	case TypeRequeueJob:
		return &RequeueJob{}
	case TypeAssign:
		return &Assign{}
	case TypeTaskEvents:
		return &TaskEvents{}
	case TypeNodeUp:
		return &NodeUp{}
	case TypeNodeDown:
		return &NodeDown{}
	case TypeCreateToken:
		return &CreateToken{}
	case TypeRevokeToken:
		return &RevokeToken{}
	case TypeSetGroupWeight:
		return &SetGroupWeight{}
	case TypeRemoveGroup:
		return &RemoveGroup{}
	case TypeSetAccountGroup:
		return &SetAccountGroup{}
	case TypeCreateLatencyQueue:
		return &CreateLatencyQueue{}
	case TypeRemoveLatencyQueue:
		return &RemoveLatencyQueue{}
	case TypeSetShares:
		return &SetShares{}
	case TypeCheckpoint:
		return &Checkpoint{}
	case TypeSetUserUnix:
		return &SetUserUnix{}
	}
	return nil
}

// Envelope is a decoded log entry: the version it was written with, the
// leader's time when it proposed it, and the command.
type Envelope struct {
	Version uint8
	Time    ledger.Time
	Command Command
}

// Encode writes cmd, stamped with the leader's time at, as the bytes of a
// raft log entry. It checks the command's shape (Validate) so that a leader
// never proposes an entry every server would refuse as malformed; checks
// that depend on the cluster state happen at apply.
func Encode(at ledger.Time, cmd Command) ([]byte, error) {
	if cmd == nil || newCommand(cmd.Type()) == nil {
		return nil, invalid("cannot encode %T: not a longfair command", cmd)
	}
	if err := validateShape(cmd, rules{version: CommandVersion}); err != nil {
		return nil, err
	}
	body, err := json.Marshal(cmd)
	if err != nil {
		return nil, invalid("cannot encode %s command: %v", cmd.Type(), err)
	}
	if envelopeHeader+len(body) > MaxCommandBytes {
		return nil, invalid("%s command is %d bytes, more than the %d allowed: split it into smaller ones", cmd.Type(), envelopeHeader+len(body), MaxCommandBytes)
	}
	buf := make([]byte, envelopeHeader, envelopeHeader+len(body))
	buf[0] = CommandVersion
	buf[1] = byte(cmd.Type())
	binary.BigEndian.PutUint64(buf[2:], uint64(at))
	return append(buf, body...), nil
}

// validateShape runs cmd's shape checks by the rules r.
func validateShape(cmd Command, r rules) *Error {
	if v, ok := cmd.(interface{ validate(rules) *Error }); ok {
		return v.validate(r)
	}
	return nil
}

// Decode reads a log entry written by Encode (or by an older release, in
// a version Decode still reads). It refuses, with an *Error,
// anything it cannot apply exactly: a short entry, an unknown version or
// type, a body that is not valid JSON for its type (unknown fields
// included), trailing bytes, or a body that fails the command's shape checks.
// Decode never panics, whatever the bytes.
func Decode(data []byte) (Envelope, error) {
	if len(data) < envelopeHeader {
		return Envelope{}, invalid("log entry is %d bytes, shorter than the %d-byte command header: it was not written by longfair", len(data), envelopeHeader)
	}
	if len(data) > MaxCommandBytes {
		return Envelope{}, invalid("log entry is %d bytes, more than the %d allowed", len(data), MaxCommandBytes)
	}
	env := Envelope{Version: data[0], Time: ledger.Time(binary.BigEndian.Uint64(data[2:]))}
	if env.Version == MultiVersion {
		return Envelope{}, invalid("log entry holds several commands: split it with SplitMulti and decode each one")
	}
	if env.Version != CommandVersion && env.Version != wholeUnitsVersion && env.Version != legacyVersion {
		return Envelope{}, refuse(KindPrecondition, "command version %d is not supported by this server (it applies versions %d, %d, %d and %d): upgrade every server to the same release", env.Version, legacyVersion, MultiVersion, wholeUnitsVersion, CommandVersion)
	}
	t := CommandType(data[1])
	cmd := newCommand(t)
	if cmd == nil {
		return Envelope{}, invalid("unknown command type %d: this server applies types 1–%d; upgrade every server to the same release", t, len(commandNames)-1)
	}
	dec := json.NewDecoder(bytes.NewReader(data[envelopeHeader:]))
	dec.DisallowUnknownFields()
	if err := dec.Decode(cmd); err != nil {
		return Envelope{}, invalid("malformed %s command: %v", t, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Envelope{}, invalid("malformed %s command: trailing data after the body", t)
	}
	if err := validateShape(cmd, rules{version: env.Version}); err != nil {
		return Envelope{}, err
	}
	markVersion(cmd, env.Version)
	env.Command = cmd
	return env, nil
}

// markVersion tells the commands whose apply changed with a later version
// that they were logged before it: version 3 (whole units) and version 4
// (a lowered walltime leaves placed tasks their limit).
func markVersion(cmd Command, version uint8) {
	switch c := cmd.(type) {
	case *SubmitJob:
		c.legacy = version < wholeUnitsVersion
	case *NodeUp:
		c.legacy = version < wholeUnitsVersion
	case *UpdateJob:
		c.boundsPlaced = version < limitsVersion
	}
}
