package cli

import (
	"strings"
	"testing"
)

// Slurm's shape options turn into nodes and cores per node as sbatch
// does, and combinations that cannot hold are refused with what to do.
func TestParallelShapeAsSbatchReadsIt(t *testing.T) {
	for _, c := range []struct {
		name                  string
		nodes                 int
		nodesSet              bool
		ntasks, perNode, cpus int
		cpuSet                bool
		wantNodes             int
		wantCPU               float64
		wantErr               string
	}{
		{name: "none", nodes: 1, wantNodes: 1, wantCPU: 0},
		{name: "8 tasks 4 per node", nodes: 1, ntasks: 8, perNode: 4, wantNodes: 2, wantCPU: 4},
		{name: "9 tasks 4 per node", nodes: 1, ntasks: 9, perNode: 4, cpus: 2, wantNodes: 3, wantCPU: 8},
		{name: "6 tasks on 3 nodes", nodes: 3, nodesSet: true, ntasks: 6, wantNodes: 3, wantCPU: 2},
		{name: "too many for nodes", nodes: 2, nodesSet: true, ntasks: 9, perNode: 4, wantErr: "does not fit"},
		{name: "unspread", nodes: 1, ntasks: 4, wantErr: "say how to spread them"},
		{name: "fewer than nodes", nodes: 4, nodesSet: true, ntasks: 2, wantErr: "fewer than the 4 nodes"},
		{name: "cpu and ntasks", nodes: 1, ntasks: 4, perNode: 2, cpuSet: true, wantErr: "--cpus-per-task"},
		{name: "per node alone", nodes: 1, perNode: 2, wantErr: "need --ntasks"},
	} {
		d := map[string]float64{}
		n, err := parallelShape(c.nodes, c.nodesSet, c.ntasks, c.perNode, c.cpus, c.cpuSet, d)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: %v, want an error saying %q", c.name, err, c.wantErr)
			}
			continue
		}
		if err != nil || n != c.wantNodes || d["cpu"] != c.wantCPU {
			t.Errorf("%s: %d nodes, cpu %v, %v; want %d nodes of cpu %v", c.name, n, d["cpu"], err, c.wantNodes, c.wantCPU)
		}
	}
}
