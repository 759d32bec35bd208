package ops

import (
	"testing"
)

// The servers' gossip metadata is a wire format between servers and
// workers of different versions during a rolling upgrade: these bytes are
// what servers have written since version 1 and must stay so.
func TestServerMetaWireFormat(t *testing.T) {
	full := ServerMeta{Version: 1, Role: RoleServer, ID: "s1", Raft: "127.0.0.1:7001", GRPC: "127.0.0.1:7002", Expect: 3, HasState: true}
	bare := ServerMeta{Version: 1, Role: RoleServer, ID: "s2"}
	for _, c := range []struct {
		meta ServerMeta
		wire string
	}{
		{full, `{"v":1,"role":"server","id":"s1","raft":"127.0.0.1:7001","grpc":"127.0.0.1:7002","expect":3,"state":true}`},
		{bare, `{"v":1,"role":"server","id":"s2"}`},
	} {
		b, err := c.meta.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != c.wire {
			t.Errorf("encoded %+v as\n%s\nwant the version-1 bytes\n%s", c.meta, b, c.wire)
		}
		got, ok := DecodeServerMeta([]byte(c.wire))
		if !ok || got != c.meta {
			t.Errorf("decoded %s as %+v (ok %v), want %+v", c.wire, got, ok, c.meta)
		}
	}
}

// A member that is not a server (a worker's protobuf advert, no metadata,
// another role) is not taken for one.
func TestDecodeServerMetaRefusesOthers(t *testing.T) {
	for _, b := range [][]byte{nil, {0x0a, 0x03, 'w', '0', '1'}, []byte(`{"v":1,"role":"worker","id":"w1","grpc":"x:1"}`), []byte(`{"v":1,`)} {
		if m, ok := DecodeServerMeta(b); ok {
			t.Errorf("DecodeServerMeta(%q) = %+v, true; want not a server", b, m)
		}
	}
	// A newer version still decodes; the reader decides what it accepts.
	if m, ok := DecodeServerMeta([]byte(`{"v":2,"role":"server","id":"s9","grpc":"h:1","new":"x"}`)); !ok || m.Version != 2 || m.GRPC != "h:1" {
		t.Errorf("version-2 metadata decoded as %+v, %v", m, ok)
	}
}
