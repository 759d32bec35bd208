package sim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// jsonValue is a parsed JSON value that remembers where it was in the input,
// so that a loader can say which line holds a wrong field. encoding/json's
// struct decoding loses positions, and objects here keep their key order
// (the resource order of a slotted file is the order its author wrote).
type jsonValue struct {
	line int
	kind jsonKind
	num  float64
	str  string
	keys []string // object keys in input order
	vals []*jsonValue
}

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonObject
	jsonArray
)

func (k jsonKind) String() string {
	return [...]string{"null", "a boolean", "a number", "a string", "an object", "an array"}[k]
}

// get returns the value of key in an object, or nil.
func (v *jsonValue) get(key string) *jsonValue {
	for i, k := range v.keys {
		if k == key {
			return v.vals[i]
		}
	}
	return nil
}

// jsonParser reads one JSON document with line numbers.
type jsonParser struct {
	dec   *json.Decoder
	lines []int // byte offsets at which lines start
	depth int   // arrays and objects open around the value being read
}

// maxJSONDepth bounds nesting. The inputs nest four levels at most; without
// a bound, a file of a few million "[" would overflow the parser's stack,
// which kills the process instead of returning an error.
const maxJSONDepth = 64

// parseJSON parses data into a tree; errors carry the line they occurred on.
func parseJSON(data []byte) (*jsonValue, int, error) {
	p := &jsonParser{dec: json.NewDecoder(bytes.NewReader(data)), lines: []int{0}}
	p.dec.UseNumber()
	for i, b := range data {
		if b == '\n' {
			p.lines = append(p.lines, i+1)
		}
	}
	v, err := p.value()
	if err != nil {
		return nil, p.line(), err
	}
	if _, err := p.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, p.line(), errors.New("unexpected data after the top-level value")
	}
	return v, 0, nil
}

// line is the line of the last token read.
func (p *jsonParser) line() int {
	off := int(p.dec.InputOffset()) - 1
	lo, hi := 0, len(p.lines)
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if p.lines[mid] <= off {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + 1
}

func (p *jsonParser) value() (*jsonValue, error) {
	tok, err := p.dec.Token()
	if err != nil {
		return nil, syntaxError(err)
	}
	v := &jsonValue{line: p.line()}
	switch t := tok.(type) {
	case nil:
		v.kind = jsonNull
	case bool:
		v.kind = jsonBool
	case json.Number:
		v.kind = jsonNumber
		if v.num, err = strconv.ParseFloat(string(t), 64); err != nil {
			return nil, fmt.Errorf("number %s is out of range", t)
		}
	case string:
		v.kind, v.str = jsonString, t
	case json.Delim:
		if p.depth == maxJSONDepth {
			return nil, fmt.Errorf("arrays and objects nest more than %d levels deep: this is not a longfair input file", maxJSONDepth)
		}
		p.depth++
		defer func() { p.depth-- }()
		switch t {
		case '{':
			v.kind = jsonObject
			for p.dec.More() {
				keyTok, err := p.dec.Token()
				if err != nil {
					return nil, syntaxError(err)
				}
				key := keyTok.(string) // the decoder only yields string keys inside objects
				if v.get(key) != nil {
					return nil, fmt.Errorf("key %q appears twice in one object", key)
				}
				keyLine := p.line()
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				if val.kind != jsonObject && val.kind != jsonArray {
					val.line = keyLine
				}
				v.keys, v.vals = append(v.keys, key), append(v.vals, val)
			}
		case '[':
			v.kind = jsonArray
			for p.dec.More() {
				val, err := p.value()
				if err != nil {
					return nil, err
				}
				v.vals = append(v.vals, val)
			}
		}
		if _, err := p.dec.Token(); err != nil { // the closing delimiter
			return nil, syntaxError(err)
		}
	}
	return v, nil
}

func syntaxError(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the JSON ends early: a brace or bracket is not closed")
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
