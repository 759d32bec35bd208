package client

import (
	"context"
	"fmt"
	"iter"
	"slices"

	"google.golang.org/protobuf/proto"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
)

// pages walks a paged list: fetch returns one page and the token of the
// next (empty at the end). The walk stops at the first error, which it
// yields. A server that hands back the token it was given would make the
// walk repeat one page forever, so that is an error too.
func pages[T any](ctx context.Context, fetch func(ctx context.Context, token string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		token := ""
		for {
			items, next, err := fetch(ctx, token)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if next == token {
				yield(zero, fmt.Errorf("the server returned page token %q for the page it was asked for, so the list would never end: the server is faulty, upgrade or report it", token))
				return
			}
			token = next
		}
	}
}

// AllJobs lists every job that matches req (its page token is ignored),
// newest first, fetching pages as the loop goes. Each page holds
// req.PageSize jobs (at most 1000) when it is set, else the client's page
// size (WithPageSize): a caller that shows the newest N asks pages of N, so
// that the server neither reads nor sends a thousand to show fifty.
func (c *Client) AllJobs(ctx context.Context, req *longfairv1.ListJobsRequest) iter.Seq2[*longfairv1.Job, error] {
	size := c.pageSize(req.GetPageSize())
	if req == nil {
		req = &longfairv1.ListJobsRequest{}
	}
	return pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.Job, string, error) {
		// Every field the caller set (a newer one too), and the page.
		r := proto.CloneOf(req)
		r.PageSize, r.PageToken = size, token
		resp, err := c.Jobs().ListJobs(ctx, r)
		return resp.GetJobs(), resp.GetNextPageToken(), err
	})
}

// AllTasks lists the tasks of a job that have been placed at least once,
// by index (the latest attempt of each).
func (c *Client) AllTasks(ctx context.Context, jobID uint64) iter.Seq2[*longfairv1.Task, error] {
	return c.tasks(ctx, jobID, false)
}

// AllAttempts is AllTasks with every attempt of each task, oldest first.
func (c *Client) AllAttempts(ctx context.Context, jobID uint64) iter.Seq2[*longfairv1.Task, error] {
	return c.tasks(ctx, jobID, true)
}

func (c *Client) tasks(ctx context.Context, jobID uint64, all bool) iter.Seq2[*longfairv1.Task, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.Task, string, error) {
		resp, err := c.Jobs().ListTasks(ctx, &longfairv1.ListTasksRequest{JobId: jobID, PageSize: c.opts.pageSize, PageToken: token, AllAttempts: all})
		return resp.GetTasks(), resp.GetNextPageToken(), err
	})
}

// TasksOf lists the tasks of each of jobs in turn, as AllTasks lists one
// job's (or, with all, AllAttempts), in as few calls as it can: a call
// names up to MaxTaskListJobs jobs. Each task carries its job's id. A job
// that does not exist, or that the caller may not see, is an error.
func (c *Client) TasksOf(ctx context.Context, jobs []uint64, all bool) iter.Seq2[*longfairv1.Task, error] {
	return func(yield func(*longfairv1.Task, error) bool) {
		for chunk := range slices.Chunk(jobs, longfairv1.MaxTaskListJobs) {
			for t, err := range pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.Task, string, error) {
				resp, err := c.Jobs().ListTasks(ctx, &longfairv1.ListTasksRequest{JobIds: chunk, PageSize: c.opts.pageSize, PageToken: token, AllAttempts: all})
				return resp.GetTasks(), resp.GetNextPageToken(), err
			}) {
				if !yield(t, err) || err != nil {
					return
				}
			}
		}
	}
}

// AllAccounts lists every account in name order.
func (c *Client) AllAccounts(ctx context.Context) iter.Seq2[*longfairv1.Account, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.Account, string, error) {
		resp, err := c.Accounts().ListAccounts(ctx, &longfairv1.ListAccountsRequest{PageSize: c.opts.pageSize, PageToken: token})
		return resp.GetAccounts(), resp.GetNextPageToken(), err
	})
}

// AllUsers lists every user in name order; with an account, only its
// members.
func (c *Client) AllUsers(ctx context.Context, account string) iter.Seq2[*longfairv1.User, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.User, string, error) {
		resp, err := c.Users().ListUsers(ctx, &longfairv1.ListUsersRequest{Account: account, PageSize: c.opts.pageSize, PageToken: token})
		return resp.GetUsers(), resp.GetNextPageToken(), err
	})
}

// AllGrants lists every grant in id order; with an account, only its
// grants.
func (c *Client) AllGrants(ctx context.Context, account string) iter.Seq2[*longfairv1.Grant, error] {
	return pages(ctx, func(ctx context.Context, token string) ([]*longfairv1.Grant, string, error) {
		resp, err := c.Grants().ListGrants(ctx, &longfairv1.ListGrantsRequest{Account: account, PageSize: c.opts.pageSize, PageToken: token})
		return resp.GetGrants(), resp.GetNextPageToken(), err
	})
}

// Journal lists the SU journal in sequence order from the entry after
// afterSeq; with an account, only entries that touch it.
func (c *Client) Journal(ctx context.Context, account string, afterSeq uint64) iter.Seq2[*longfairv1.JournalEntry, error] {
	return c.AllJournal(ctx, &longfairv1.ListJournalRequest{Account: account, AfterSeq: afterSeq})
}

// AllJournal is Journal for a request: from the entry after
// req.AfterSeq, only entries that touch req.Account when it is set, in
// pages of req.PageSize entries (at most 1000) when it is set, else of
// the client's page size — a caller that shows the first N asks N.
func (c *Client) AllJournal(ctx context.Context, req *longfairv1.ListJournalRequest) iter.Seq2[*longfairv1.JournalEntry, error] {
	size := c.pageSize(req.GetPageSize())
	return func(yield func(*longfairv1.JournalEntry, error) bool) {
		after := req.GetAfterSeq()
		for {
			resp, err := c.Ledger().ListJournal(ctx, &longfairv1.ListJournalRequest{Account: req.GetAccount(), AfterSeq: after, PageSize: size})
			if err != nil {
				yield(nil, err)
				return
			}
			for _, e := range resp.GetEntries() {
				if !yield(e, nil) {
					return
				}
			}
			if resp.GetNextAfterSeq() == 0 || resp.GetNextAfterSeq() <= after {
				return
			}
			after = resp.GetNextAfterSeq()
		}
	}
}

// pageSize is the page size a request asks (at most 1000), or the
// client's when it asks none.
func (c *Client) pageSize(asked int32) int32 {
	if asked <= 0 {
		return c.opts.pageSize
	}
	return min(asked, longfairv1.MaxPageSize)
}
