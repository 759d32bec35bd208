// Package dev is 'longfair dev': it starts a cluster on this machine (three
// servers and three workers, each a child process of this binary) with a
// data directory of its own, prints how to reach it, optionally runs a
// competing demo workload and shows the fairness table as it changes, and
// stops everything on Ctrl-C.
package dev

import (
	"io"

	"github.com/longfair/longfair/internal/cli"
)

// Command is 'longfair dev'. workers says whether the binary that runs it
// has the worker command (the dev cluster starts its workers as that
// binary's 'worker').
func Command(workers bool) cli.Command {
	return cli.Command{
		Summary: "run a 3-server, 3-worker cluster on this machine to try longfair",
		Run: func(args []string, stdout, stderr io.Writer) error {
			return runDev(args, stdout, stderr, workers)
		},
	}
}
