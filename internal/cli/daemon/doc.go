// Package daemon is the commands that run longfair's long-lived
// processes: 'longfair server', a member of the Raft server group, and
// 'longfair worker', the agent of a compute node. Their flags override the
// config file's settings, and both stop cleanly on SIGINT and SIGTERM.
// 'longfair convert-log' (convert_log.go) moves a stopped server's Raft
// log to another log store.
package daemon

import "github.com/longfair/longfair/internal/cli"

// ServerCommand is 'longfair server'.
func ServerCommand() cli.Command {
	return cli.Command{Summary: "run a member of the Raft server group (the ledger and the gRPC API)", Run: runServer}
}

// WorkerCommand is 'longfair worker'.
func WorkerCommand() cli.Command {
	return cli.Command{Summary: "run the worker agent of a compute node (runs the tasks placed on it)", Run: runWorker}
}
