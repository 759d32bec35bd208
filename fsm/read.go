package fsm

import (
	"bytes"
	"fmt"
	"slices"

	bolt "go.etcd.io/bbolt"

	"github.com/longfair/longfair/ledger"
)

// The read methods serve the gRPC API from this replica's state. Each sees
// the state between two applied batches, never half of one: in-memory reads
// hold the FSM's read lock, and reads that scan bbolt use a read
// transaction opened under it. Lists page with a cursor: pass the returned next value
// to continue, and the zero value to start; a zero next means the end.

// MaxPage bounds a page of any list; a limit ≤ 0 or larger gets this.
const MaxPage = 1000

func pageLimit(limit int) int {
	if limit <= 0 || limit > MaxPage {
		return MaxPage
	}
	return limit
}

// readSnap is what a read that scans bbolt needs from the in-memory state,
// captured at the same instant as its read transaction.
type readSnap struct {
	resources []string
	now       ledger.Time
	headSeq   uint64
	head      ledger.Hash
}

// view runs fn with a bbolt read transaction. The FSM's lock is held only
// to open it, so a long scan (a usage report, a journal verification) never
// holds up applies: the transaction keeps seeing the state as it was.
func (f *FSM) view(fn func(rs readSnap, tx *bolt.Tx) error) error {
	f.mu.RLock()
	if f.db == nil {
		f.mu.RUnlock()
		return errClosed
	}
	tx, err := f.db.Begin(false)
	if err != nil {
		f.mu.RUnlock()
		return fmt.Errorf("fsm: read: %w", err)
	}
	rs := readSnap{resources: slices.Clone(f.st.settings.Resources), now: f.st.now}
	rs.headSeq, rs.head = f.st.su.Head()
	f.mu.RUnlock()
	defer tx.Rollback()
	return fn(rs, tx)
}

var errClosed = &Error{Kind: KindUnavailable, Msg: "the state store is closed: the server is shutting down or restoring; retry in a few seconds"}

// Settings returns the cluster settings.
func (f *FSM) Settings() SettingsInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.st.settingsInfo()
}

// Account returns one account.
func (f *FSM) Account(name string) (AccountInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	a, ok := f.st.accounts[name]
	if !ok {
		return AccountInfo{}, notFound("account %q does not exist: check the name", name)
	}
	return f.st.accountInfo(a), nil
}

// Accounts lists accounts in name order after the name after.
func (f *FSM) Accounts(after string, limit int) (accounts []AccountInfo, next string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	names := f.st.accountNames
	i, found := slices.BinarySearch(names, after)
	if found {
		i++
	}
	limit = pageLimit(limit)
	for ; i < len(names) && len(accounts) < limit; i++ {
		accounts = append(accounts, f.st.accountInfo(f.st.accounts[names[i]]))
	}
	if i < len(names) && len(accounts) > 0 {
		next = accounts[len(accounts)-1].Name
	}
	return accounts, next
}

// User returns one user.
func (f *FSM) User(name string) (UserInfo, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	u, ok := f.st.users[name]
	if !ok {
		return UserInfo{}, notFound("user %q does not exist: check the name", name)
	}
	return userInfo(u), nil
}

// Users lists users in name order after the name after; account, if not
// empty, keeps only its members.
func (f *FSM) Users(account, after string, limit int) (users []UserInfo, next string) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	limit = pageLimit(limit)
	names := sortedKeys(f.st.users)
	i, found := slices.BinarySearch(names, after)
	if found {
		i++
	}
	for ; i < len(names); i++ {
		u := f.st.users[names[i]]
		if account != "" {
			if _, member := slices.BinarySearch(u.Accounts, account); !member {
				continue
			}
		}
		if len(users) == limit {
			next = users[len(users)-1].Name
			break
		}
		users = append(users, userInfo(u))
	}
	return users, next
}

// Grants lists grants in id order after the id after; account, if not
// empty, keeps only that account's.
func (f *FSM) Grants(account, after string, limit int) (grants []GrantInfo, next string, err error) {
	limit = pageLimit(limit)
	err = f.view(func(_ readSnap, tx *bolt.Tx) error {
		c := tx.Bucket(bucketGrants).Cursor()
		k, v := c.First()
		if after != "" {
			k, v = c.Seek([]byte(after))
			if k != nil && string(k) == after {
				k, v = c.Next()
			}
		}
		for ; k != nil; k, v = c.Next() {
			var g grantRecord
			if err := jsonUnmarshal(v, &g); err != nil {
				return err
			}
			if account != "" && g.Account != account {
				continue
			}
			if len(grants) == limit {
				next = grants[len(grants)-1].ID
				break
			}
			grants = append(grants, grantInfo(&g))
		}
		return nil
	})
	return grants, next, err
}

// Job returns one job.
func (f *FSM) Job(id uint64) (JobInfo, error) {
	var info JobInfo
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		var j jobRecord
		ok, err := getJSON(tx.Bucket(bucketJobs), jobKey(id), &j)
		if err != nil {
			return err
		}
		if !ok {
			return notFound("job %d does not exist: check the id", id)
		}
		info = jobInfo(&j, rs.resources)
		return nil
	})
	return info, err
}

// JobFilter selects jobs for Jobs. Empty fields match everything.
type JobFilter struct {
	Account string
	User    string
	States  []JobState
	// Before lists only jobs with a smaller id (0: from the newest); pass
	// the next value Jobs returned to get the following page.
	Before uint64
	Limit  int
}

