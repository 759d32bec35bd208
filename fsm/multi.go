package fsm

import "encoding/binary"

// MultiVersion is the envelope version of a multi-command entry: several
// commands, each a complete single-command entry as Encode writes it, that a
// leader commits as one raft log entry (group commit). The FSM applies them
// in order, in the same transaction, exactly as if they were consecutive
// entries: each keeps its own time stamp and gets its own Result, and a
// refused one changes nothing while its neighbours apply.
//
// Layout: version (1 byte, MultiVersion), the number of commands (4 bytes,
// big-endian), then for each command its length (4 bytes, big-endian) and
// its single-command entry (of any version Decode reads). Servers of
// releases before this one refuse the version on every entry it is used
// for, as they refuse any version they do not know; upgrade every server
// before a leader of this release proposes.
const MultiVersion = 2

// multiHeader is the version byte and the command count.
const multiHeader = 5

// multiLength is the size of each command's length prefix.
const multiLength = 4

// MaxMultiCommands bounds the number of commands in one multi-command
// entry.
const MaxMultiCommands = 4096

// Results is what the FSM answers for a multi-command entry (raft hands it
// back as ApplyFuture.Response()): one *Result per command, in the order of
// the entry, each carrying the entry's log index. Response[T] unpacks each
// one. An entry that cannot be split is answered with a single *Result
// refusing it whole.
type Results []*Result

// EncodeMulti joins entries written by Encode into one multi-command entry.
// It checks only that each is an entry of CommandVersion: their bodies were checked
// when they were encoded. It refuses an empty list, more than
// MaxMultiCommands entries, and a result larger than MaxCommandBytes.
func EncodeMulti(entries [][]byte) ([]byte, error) {
	if len(entries) == 0 {
		return nil, invalid("a multi-command entry needs at least one command")
	}
	if len(entries) > MaxMultiCommands {
		return nil, invalid("a multi-command entry holds at most %d commands, not %d: split them over several entries", MaxMultiCommands, len(entries))
	}
	size := multiHeader
	for i, e := range entries {
		if len(e) < envelopeHeader || e[0] != CommandVersion {
			return nil, invalid("command %d of a multi-command entry is not a version-%d entry written by Encode", i, CommandVersion)
		}
		size += multiLength + len(e)
	}
	if size > MaxCommandBytes {
		return nil, invalid("the multi-command entry would be %d bytes, more than the %d allowed: put fewer commands in it", size, MaxCommandBytes)
	}
	buf := make([]byte, multiHeader, size)
	buf[0] = MultiVersion
	binary.BigEndian.PutUint32(buf[1:], uint32(len(entries)))
	for _, e := range entries {
		buf = binary.BigEndian.AppendUint32(buf, uint32(len(e)))
		buf = append(buf, e...)
	}
	return buf, nil
}

// IsMulti reports whether a log entry is a multi-command entry (whether or
// not it is well formed).
func IsMulti(data []byte) bool { return len(data) > 0 && data[0] == MultiVersion }

// SplitMulti returns the single-command entries a multi-command entry holds,
// sharing data's memory. It refuses, with an *Error, an entry that is not a
// multi-command entry, a count of zero or above MaxMultiCommands, a length
// that runs past the end, a command that is itself a multi-command entry,
// and trailing bytes. It never panics, whatever the bytes. The commands
// themselves are not decoded: Decode refuses a bad one on its own, without
// refusing its neighbours.
func SplitMulti(data []byte) ([][]byte, error) {
	if len(data) < multiHeader || data[0] != MultiVersion {
		return nil, invalid("log entry is not a multi-command entry (version %d with a %d-byte header)", MultiVersion, multiHeader)
	}
	if len(data) > MaxCommandBytes {
		return nil, invalid("multi-command entry is %d bytes, more than the %d allowed", len(data), MaxCommandBytes)
	}
	n := binary.BigEndian.Uint32(data[1:])
	if n == 0 || n > MaxMultiCommands {
		return nil, invalid("multi-command entry says it holds %d commands: it must hold 1 to %d", n, MaxMultiCommands)
	}
	// Every command takes at least its length prefix and a header, so a
	// count the bytes cannot hold is refused before anything is allocated.
	if uint64(n)*(multiLength+envelopeHeader) > uint64(len(data)-multiHeader) {
		return nil, invalid("multi-command entry says it holds %d commands but has only %d bytes for them", n, len(data)-multiHeader)
	}
	parts := make([][]byte, 0, n)
	rest := data[multiHeader:]
	for i := range n {
		if len(rest) < multiLength {
			return nil, invalid("multi-command entry ends before the length of command %d", i)
		}
		size := binary.BigEndian.Uint32(rest)
		rest = rest[multiLength:]
		if uint64(size) > uint64(len(rest)) {
			return nil, invalid("command %d of the multi-command entry is %d bytes but only %d remain", i, size, len(rest))
		}
		part := rest[:size:size]
		if IsMulti(part) {
			return nil, invalid("command %d of the multi-command entry is itself a multi-command entry: they do not nest", i)
		}
		parts = append(parts, part)
		rest = rest[size:]
	}
	if len(rest) != 0 {
		return nil, invalid("multi-command entry has %d bytes after its last command", len(rest))
	}
	return parts, nil
}

// entryChanges is the set of command types a log entry holds, read from
// the headers only: what watchers are told was applied.
func entryChanges(data []byte) Changes {
	var c Changes
	add := func(e []byte) {
		if len(e) > 1 && e[1] < 64 {
			c |= 1 << e[1]
		}
	}
	if !IsMulti(data) {
		add(data)
		return c
	}
	parts, err := SplitMulti(data)
	if err != nil {
		return 0
	}
	for _, p := range parts {
		add(p)
	}
	return c
}
