// Command longfair-client is longfair's user and admin commands alone
// (internal/cli): every command of the longfair binary but the daemons,
// the dev cluster and the simulator. It links no server, worker, Raft,
// gossip, metrics or storage code (internal/layering checks it), so it is
// smaller and starts faster than the full binary: the binary to put on
// login nodes, as longfair, and to link as sbatch, scancel, squeue and
// sacct, which researchers run from shell loops.
package main

import (
	"os"

	"github.com/longfair/longfair/internal/cli"
)

func main() {
	os.Exit(cli.Main(cli.Commands(), os.Args, os.Stdout, os.Stderr))
}
