package reproduce

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/longfair/longfair/internal/shareddata"
	"github.com/longfair/longfair/ledger"
	"github.com/longfair/longfair/sched"
	"github.com/longfair/longfair/sim"
)

func TestMacroHasThePapersClusterAccountsAndWorkloads(t *testing.T) {
	w, err := Macro(MacroOptions{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Nodes) != 59 {
		t.Errorf("%d nodes, want 59", len(w.Nodes))
	}
	for _, n := range w.Nodes {
		if !slices.Equal(n.Capacity, ledger.Vector{4, 15}) {
			t.Fatalf("node %s has %v, want <4 cores, 15 GB>", n.ID, n.Capacity)
		}
	}
	if len(w.Accounts) != 4 {
		t.Fatalf("%d accounts, want 4", len(w.Accounts))
	}
	for _, a := range w.Accounts {
		if a.Weight != w.Accounts[0].Weight {
			t.Errorf("weights %+v, want equal contributions", w.Accounts)
		}
	}
	// User1: Table 3's first stages, by (map tasks, demand) → jobs.
	table3 := map[string]int{
		"1 [1 1]": 38, "2 [1 1.5]": 18, "10 [2 0.5]": 14, "50 [4 1]": 10, "100 [2 1.5]": 6,
		"200 [3 2]": 6, "400 [2 1]": 4, "400 [1 2]": 2, "800 [2 0.5]": 2,
	}
	reduces := map[string]int{"2 [4 2]": 14, "10 [2 2]": 6, "30 [2 0.5]": 2, "60 [1 3]": 2}
	gotMaps, gotReduces := map[string]int{}, map[string]int{}
	perAccount := make([][]int, 4)
	for i, j := range w.Jobs {
		key := fmt.Sprintf("%d %v", j.Tasks, []float64(j.Demand))
		if j.Account == 0 {
			if j.After == nil {
				gotMaps[key]++
			} else {
				gotReduces[key]++
			}
		}
		if j.After == nil || !j.After.Continues {
			perAccount[j.Account] = append(perAccount[j.Account], i)
		}
	}
	if !reflect.DeepEqual(gotMaps, table3) || !reflect.DeepEqual(gotReduces, reduces) {
		t.Errorf("User1 maps %v reduces %v; want Table 3: %v and %v", gotMaps, gotReduces, table3, reduces)
	}
	// User2: a Purdue job every 3 minutes.
	for k, j := range perAccount[1] {
		if w.Jobs[j].Submit != ledger.Time(time.Duration(k)*3*time.Minute) || w.Jobs[j].After != nil {
			t.Errorf("User2 job %d submitted at %v, want %v", k, time.Duration(w.Jobs[j].Submit), time.Duration(k)*3*time.Minute)
		}
	}
	if len(perAccount[1]) != purdueJobs {
		t.Errorf("User2 has %d jobs, want %d", len(perAccount[1]), purdueJobs)
	}
	// User3: 10 each of kmeans, LR, ALS, each 2 minutes after the previous
	// job completes; User4: 5 each of four queries, back to back.
	spark := map[string]int{}
	for k, j := range perAccount[2] {
		job := w.Jobs[j]
		spark[fmt.Sprintf("%s %d %v", job.Name, job.Tasks, []float64(job.Demand))]++
		if k > 0 && (job.After == nil || job.After.Delay != 2*time.Minute || job.After.Continues || job.After.Job != perAccount[2][k-1]) {
			t.Errorf("User3 job %d does not wait 2 min for the previous one: %+v", k, job.After)
		}
	}
	wantSpark := map[string]int{"kmeans 100 [2 2]": 10, "LR 150 [2 1]": 10, "ALS 100 [1 2]": 10}
	if !reflect.DeepEqual(spark, wantSpark) {
		t.Errorf("User3 jobs %v, want %v", spark, wantSpark)
	}
	queries := map[string]int{}
	for k, j := range perAccount[3] {
		job := w.Jobs[j]
		queries[job.Name]++
		if k > 0 && (job.After == nil || job.After.Delay != 0 || job.After.Continues) {
			t.Errorf("User4 query %d does not follow the previous one: %+v", k, job.After)
		}
	}
	if !reflect.DeepEqual(queries, map[string]int{"Q1": 5, "Q9": 5, "Q12": 5, "Q17": 5}) {
		t.Errorf("User4 queries %v, want 5 each of Q1, Q9, Q12, Q17", queries)
	}
}

func TestMacroIsDeterministicForASeed(t *testing.T) {
	a, _ := Macro(MacroOptions{Seed: 4})
	b, _ := Macro(MacroOptions{Seed: 4})
	c, _ := Macro(MacroOptions{Seed: 5})
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave different workloads")
	}
	if reflect.DeepEqual(a.Jobs, c.Jobs) {
		t.Error("different seeds gave the same workload")
	}
}

