package ops

import "encoding/json"

// RoleServer is the gossip role of a longfair server.
const RoleServer = "server"

// ServerMetaVersion is the version of the servers' gossip metadata format.
// A server ignores members whose metadata has another version rather than
// guessing what it means.
const ServerMetaVersion = 1

// ServerMeta is what a server advertises about itself in the gossip pool,
// and what servers and workers read back from it. It travels in
// memberlist's node metadata, limited to 512 bytes, as JSON: the field
// names below are the wire format, so they never change.
type ServerMeta struct {
	Version int    `json:"v"`
	Role    string `json:"role"`
	ID      string `json:"id"`
	Raft    string `json:"raft,omitempty"`
	// GRPC is the address clients and workers dial.
	GRPC string `json:"grpc,omitempty"`
	// Expect is the server's bootstrap-expect setting, so that servers
	// started with different values notice instead of forming odd groups.
	Expect int `json:"expect,omitempty"`
	// HasState is set once the server holds Raft state: a server that
	// sees a peer with state never bootstraps a new group beside it.
	HasState bool `json:"state,omitempty"`
}

// Encode is the metadata as it travels in the gossip pool.
func (m ServerMeta) Encode() ([]byte, error) { return json.Marshal(m) }

// DecodeServerMeta reads a member's gossip metadata. ok is false when it
// is not a server's (a worker's advert, say, or no metadata at all).
// Whether the version is one the reader understands is the reader's call:
// a worker only needs the role and the gRPC address.
func DecodeServerMeta(b []byte) (m ServerMeta, ok bool) {
	if err := json.Unmarshal(b, &m); err != nil || m.Role != RoleServer {
		return ServerMeta{}, false
	}
	return m, true
}
