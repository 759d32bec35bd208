package place

import "fmt"

// Strategy chooses among the nodes a task fits on.
type Strategy string

// Placement strategies. Every resource is normalized by the largest capacity
// any node has of it, so bytes of memory do not outweigh cores.
const (
	// Affinity picks the node with the largest dot product of the task's
	// demand and the node's idle vector (the H-MRF paper, §6).
	Affinity Strategy = "affinity"
	// BestFit picks the node the task leaves with the least idle resource.
	BestFit Strategy = "bestfit"
	// Spread picks the node with the most idle resource.
	Spread Strategy = "spread"
)

// Strategies lists the valid strategies.
func Strategies() []Strategy { return []Strategy{Affinity, BestFit, Spread} }

// ParseStrategy turns a name into a Strategy, or says which names are valid.
func ParseStrategy(name string) (Strategy, error) {
	for _, s := range Strategies() {
		if string(s) == name {
			return s, nil
		}
	}
	return "", fmt.Errorf("unknown placement %q: valid placements are affinity, bestfit, spread", name)
}
