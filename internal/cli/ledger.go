package cli

import (
	"context"
	"encoding/base64"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/client"
)

func ledgerGroup() *cmdGroup {
	return group("ledger", "Reads the service-unit book: its hash-chained journal of grants, holds, charges and releases.", []subcommand{
		{"show", "list journal entries", ledgerShowCommand(), nil},
		{"verify", "recompute every balance from the journal and check its hash chain", ledgerVerifyCommand(), nil},
		{"export", "write the whole journal to a file (JSON lines or CSV)", ledgerExportCommand(), nil},
	})
}

// journalTable lays out journal entries; export adds the hashes and each
// charge's measured usage beside its allocation, as exact numbers (empty
// when not measured) so a spreadsheet can sum them against the usage
// report.
func journalTable(list []*longfairv1.JournalEntry, export bool) table {
	t := table{header: []string{"SEQ", "TIME", "KIND", "ID", "ACCOUNT", "AMOUNT_SU", "DETAIL"}}
	if export {
		t.header = append(t.header, "PREV_HASH", "HASH", "CPU_SECONDS", "CPU_ALLOCATED_SECONDS", "PEAK_MEM_BYTES", "MEM_REQUESTED_BYTES")
	}
	for _, e := range list {
		row := []string{strconv.FormatUint(e.GetSeq(), 10), fmtTime(e.GetTime()), e.GetKind(), e.GetId(), e.GetAccount(), fmtSU(e.GetAmountMicroSu()), orDash(e.GetDetail())}
		if export {
			row = append(row, base64.StdEncoding.EncodeToString(e.GetPrevHash()), base64.StdEncoding.EncodeToString(e.GetHash()))
			row = append(row, optFloat(e.CpuSeconds), optFloat(e.CpuAllocatedSeconds), optInt(e.PeakMemBytes), optInt(e.MemRequestedBytes))
		}
		t.add(row...)
	}
	return t
}

// optFloat and optInt write an optional number exactly, or nothing.
func optFloat(x *float64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatFloat(*x, 'f', -1, 64)
}

func optInt(x *int64) string {
	if x == nil {
		return ""
	}
	return strconv.FormatInt(*x, 10)
}

const ledgerShowHelp = `Usage: longfair ledger show [flags]

Lists SU journal entries in sequence order: grants, holds placed at
submission, charges of ended tasks, releases of unused holds.

Examples:
  longfair ledger show --account astro
  longfair ledger show --after 1200 --limit 50 --output json
`

func ledgerShowCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		account string
		after   uint64
		limit   int
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only entries that touch this `account`")
		fs.Uint64Var(&after, "after", 0, "start after this sequence `number`")
		fs.IntVar(&limit, "limit", 100, "show at most `N` entries (0: all)")
	}
	return clientCommand("ledger show", ledgerShowHelp, true, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("ledger show", args, 0, 0, ""); err != nil {
			return err
		}
		if limit < 0 {
			return Usagef("--limit %d: give 0 (all) or more", limit)
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		var list []*longfairv1.JournalEntry
		// Pages of what it shows: the first 100 are one page of 100.
		req := &longfairv1.ListJournalRequest{Account: account, AfterSeq: after, PageSize: int32(min(limit, longfairv1.MaxPageSize))}
		for e, err := range c.AllJournal(ctx, req) {
			if err != nil {
				return err
			}
			list = append(list, e)
			if limit > 0 && len(list) >= limit {
				break
			}
		}
		return writeListing(out.stdout, f.output, journalTable(list, false), messages(list))
	})
}

const ledgerVerifyHelp = `Usage: longfair ledger verify [flags]

Recomputes every account's balance from the SU journal and checks the
journal's hash chain, on the leader. Exits 0 when both hold; otherwise it
names the first bad entry and exits 1.

Example:
  longfair ledger verify
  longfair ledger verify --output json
`

