package server

import (
	"encoding/base64"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/ledger"
)

// now is the time reads are evaluated at (balances with expiring grants,
// fairness projected to the present). Only the server reads the clock; the
// FSM is handed times.
func now() ledger.Time { return ledger.Time(time.Now().UnixNano()) }

// timestamp converts a ledger time; zero means "not set" and gives nil.
func timestamp(t ledger.Time) *timestamppb.Timestamp {
	if t == 0 {
		return nil
	}
	return timestamppb.New(time.Unix(0, int64(t)))
}

// ledgerTime converts a validated timestamp; nil gives zero.
func ledgerTime(ts *timestamppb.Timestamp) ledger.Time {
	if ts == nil {
		return 0
	}
	return ledger.Time(ts.AsTime().UnixNano())
}

func duration(d time.Duration) *durationpb.Duration { return durationpb.New(d) }

// optionalDuration is d, unset when 0 (not known).
func optionalDuration(d time.Duration) *durationpb.Duration {
	if d == 0 {
		return nil
	}
	return durationpb.New(d)
}

// pageSize turns a validated page_size into a limit: 0 is the default.
func pageSize(n int32) int {
	if n <= 0 {
		return longfairv1.DefaultPageSize
	}
	return int(n)
}

// Page tokens are opaque to callers: the cursor of the last item, base64
// so that nobody is tempted to build one by hand.
func encodeToken(cursor string) string {
	if cursor == "" {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(cursor))
}

func decodeToken(token string) (string, error) {
	if token == "" {
		return "", nil
	}
	b, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil || len(b) == 0 {
		return "", status.Error(codes.InvalidArgument, "page_token is not one this server issued: pass the next_page_token of the previous response unchanged")
	}
	return string(b), nil
}

func encodeUintToken(cursor uint64) string {
	if cursor == 0 {
		return ""
	}
	return encodeToken(strconv.FormatUint(cursor, 10))
}

func decodeUintToken(token string) (uint64, error) {
	s, err := decodeToken(token)
	if err != nil || s == "" {
		return 0, err
	}
	v, perr := strconv.ParseUint(s, 10, 64)
	if perr != nil || v == 0 {
		return 0, status.Error(codes.InvalidArgument, "page_token is not one this server issued: pass the next_page_token of the previous response unchanged")
	}
	return v, nil
}
