package cli

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	longfairv1 "github.com/longfair/longfair/api/longfair/v1"
	"github.com/longfair/longfair/core"
)

// table is a listing: a header and rows of cells.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// writeTable writes t aligned in columns (or CSV with a header line),
// every cell escaped (core.Escape): a control character in a cell would
// drive the terminal, and a tab or newline would break the columns.
func writeTable(w io.Writer, format string, t table) error {
	t = escapeTable(t)
	if format == "csv" {
		cw := csv.NewWriter(w)
		if err := cw.Write(t.header); err != nil {
			return err
		}
		if err := cw.WriteAll(t.rows); err != nil {
			return err
		}
		return cw.Error()
	}
	// Aligned in memory and written at once: tabwriter writes every cell
	// and every run of padding on its own, which for a 50-job listing
	// straight to stdout was about 1,500 write calls.
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(t.header, "\t"))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// escapeTable returns t with every cell escaped, copying only when a cell
// changes.
func escapeTable(t table) table {
	out := table{header: t.header, rows: t.rows}
	copied := false
	for i, r := range t.rows {
		for j, c := range r {
			e := core.Escape(c)
			if e == c {
				continue
			}
			if !copied {
				out.rows = make([][]string, len(t.rows))
				for k := range t.rows {
					out.rows[k] = append([]string(nil), t.rows[k]...)
				}
				copied = true
			}
			out.rows[i][j] = e
		}
	}
	return out
}

// writeListing writes a listing as a table, CSV, or JSON. The JSON is
// value: API messages in the API's JSON mapping (field names as in the
// .proto files, 64-bit integers as strings, enums by name), anything else
// with encoding/json.
func writeListing(w io.Writer, format string, t table, value any) error {
	if format == "json" {
		return writeJSON(w, value)
	}
	return writeTable(w, format, t)
}

// writeJSON writes v indented, followed by a newline.
func writeJSON(w io.Writer, v any) error {
	raw, err := marshalJSON(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// writeJSONLine writes v on one line (for streams of objects).
func writeJSONLine(w io.Writer, v any) error {
	raw, err := marshalJSON(v)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

// marshalJSON encodes API messages (alone, in slices or in maps, or as
// fields of a jsonObject) as the JSON/HTTP API writes them
// (longfairv1.AppendJSON: their generated encoding, protojson's bytes
// without its reflection) and the rest with encoding/json.
func marshalJSON(v any) ([]byte, error) {
	switch x := v.(type) {
	case proto.Message:
		return longfairv1.AppendJSON(nil, x)
	case jsonArray:
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, o := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, err := marshalJSON(o)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
		buf.WriteByte(']')
		return buf.Bytes(), nil
	case jsonObject:
		var buf bytes.Buffer
		buf.WriteByte('{')
		for i, kv := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(kv.key)
			buf.Write(k)
			buf.WriteByte(':')
			b, err := marshalJSON(kv.value)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
		buf.WriteByte('}')
		return buf.Bytes(), nil
	}
	if msgs, ok := protoSlice(v); ok {
		var buf bytes.Buffer
		buf.WriteByte('[')
		for i, m := range msgs {
			if i > 0 {
				buf.WriteByte(',')
			}
			b, err := longfairv1.AppendJSON(buf.AvailableBuffer(), m)
			if err != nil {
				return nil, err
			}
			buf.Write(b)
		}
		buf.WriteByte(']')
		return buf.Bytes(), nil
	}
	return json.Marshal(v)
}

// jsonObject is a JSON object with fields in order, whose values may be
// API messages.
type jsonObject []jsonField

type jsonField struct {
	key   string
	value any
}

// jsonArray is a JSON array of jsonObjects.
type jsonArray []jsonObject

// protoSlice converts a slice of API messages to []proto.Message.
func protoSlice(v any) ([]proto.Message, bool) {
	x, ok := v.([]proto.Message)
	return x, ok
}

// messages converts a typed slice of API messages for marshalJSON.
func messages[T proto.Message](list []T) []proto.Message {
	out := make([]proto.Message, len(list))
	for i, m := range list {
		out[i] = m
	}
	return out
}

// Cell formatting shared by the listings.

func fmtTime(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return "-"
	}
	return ts.AsTime().Local().Format("2006-01-02 15:04:05")
}

func fmtDuration(d *durationpb.Duration) string {
	if d == nil {
		return "-"
	}
	return fmtDur(d.AsDuration())
}

// fmtDur rounds a duration for people: "1h2m", "3.5s", "250ms".
func fmtDur(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d >= time.Hour:
		return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
	case d >= time.Minute:
		return d.Round(time.Second).String()
	case d >= time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func fmtNumber(x float64) string {
	return fmt.Sprintf("%.4g", x)
}
