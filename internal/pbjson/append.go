package pbjson

import (
	"cmp"
	"encoding/base64"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// ErrRefused is what an append returns for a value protojson would refuse;
// the caller then asks protojson, for its error.
var ErrRefused = errors.New("pbjson: a value protojson refuses; ask protojson for its error")

// AppendString appends s as a JSON string, escaped as protojson escapes
// it. A string that is not valid UTF-8 is refused.
func AppendString(b []byte, s string) ([]byte, error) {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= ' ' && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				return b, ErrRefused
			}
			i += n
			continue
		}
		b = append(b, s[start:i]...)
		b = append(b, '\\')
		switch c {
		case '"', '\\':
			b = append(b, c)
		case '\b':
			b = append(b, 'b')
		case '\f':
			b = append(b, 'f')
		case '\n':
			b = append(b, 'n')
		case '\r':
			b = append(b, 'r')
		case '\t':
			b = append(b, 't')
		default:
			b = append(b, 'u')
			b = append(b, "0000"[1+(bits.Len32(uint32(c))-1)/4:]...)
			b = strconv.AppendUint(b, uint64(c), 16)
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// AppendFloat appends f, a float or (bitSize 64) a double, as protojson
// does: NaN and the infinities as strings, exponent form outside
// [1e-6, 1e21), and no leading zero in a negative exponent's two digits.
func AppendFloat(b []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `"NaN"`...)
	case math.IsInf(f, +1):
		return append(b, `"Infinity"`...)
	case math.IsInf(f, -1):
		return append(b, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) ||
			bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bitSize)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// AppendQuotedInt appends a 64-bit integer as protojson does: a string.
func AppendQuotedInt(b []byte, v int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

// AppendQuotedUint appends an unsigned 64-bit integer as a string.
func AppendQuotedUint(b []byte, v uint64) []byte {
	b = append(b, '"')
	b = strconv.AppendUint(b, v, 10)
	return append(b, '"')
}

// AppendBytes appends bytes as standard, padded base64 in a string.
func AppendBytes(b []byte, v []byte) []byte {
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// AppendEnum appends an enum value by its name, or by its number when it
// has none (a value from a newer peer).
func AppendEnum(b []byte, v int32, names map[int32]string) []byte {
	if name, ok := names[v]; ok {
		b = append(b, '"')
		b = append(b, name...)
		return append(b, '"')
	}
	return strconv.AppendInt(b, int64(v), 10)
}

// The range protojson accepts for a google.protobuf.Timestamp (years 1 to
// 9999) and a google.protobuf.Duration (about ±10,000 years).
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799
	maxDurationSeconds  = 315576000000
	nanosPerSecond      = 1_000_000_000
)

// AppendTimestamp appends a google.protobuf.Timestamp: RFC 3339 in UTC,
// with 0, 3, 6 or 9 fractional digits.
func AppendTimestamp(b []byte, secs int64, nanos int32) ([]byte, error) {
	if secs < minTimestampSeconds || secs > maxTimestampSeconds || nanos < 0 || nanos > nanosPerSecond {
		return b, ErrRefused
	}
	b = append(b, '"')
	b = time.Unix(secs, int64(nanos)).UTC().AppendFormat(b, "2006-01-02T15:04:05.000000000")
	b = trimFraction(b)
	return append(b, 'Z', '"'), nil
}

// AppendDuration appends a google.protobuf.Duration: seconds with 0, 3, 6
// or 9 fractional digits and the suffix "s".
func AppendDuration(b []byte, secs int64, nanos int32) ([]byte, error) {
	if secs < -maxDurationSeconds || secs > maxDurationSeconds || nanos < -nanosPerSecond || nanos > nanosPerSecond ||
		secs > 0 && nanos < 0 || secs < 0 && nanos > 0 {
		return b, ErrRefused
	}
	b = append(b, '"')
	if secs < 0 || nanos < 0 {
		b = append(b, '-')
		secs, nanos = -secs, -nanos
	}
	b = strconv.AppendInt(b, secs, 10)
	b = append(b, '.')
	start := len(b)
	b = strconv.AppendInt(b, int64(nanos), 10)
	if pad := 9 - (len(b) - start); pad > 0 {
		// Right-align the digits in nine places.
		b = append(b, "000000000"[:pad]...)
		copy(b[start+pad:], b[start:len(b)-pad])
		copy(b[start:start+pad], "000000000")
	}
	b = trimFraction(b)
	return append(b, 's', '"'), nil
}

// trimFraction drops the trailing zero groups of a nine-digit fraction as
// protojson does: "000", "000" again, then ".000".
func trimFraction(b []byte) []byte {
	for range 2 {
		if n := len(b); n >= 3 && string(b[n-3:]) == "000" {
			b = b[:n-3]
		}
	}
	if n := len(b); n >= 4 && string(b[n-4:]) == ".000" {
		b = b[:n-4]
	}
	return b
}

// SortedKeys returns m's keys in order (protojson writes a map's entries
// by key), in buf's storage when it is large enough: a caller passes a
// small array on its stack, and a short map costs no allocation.
func SortedKeys[K cmp.Ordered, V any](m map[K]V, buf []K) []K {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
