// Package durable holds what makes a change to a directory survive a
// crash, for the servers' data files (the state file's snapshots and
// shutdown record in package fsm, the Raft log's conversion in package
// server): a rename or a new file is on disk only once its directory is
// synced.
package durable

import (
	"fmt"
	"os"
)

// SyncDir syncs the directory dir, so that the names created, renamed or
// removed in it so far survive a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
