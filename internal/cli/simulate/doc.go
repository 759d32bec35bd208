// Package simulate is 'longfair sim': it replays a workload (a trace, a
// generator, or one of the papers' experiments from sim/reproduce) through
// the policy engine with the simulator (package sim) and prints the
// reports.
package simulate

import "github.com/longfair/longfair/internal/cli"

// Command is 'longfair sim'.
func Command() cli.Command {
	return cli.Command{Summary: "replay a workload through the policy engine with a virtual clock", Run: runSim}
}