func ledgerVerifyCommand() func(args []string, stdout, stderr io.Writer) error {
	return clientCommand("ledger verify", ledgerVerifyHelp, true, nil, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("ledger verify", args, 0, 0, ""); err != nil {
			return err
		}
		ctx, cancel := f.callContext(ctx)
		defer cancel()
		r, err := c.Ledger().Verify(ctx, &longfairv1.VerifyRequest{})
		if err != nil {
			return err
		}
		switch f.output {
		case "json":
			err = writeJSON(out.stdout, r)
		case "csv":
			t := table{header: []string{"OK", "ENTRIES", "ACCOUNTS", "FIRST_BAD_SEQ", "MESSAGE"}}
			t.add(strconv.FormatBool(r.GetOk()), fmt.Sprint(r.GetEntries()), fmt.Sprint(r.GetAccounts()), fmt.Sprint(r.GetFirstBadSeq()), r.GetMessage())
			err = writeTable(out.stdout, "csv", t)
		default:
			if r.GetOk() {
				fmt.Fprintf(out.stdout, "ok: %d journal entries, %d accounts: %s\n", r.GetEntries(), r.GetAccounts(), r.GetMessage())
			}
		}
		if err != nil {
			return err
		}
		if !r.GetOk() {
			return fmt.Errorf("the ledger does NOT verify: entry %d of %d fails: %s", r.GetFirstBadSeq(), r.GetEntries(), r.GetMessage())
		}
		return nil
	})
}

const ledgerExportHelp = `Usage: longfair ledger export [flags]

Writes the whole SU journal, with its hashes, to a file or stdout: JSON
lines (one entry per line, in the API's JSON mapping) or CSV. Each charge
of an attempt that a confined worker measured also carries what it used
and was allocated on the measured node: cpu_seconds,
cpu_allocated_seconds, peak_mem_bytes and mem_requested_bytes (read from
the attempt, outside the hashed entry; absent or empty when not
measured). Shows
progress on stderr. The file is written next to its final name and renamed
when complete, so an interrupted export leaves no partial file.

Examples:
  longfair ledger export --out journal.jsonl
  longfair ledger export --account astro --format csv --out astro.csv
`

func ledgerExportCommand() func(args []string, stdout, stderr io.Writer) error {
	var (
		account, outPath, format string
		quiet                    bool
	)
	setup := func(fs *flag.FlagSet) {
		fs.StringVar(&account, "account", "", "only entries that touch this `account`")
		fs.StringVar(&outPath, "out", "-", "`file` to write; - for stdout")
		fs.StringVar(&format, "format", "jsonl", "`format`: jsonl or csv")
		fs.BoolVar(&quiet, "quiet", false, "no progress on stderr")
	}
	return clientCommand("ledger export", ledgerExportHelp, false, setup, func(ctx context.Context, c *client.Client, f *clientFlags, args, _ []string, out cmdIO) error {
		if err := wantArgs("ledger export", args, 0, 0, ""); err != nil {
			return err
		}
		if format != "jsonl" && format != "csv" {
			return Usagef("--format %q: use jsonl or csv", format)
		}
		w, commit, abort, err := createOutput(outPath, out.stdout)
		if err != nil {
			return err
		}
		defer abort()
		var cw *csv.Writer
		if format == "csv" {
			cw = csv.NewWriter(w)
			if err := cw.Write(journalTable(nil, true).header); err != nil {
				return err
			}
		}
		progressOut := out.stderr
		if quiet {
			progressOut = io.Discard
		}
		p := newProgress(progressOut, "exporting the journal", 0, "entries")
		n := int64(0)
		for e, err := range c.Journal(ctx, account, 0) {
			if err != nil {
				return err
			}
			if cw != nil {
				err = cw.Write(journalTable([]*longfairv1.JournalEntry{e}, true).rows[0])
			} else {
				err = writeJSONLine(w, e)
			}
			if err != nil {
				return fmt.Errorf("write %s: %w", outPath, err)
			}
			n++
			p.set(n)
		}
		if cw != nil {
			cw.Flush()
			if err := cw.Error(); err != nil {
				return fmt.Errorf("write %s: %w", outPath, err)
			}
		}
		p.done()
		return commit()
	})
}

// createOutput opens where a long output goes: stdout for "-", else a
// temporary file next to path that commit renames into place and abort
// removes (abort after commit does nothing).
func createOutput(path string, stdout io.Writer) (w io.Writer, commit func() error, abort func(), err error) {
	if path == "-" || path == "" {
		return stdout, func() error { return nil }, func() {}, nil
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("create %s: %w", path, err)
	}
	done := false
	commit = func() error {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return fmt.Errorf("move the finished file to %s: %w", path, err)
		}
		done = true
		return nil
	}
	abort = func() {
		if !done {
			tmp.Close()
			if err := os.Remove(tmp.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
				return
			}
		}
	}
	return tmp, commit, abort, nil
}
