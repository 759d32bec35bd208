// Package dev is 'longfair dev': it starts a cluster on this machine (three
// servers and three workers, each a child process of this binary) with a
// data directory of its own, prints how to reach it, optionally runs a
// competing demo workload and shows the fairness table as it changes, and
// stops everything on Ctrl-C.
package dev

import "github.com/longfair/longfair/internal/cli"

// Command is 'longfair dev'. The dev cluster starts its servers and
// workers as the binary that runs it ('server' and 'worker').
func Command() cli.Command {
	return cli.Command{
		Summary: "run a 3-server, 3-worker cluster on this machine to try longfair",
		Run:     runDev,
	}
}
