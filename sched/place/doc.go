// Package place chooses a node for a task among many, without scanning every
// node: an index over the nodes' free resources answers "the best node this
// demand fits on" for the affinity, best-fit and spread strategies.
package place
