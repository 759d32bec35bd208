package daemon

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/server"
)

// ConvertLogCommand is 'longfair convert-log'.
func ConvertLogCommand() cli.Command {
	return cli.Command{Summary: "move a stopped server's Raft log to another log store (boltdb or wal)", Run: runConvertLog}
}

const convertLogHelp = `Usage: longfair convert-log --data-dir DIR --to STORE

Copies the Raft log of a stopped server, with Raft's term and vote, from
the log store its data dir holds into STORE (boltdb or wal; see
raft.log_store in deploy/config.md), so that the server starts with
--raft-log-store STORE and keeps everything it had: no copy of the state
from the leader is needed, and the last server of a group can convert too.
Snapshots and the state file are not touched. The old log is moved aside
(raft/raft.db.before-wal or raft/wal.before-boltdb), never deleted: remove
it once the server runs. An interrupted run is safe to run again.

Convert one server at a time: stop it, convert, start it with the new
store, and wait for its /readyz before the next.

Example:
  longfair convert-log --data-dir /var/lib/longfair/s2 --to wal
`

func runConvertLog(args []string, stdout, _ io.Writer) error {
	var dataDir, to string
	fs := cli.NewFlags("convert-log")
	fs.StringVar(&dataDir, "data-dir", "", "the stopped server's data `directory`")
	fs.StringVar(&to, "to", "", "the log `store` to move the log to: boltdb or wal")
	pos, _, err := cli.ParseFlags(fs, args, convertLogHelp, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return cli.Usagef("unexpected argument %q: 'longfair convert-log' takes only --data-dir and --to", pos[0])
	}
	if dataDir == "" || to == "" {
		return cli.Usagef("give the stopped server's --data-dir and the store to convert to with --to (boltdb or wal)")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := server.ConvertLogStore(ctx, dataDir, to, nil)
	if err != nil {
		return err
	}
	entries := "no entries"
	if res.Last > 0 {
		entries = fmt.Sprintf("entries %d–%d", res.First, res.Last)
	}
	fmt.Fprintf(stdout, "converted the Raft log in %s from %s to %s: %s, term %d\n", dataDir, res.From, res.To, entries, res.Term)
	fmt.Fprintf(stdout, "start the server with --raft-log-store %s (raft.log_store); the old log is kept in %s until you remove it\n", res.To, res.Backup)
	return nil
}
