package longfairv1

import "github.com/longfair/longfair/core"

// Metadata keys every service understands. They travel as gRPC metadata, not
// in messages, so that the same request type serves every caller.
const (
	// AuthorizationMetadataKey carries "Bearer <token>".
	AuthorizationMetadataKey = "authorization"
	// ConsistentReadMetadataKey set to "true" asks a server to confirm it is
	// the leader and that its state is current before answering a read.
	ConsistentReadMetadataKey = "longfair-consistent"
)

// Limits shared by request validation and the cluster's own checks.
const (
	MaxNameLength      = core.MaxNameLength
	MaxTasksPerJob     = 1_000_000
	MaxNodesPerJob     = core.MaxNodesPerJob
	MaxAttemptsLimit   = 100
	DefaultMaxAttempts = 3
	MaxPageSize        = 1000
	DefaultPageSize    = 100
	MaxCommandArgs     = 1024
	MaxCommandBytes    = 64 << 10
	MaxJobNameBytes    = 256
	// MaxDependencyBytes bounds a job's --dependency text.
	MaxDependencyBytes = 4096
	MaxNoteBytes       = 1024
)