// Jobs lists jobs newest first.
func (f *FSM) Jobs(q JobFilter) (jobs []JobInfo, next uint64, err error) {
	limit := pageLimit(q.Limit)
	err = f.view(func(rs readSnap, tx *bolt.Tx) error {
		all := tx.Bucket(bucketJobs)
		// Walk an index when there is one to walk, newest first.
		var index *bolt.Bucket
		var prefix []byte
		switch {
		case q.Account != "":
			index, prefix = tx.Bucket(bucketJobsAccount), append([]byte(q.Account), 0)
		case q.User != "":
			index, prefix = tx.Bucket(bucketJobsUser), append([]byte(q.User), 0)
		default:
			index = all
		}
		c := index.Cursor()
		start := append(slices.Clone(prefix), u64(q.Before)...)
		if q.Before == 0 {
			start = append(slices.Clone(prefix), bytes.Repeat([]byte{0xff}, 8)...)
		}
		k, _ := c.Seek(start)
		if k == nil {
			k, _ = c.Last()
		}
		for ; k != nil && bytes.Compare(k, start) >= 0; k, _ = c.Prev() {
		}
		for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
			id := readU64(k[len(prefix):])
			var j jobRecord
			if ok, err := getJSON(all, jobKey(id), &j); err != nil || !ok {
				return err
			}
			if q.User != "" && j.User != q.User || len(q.States) > 0 && !slices.Contains(q.States, j.State) {
				continue
			}
			if len(jobs) == limit {
				next = jobs[len(jobs)-1].ID
				break
			}
			jobs = append(jobs, jobInfo(&j, rs.resources))
		}
		return nil
	})
	return jobs, next, err
}

// Tasks lists the latest attempt of each task of a job that has been placed
// at least once, by task index, starting at task from.
func (f *FSM) Tasks(job uint64, from int64, limit int) (tasks []TaskInfo, next int64, err error) {
	limit = pageLimit(limit)
	err = f.view(func(_ readSnap, tx *bolt.Tx) error {
		if tx.Bucket(bucketJobs).Get(jobKey(job)) == nil {
			return notFound("job %d does not exist: check the id", job)
		}
		c := tx.Bucket(bucketTasks).Cursor()
		prefix := taskPrefix(job, -1)
		var last *attemptRecord
		for k, v := c.Seek(taskPrefix(job, max(from, 0))); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			a := new(attemptRecord)
			if err := jsonUnmarshal(v, a); err != nil {
				return err
			}
			if last != nil && last.Task != a.Task {
				if len(tasks) == limit {
					next = last.Task
					return nil
				}
				tasks = append(tasks, taskInfo(last))
			}
			last = a
		}
		if last != nil {
			if len(tasks) == limit {
				next = last.Task
				return nil
			}
			tasks = append(tasks, taskInfo(last))
		}
		return nil
	})
	return tasks, next, err
}

// Nodes lists every node, up and down, by id.
func (f *FSM) Nodes() []NodeInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	out := make([]NodeInfo, 0, len(f.st.nodes))
	for _, id := range sortedKeys(f.st.nodes) {
		out = append(out, f.st.nodeInfo(f.st.nodes[id]))
	}
	return out
}

// Balance returns an account's SU balance with grant expiry evaluated at at.
func (f *FSM) Balance(account string, at ledger.Time) (ledger.Balance, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if _, ok := f.st.accounts[account]; !ok {
		return ledger.Balance{}, notFound("account %q does not exist: check the name", account)
	}
	return f.st.su.Balance(account, max(at, f.st.now)), nil
}

// Journal returns up to limit journal entries with Seq > after; account, if
// not empty, keeps only entries of that account. next is the Seq to pass as
// after for the following page, 0 at the end.
func (f *FSM) Journal(account string, after uint64, limit int) (entries []ledger.JournalEntry, next uint64) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	limit = pageLimit(limit)
	for from := after + 1; ; {
		page := f.st.su.JournalFrom(from, MaxPage)
		if len(page) == 0 {
			return entries, 0
		}
		for _, e := range page {
			if account != "" && e.Account != account {
				continue
			}
			if len(entries) == limit {
				return entries, entries[len(entries)-1].Seq
			}
			entries = append(entries, e)
		}
		from = page[len(page)-1].Seq + 1
	}
}

// Verify checks the journal as stored in bbolt: its hash chain, and every
// balance recomputed from it. It also checks that the stored journal ends
// where the live SU book does, which catches entries cut off the end.
func (f *FSM) Verify() (ledger.VerifyReport, error) {
	var report ledger.VerifyReport
	err := f.view(func(rs readSnap, tx *bolt.Tx) error {
		var entries []ledger.JournalEntry
		if err := tx.Bucket(bucketJournal).ForEach(func(k, v []byte) error {
			var e ledger.JournalEntry
			if err := e.UnmarshalBinary(v); err != nil {
				return &ledger.VerifyError{Seq: readU64(k), Position: len(entries), Problem: err.Error()}
			}
			entries = append(entries, e)
			return nil
		}); err != nil {
			return err
		}
		var err error
		report, err = ledger.Verify(entries)
		if err != nil {
			return err
		}
		if rs.headSeq != report.LastSeq || rs.head != report.Head {
			return &ledger.VerifyError{Seq: report.LastSeq + 1, Position: len(entries),
				Problem: "the stored journal ends before the live SU book's last entry: entries were removed from its end"}
		}
		return nil
	})
	return report, err
}

// Running lists the attempts that hold resources (placed or running), on
// one node or, with node empty, on all, ordered by job and task. A worker
// reconnecting to a new leader is reconciled against this list.
func (f *FSM) Running(node string) []TaskInfo {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []TaskInfo
	for _, id := range sortedTaskIDs(f.st.running) {
		if a := f.st.running[id]; node == "" || a.Node == node {
			out = append(out, taskInfo(a))
		}
	}
	return out
}
