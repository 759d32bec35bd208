// Command longfair is the one binary of longfair: servers, workers, the
// simulator and the user and admin commands. This file only wires them:
// the commands live in internal/cli and its sub-packages.
package main

import (
	"os"

	"github.com/longfair/longfair/internal/cli"
	"github.com/longfair/longfair/internal/cli/daemon"
	"github.com/longfair/longfair/internal/cli/dev"
	"github.com/longfair/longfair/internal/cli/simulate"
	"github.com/longfair/longfair/worker"
)

// commands is every command of the binary.
func commands() map[string]cli.Command {
	cmds := cli.Commands()
	cmds["sim"] = simulate.Command()
	cmds["server"] = daemon.ServerCommand()
	cmds["worker"] = daemon.WorkerCommand()
	cmds["convert-log"] = daemon.ConvertLogCommand()
	cmds["dev"] = dev.Command()
	return cmds
}

func main() {
	// A worker runs each task under this program started again as the
	// task's supervisor (worker/supervise.go); that must come first.
	worker.Supervise()
	// Run as sbatch or scancel (a link of that name), it is that command.
	os.Exit(cli.Main(commands(), os.Args, os.Stdout, os.Stderr))
}
