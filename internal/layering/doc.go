// Package layering holds no code, only the tests that keep longfair's
// shape (layering_test.go):
//
//   - Layers point one way: core ← ledger ← sched (and sched/...) ← fsm ←
//     server and everything else. A package imports none of the module's
//     packages of a layer above its own; a new package that a lower layer
//     imports must be placed in the table (layerOf) first.
//   - The engine, the ledger and core link no network or storage package
//     (net, crypto/tls, gRPC, raft, memberlist, bbolt), even indirectly;
//     fsm imports none of the network packages itself (it imports raft and
//     bbolt, whose job it is), save the entries of knownExceptions, which
//     only shrink.
//   - Nothing in core, ledger, sched or fsm reads the clock or a random
//     source (time.Now, time.Since, time.Until, the timers, math/rand,
//     crypto/rand): time comes in as an argument, so every replica applies
//     and schedules the same way. clockAllowlist names the few legitimate
//     uses, each with its reason.
package layering
