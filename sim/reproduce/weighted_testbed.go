package reproduce

import "github.com/longfair/longfair/sim"

// QKnoblerTestbed is the QKnobler paper's testbed mix (§7.2.1): four users
// A, B, C, D running the synthetic Facebook, Purdue, Spark and TPC-H
// workloads with weights 1 : 2 : 3 : 4. The jobs are the macro-benchmark's
// (the QKnobler paper's Table 1 is the H-MRF paper's Table 3), on its 59
// nodes of <4 cores, 15 GB>.
func QKnoblerTestbed(opt MacroOptions) (*sim.Workload, error) {
	w, err := Macro(opt)
	if err != nil {
		return nil, err
	}
	w.Name = "QKnobler testbed mix (§7.2.1): macro-benchmark jobs, weights 1:2:3:4"
	for i := range w.Accounts {
		w.Accounts[i].Weight = float64(i + 1)
	}
	return w, nil
}
