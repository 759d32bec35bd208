// Package place chooses a node for a task among many, without scanning every
// node: an Index over the nodes' free resources answers "the best node this
// demand fits on" for the affinity, best-fit and spread strategies, and is
// updated as tasks are placed.
//
// # Scores
//
// A demand fits a node when the node's free vector covers it in every
// resource (ledger.Vector.Fits, with its small tolerance); a task that needs
// mic therefore only fits nodes with free mic. Among the nodes it fits, with
// every resource j normalized by M_j, the largest capacity any node has of j
// (resources no node has are skipped):
//
//	affinity  maximize Σ_j (d_j/M_j)·(free_j/M_j)   (H-MRF paper, §6)
//	bestfit   minimize Σ_j (free_j − d_j)/M_j        (least left over)
//	spread    maximize Σ_j free_j/M_j                (most idle)
//
// Equal scores go to the lowest node index, so a placement is a function of
// the nodes and the demand alone: the same on every server and in the
// simulator.
//
// # How Best finds the node
//
// The engine places up to ~10^5 tasks per pass on up to ~10^4 nodes, one at
// a time, so Best and Take must cost about O(log N). Four parts:
//
//   - Twins (twins.go): nodes with identical free vectors tie under every
//     strategy, and a cluster of a few node classes running tasks of a few
//     shapes holds only 100–200 distinct free vectors among 10,000 nodes.
//     The index groups the nodes by free vector and ranks groups, each
//     standing for its lowest-indexed node; a Take moves one node between
//     two groups.
//   - The search tree (search.go, arrange.go): a complete binary tree whose
//     leaves are the groups, laid out like a k-d tree so each subtree holds
//     similar vectors, whose every subtree knows the component-wise max and
//     min of its free vectors, of their idle sums, and its lowest node
//     index. Best searches it by branch and bound, pruning subtrees whose
//     max vector does not cover the demand or whose bound cannot beat the
//     best node found. When Takes have scattered similar vectors and
//     searches get expensive, or a new group finds no free leaf, the groups
//     are laid out afresh.
//   - Hot demands (hot.go): a job is many identical tasks, so a demand asked
//     for a few times gets a tournament tree of its own over the same leaves
//     holding the best fitting node of every subtree: Best becomes a
//     look-up.
//   - The change logs (changes.go): Take rewrites at most two leaves at once
//     and logs them; the trees above catch up when next used, each paying
//     only for the Takes it has not seen.
//
// Every path ranks nodes by the same arithmetic and every bound is rigorous
// for rounded floating point (search.go), so all paths return exactly the
// node a scan of all nodes would.
package place