func TestMacroTakesUser1SubmissionsFromTheSWIMTrace(t *testing.T) {
	path := shareddata.Path(t, "FB-2009_samples_24_times_1hr_1.tsv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	var want []ledger.Time
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(want) < 100 {
		s, err := strconv.ParseFloat(strings.Split(sc.Text(), "\t")[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, ledger.Time(s*float64(time.Second)))
	}
	f.Close()
	w, err := Macro(MacroOptions{Seed: 1, FacebookTimes: path})
	if err != nil {
		t.Fatal(err)
	}
	var got []ledger.Time
	for _, j := range w.Jobs {
		if j.Account == 0 && j.After == nil {
			got = append(got, j.Submit)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("User1 submissions %v, want the trace's first 100 %v", got, want)
	}
	// The biggest bins go to the trace's biggest jobs: the 800-task jobs
	// must be among the trace's largest inputs, never its one-block jobs.
	trace, err := sim.LoadSWIMFile(path, sim.SWIMOptions{})
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for _, j := range w.Jobs {
		if j.Account != 0 || j.After != nil {
			continue
		}
		for trace.Jobs[k].After != nil {
			k++
		}
		if j.Tasks == 800 && trace.Jobs[k].Tasks == 1 {
			t.Errorf("an 800-task job took the place of a one-block trace job")
		}
		k++
	}
}

// macroResults replays the macro-benchmark under the policies the paper
// compares, with the trace's submission times when available.
func macroResults(t *testing.T, opt MacroOptions) map[sched.Policy]*sim.Result {
	w, err := Macro(opt)
	if err != nil {
		t.Fatal(err)
	}
	out := map[sched.Policy]*sim.Result{}
	for _, p := range []sched.Policy{sched.HMRF, sched.LTDRF, sched.LTAF, sched.DRF, sched.Static} {
		s := sched.DefaultSettings()
		s.Policy = p
		res, err := sim.Run(w, sim.Config{Settings: s})
		if err != nil {
			t.Fatal(err)
		}
		if res.UnfinishedTasks != 0 || len(res.Unschedulable) != 0 {
			t.Fatalf("%s: %d tasks unfinished, %d jobs unschedulable", p, res.UnfinishedTasks, len(res.Unschedulable))
		}
		out[p] = res
	}
	return out
}

// TestMacroBenchmarkMatchesThePapersFindings checks §7.2's findings that the
// model reproduces: under H-MRF every account ends with sharing benefit
// (β ≥ 1), and every sharing policy completes jobs faster on average than
// static partitions.
//
// The paper also shows DRF leaving an account below β = 1. In this model
// DRF's sharing loss is transient (an account that arrives while others
// hold the cluster waits, and DRF does not pay it back), but every account
// here later demands far more than its partition while others idle, and DRF
// gives idle resources to whoever has the least, so all end above 1; the
// test does not claim what the model does not show (see the package doc).
func TestMacroBenchmarkMatchesThePapersFindings(t *testing.T) {
	opts := []MacroOptions{{Seed: 1}, {Seed: 2}}
	if path := shareddata.Optional("FB-2009_samples_24_times_1hr_1.tsv"); path != "" {
		opts = append(opts, MacroOptions{Seed: 1, FacebookTimes: path})
	}
	for _, opt := range opts {
		t.Run(fmt.Sprintf("seed%d/trace=%v", opt.Seed, opt.FacebookTimes != ""), func(t *testing.T) {
			res := macroResults(t, opt)
			for _, a := range res[sched.HMRF].Accounts {
				if a.FinalBeta < 1 {
					t.Errorf("hmrf: %s ends with β = %.3f, want ≥ 1", a.Name, a.FinalBeta)
				}
			}
			static := res[sched.Static].MeanCompletion()
			for _, p := range []sched.Policy{sched.HMRF, sched.LTDRF, sched.LTAF, sched.DRF} {
				if got := res[p].MeanCompletion(); got >= static {
					t.Errorf("%s: mean completion %v, not better than static's %v", p, got, static)
				}
			}
		})
	}
}

// BenchmarkMacro replays the paper's macro-benchmark under every policy
// the default report compares.
func BenchmarkMacro(b *testing.B) {
	w, err := Macro(MacroOptions{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		for _, p := range []sched.Policy{sched.HMRF, sched.LTDRF, sched.LTAF, sched.DRF, sched.Static} {
			s := sched.DefaultSettings()
			s.Policy = p
			if _, err := sim.Run(w, sim.Config{Settings: s}); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// sharingLoss is the time-averaged sharing loss of a replay: for each
// account, the mean of max(0, 1−β) over the β samples taken after the first
// tenth of the run (before that, newcomers wait for running tasks under any
// policy), summed over accounts. Zero means nobody was ever worse off than in
// its own partition.
func sharingLoss(res *sim.Result) float64 {
	if len(res.Samples.Times) == 0 {
		return 0
	}
	from := res.Start + (res.End-res.Start)/10
	total := 0.0
	for _, betas := range res.Samples.Beta {
		sum, n := 0.0, 0
		for k, at := range res.Samples.Times {
			if at < from || math.IsInf(betas[k], 0) || math.IsNaN(betas[k]) {
				continue
			}
			sum += math.Max(0, 1-betas[k])
			n++
		}
		if n > 0 {
			total += sum / float64(n)
		}
	}
	return total
}

// TestMacroSharingLossIsSmallestUnderHMRF checks the shape of the paper's
// Fig. 8 on the §7.1 macro-benchmark over several seeds: H-MRF, which serves
// accounts in sharing loss first, keeps the time-averaged sharing loss below
// memoryless DRF's, which never pays an account back: never more on any
// seed, and less on average. No non-preemptive
// policy can keep β ≥ 1 at every instant (an account whose demand jumps waits
// for running tasks to end), so the claim is about how much loss, not none.
func TestMacroSharingLossIsSmallestUnderHMRF(t *testing.T) {
	const seeds = 10
	var sum [2]float64
	for seed := uint64(1); seed <= seeds; seed++ {
		w, err := Macro(MacroOptions{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var loss [2]float64
		for i, p := range []sched.Policy{sched.HMRF, sched.DRF} {
			s := sched.DefaultSettings()
			s.Policy = p
			res, err := sim.Run(w, sim.Config{Settings: s})
			if err != nil {
				t.Fatal(err)
			}
			loss[i] = sharingLoss(res)
			sum[i] += loss[i]
		}
		if loss[0] > loss[1] {
			t.Errorf("seed %d: hmrf's sharing loss %.4f exceeds drf's %.4f", seed, loss[0], loss[1])
		}
		t.Logf("seed %d: time-averaged sharing loss hmrf %.4f, drf %.4f", seed, loss[0], loss[1])
	}
	if sum[0] >= sum[1] {
		t.Errorf("mean sharing loss over %d seeds: hmrf %.4f, drf %.4f; H-MRF should lose less", seeds, sum[0]/seeds, sum[1]/seeds)
	}
}
