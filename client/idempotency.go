package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// NewRequestID returns a random id for SubmitJob's request_id or a
// grant's id: 24 hex digits, unique for all practical purposes. Programs
// that may submit the same job again after a crash should keep the id they
// used, so that the second submission returns the first job.
func NewRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}

// withIdempotencyKey gives a write that would add something twice when
// retried an id that makes the cluster apply it once. The caller's message
// is not changed: a copy carries the id. The copy is vtprotobuf's
// generated CloneVT, not proto.Clone, whose reflection is set up on its
// first use in a process: about 1 ms of a shell's `longfair submit`.
func withIdempotencyKey(args any) any {
	switch m := args.(type) {
	case *longfairv1.SubmitJobRequest:
		if m.GetRequestId() == "" {
			m = m.CloneVT()
			m.RequestId = NewRequestID()
			return m
		}
	case *longfairv1.CreateGrantRequest:
		if m.GetId() == "" {
			m = m.CloneVT()
			m.Id = "grant-" + NewRequestID()
			return m
		}
	}
	return args
}

// recoverCreate handles a create whose first attempt had an unknown
// outcome and whose retry found the name taken: most likely the first
// attempt succeeded, so the object that is there is returned in reply.
func (c *Client) recoverCreate(ctx context.Context, args, reply any, err error) error {
	if status.Code(err) != codes.AlreadyExists {
		return err
	}
	var got proto.Message
	var gerr error
	switch m := args.(type) {
	case *longfairv1.CreateAccountRequest:
		got, gerr = c.Accounts().GetAccount(ConsistentRead(ctx), &longfairv1.GetAccountRequest{Name: m.GetName()})
	case *longfairv1.CreateUserRequest:
		got, gerr = c.Users().GetUser(ConsistentRead(ctx), &longfairv1.GetUserRequest{Name: m.GetName()})
	default:
		return err
	}
	out, ok := reply.(proto.Message)
	if gerr != nil || !ok {
		return err
	}
	proto.Reset(out)
	proto.Merge(out, got)
	return nil
}
