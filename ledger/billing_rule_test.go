package ledger

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestCostMaxChargesLargestShare: under BillingMax a task pays for its
// largest weighted resource. With weights that price a 16-core, 64 GiB,
// 2-MIC node alike, memory alone costs the cores it keeps from use, and a
// CPU-only task costs what it did under BillingSum.
func TestCostMaxChargesLargestShare(t *testing.T) {
	resources := []string{"cpu", "mem", "mic"}
	w, err := ParseBillingWeights("cpu=1,mem=0.25/GiB,mic=8", resources)
	if err != nil {
		t.Fatal(err)
	}
	node := Vector{16, 64 << 30, 2}
	for _, c := range []struct {
		name   string
		demand Vector
		want   SU // under max, for one hour
	}{
		{"cpu only", Vector{4, 0, 0}, 4 * MicroPerSU},
		{"mem only", Vector{0, 16 << 30, 0}, 4 * MicroPerSU},
		{"mic only", Vector{0, 0, 1}, 8 * MicroPerSU},
		{"cpu dominates", Vector{4, 8 << 30, 0}, 4 * MicroPerSU},
		{"mem dominates", Vector{1, 16 << 30, 0}, 4 * MicroPerSU},
		{"whole node", node, 16 * MicroPerSU},
	} {
		got, err := Cost(time.Hour, c.demand, w, BillingMax)
		if err != nil || got != c.want {
			t.Errorf("%s: max cost = %v, %v; want %v", c.name, got, err, c.want)
		}
		// The largest share of the node any resource takes, priced at a
		// whole node's 16 SU per hour.
		share := 0.0
		for k := range node {
			share = math.Max(share, c.demand[k]/node[k])
		}
		if want := SU(math.Round(share * 16 * float64(MicroPerSU))); got != want {
			t.Errorf("%s: max cost %v is not the largest node share %v × 16 SU", c.name, got, share)
		}
		sum, _ := Cost(time.Hour, c.demand, w, BillingSum)
		if sum < got {
			t.Errorf("%s: sum %v is below max %v", c.name, sum, got)
		}
		if c.demand[1] == 0 && c.demand[2] == 0 && sum != got {
			t.Errorf("%s: a CPU-only task costs %v under max but %v under sum", c.name, got, sum)
		}
	}
	hold, err := WorstCaseHold(3, 2*time.Hour, Vector{0, 16 << 30, 0}, w, BillingMax)
	if err != nil || hold != 24*MicroPerSU {
		t.Errorf("hold of 3 × 2h of 16 GiB = %v, %v; want 24 SU", hold, err)
	}
	if _, err := Cost(time.Hour, Vector{1, 0, 0}, w, BillingRule(7)); !errors.Is(err, ErrCost) {
		t.Errorf("unknown rule: %v, want ErrCost", err)
	}
}

func TestParseBillingRule(t *testing.T) {
	for _, r := range []BillingRule{BillingSum, BillingMax} {
		back, err := ParseBillingRule(r.String())
		if err != nil || back != r {
			t.Errorf("ParseBillingRule(%q) = %v, %v", r.String(), back, err)
		}
	}
	if _, err := ParseBillingRule("avg"); err == nil || !strings.Contains(err.Error(), "max") {
		t.Errorf("ParseBillingRule(avg) = %v, want an error naming the rules", err)
	}
}

// TestMaxRuleChargeInJournal: a charge priced by the max rule records its
// rule, is encoded as version 2 with exactly one encoding, is checked
// against its detail, and verifies; sum charges keep version 1, the bytes
// every entry before rules had.
func TestMaxRuleChargeInJournal(t *testing.T) {
	b := NewSUBook()
	w := BillingWeights{1, 0.25 / (1 << 30)}
	demand := Vector{1, 16 << 30}
	if _, err := b.Grant("g", "astro", 100*MicroPerSU, 0, 1); err != nil {
		t.Fatal(err)
	}
	hold, _ := WorstCaseHold(1, time.Hour, demand, w, BillingMax)
	if _, err := b.Hold("job1", "astro", hold, 2); err != nil {
		t.Fatal(err)
	}
	cost, _ := Cost(time.Hour, demand, w, BillingMax)
	sumCost, _ := Cost(time.Hour, demand, w, BillingSum)
	detail := ChargeDetail{Runtime: time.Hour, Demand: demand, Weights: w, Resources: []string{"cpu", "mem"}, Rule: BillingMax}
	if _, err := b.Charge("job1", "job1.0", sumCost, detail, 3); err == nil {
		t.Fatal("a charge of the sum cost with a max-rule detail was accepted")
	}
	if _, err := b.Charge("job1", "job1.0", cost, detail, 3); err != nil {
		t.Fatal(err)
	}
	journal := mustRead(b.Journal())
	if _, err := Verify(journal); err != nil {
		t.Fatalf("verify: %v", err)
	}
	for _, e := range journal {
		data, _ := e.MarshalBinary()
		wantVersion := byte(journalEncodingVersion)
		if e.Detail.Rule != BillingSum {
			wantVersion = journalEncodingVersionRule
		}
		if data[0] != wantVersion {
			t.Errorf("entry %d (%v) encoded as version %d, want %d", e.Seq, e.Kind, data[0], wantVersion)
		}
		var back JournalEntry
		if err := back.UnmarshalBinary(data); err != nil {
			t.Fatalf("entry %d: %v", e.Seq, err)
		}
		again, _ := back.MarshalBinary()
		if !bytes.Equal(again, data) || back.Detail.Rule != e.Detail.Rule {
			t.Fatalf("entry %d does not round-trip: rule %v, want %v", e.Seq, back.Detail.Rule, e.Detail.Rule)
		}
	}
	// A version-2 entry that says "sum" would be a second encoding of a
	// version-1 entry: refused.
	charge := journal[len(journal)-1]
	data, _ := charge.MarshalBinary()
	ruleAt := len(data) - 2*len(Hash{}) - 1
	bad := bytes.Clone(data)
	bad[ruleAt] = byte(BillingSum)
	var back JournalEntry
	if err := back.UnmarshalBinary(bad); !errors.Is(err, ErrBadEntryEncoding) {
		t.Fatalf("version-2 entry with the sum rule: %v, want ErrBadEntryEncoding", err)
	}
}
