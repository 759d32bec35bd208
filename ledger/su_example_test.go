package ledger_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/longfair/longfair/ledger"
)

// A job's SU life cycle: grant, hold the worst case at submission, charge
// each task's actual cost, release the rest when the job ends.
func ExampleSUBook() {
	resources := []string{"cpu", "mem"}
	weights, _ := ledger.ParseBillingWeights("cpu=1,mem=0.25/GiB", resources)
	demand := ledger.Vector{4, 8 << 30} // 4 cores, 8 GiB: 6 SU per hour

	book := ledger.NewSUBook()
	grant, _ := ledger.ParseSU("100")
	book.Grant("grant-2025", "chem", grant, 0, 0)

	// Two tasks with a walltime of 4 hours: hold 48 SU.
	hold, _ := ledger.WorstCaseHold(2, 4*time.Hour, demand, weights, ledger.BillingSum)
	book.Hold("job-1", "chem", hold, 10)

	// The first task ran 90 minutes: 9 SU.
	runtime := 90 * time.Minute
	cost, _ := ledger.Cost(runtime, demand, weights, ledger.BillingSum)
	detail := ledger.ChargeDetail{Runtime: runtime, Demand: demand, Weights: weights, Resources: resources}
	book.Charge("job-1", "job-1/task-0/attempt-1", cost, detail, 20)

	// A second job that needs more than is left is refused with the numbers.
	_, err := book.Hold("job-2", "chem", 60*ledger.MicroPerSU, 30)
	fmt.Println(errors.Is(err, ledger.ErrInsufficientFunds))
	fmt.Println(err)

	// The second task was cancelled: release the rest of the hold.
	book.Release("job-1", 40)
	fmt.Printf("%+v\n", book.Balance("chem", 40))

	journal, err := book.Journal()
	if err != nil {
		fmt.Println(err)
		return
	}
	report, err := ledger.Verify(journal)
	fmt.Println(report.Entries, "entries verify:", err == nil)
	// Output:
	// true
	// insufficient SU: account "chem" cannot cover hold "job-2" of 60 SU: available 52 SU (granted 100, charged 9, held by open jobs 39, expired 0); ask an admin for a grant or submit fewer tasks
	// {Account:chem Granted:100 Charged:9 Held:0 Expired:0 Available:91}
	// 4 entries verify: true
}
