// Command protoc-gen-go-escape is a protoc plugin that generates, for
// every message of the files it is given, a method
//
//	func (x *M) EscapeStrings(esc func(string) string)
//
// that replaces every string x holds by esc of it, in place and at any
// depth: string fields (proto3 optional ones and oneof members included),
// list elements, map keys and map values, and the same in every message
// x holds. Bytes are left alone, as are numbers and enums. A nil x is
// left alone. The helpers it calls are in package pbescape, whose doc
// says why this exists.
//
// A message of another Go package is left alone when it holds no string
// (Timestamp, Duration); one that does fails generation, so a proto that
// uses one fails `make proto` loudly instead of leaving strings unescaped.
package main

import (
	"fmt"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/longfair/longfair/internal/pbgen"
)

const pbescapePkg = protogen.GoImportPath("github.com/longfair/longfair/internal/pbescape")

func main() {
	pbgen.Run("protoc-gen-go-escape", "escape", message)
}

// message writes m's EscapeStrings.
func message(g *protogen.GeneratedFile, f *protogen.File, m *protogen.Message) error {
	w := &body{pbgen.Body{G: g, File: f}}
	oneofs := map[*protogen.Oneof]bool{}
	for _, fd := range m.Fields {
		var err error
		switch {
		case fd.Oneof != nil && !fd.Oneof.Desc.IsSynthetic():
			if !oneofs[fd.Oneof] {
				oneofs[fd.Oneof] = true
				err = w.oneof(fd.Oneof)
			}
		case fd.Desc.HasOptionalKeyword():
			// A proto3 optional field: a pointer to its value.
			if fd.Desc.Kind() == protoreflect.StringKind {
				w.P("if x.", fd.GoName, " != nil {")
				w.P("v := esc(*x.", fd.GoName, ")")
				w.P("x.", fd.GoName, " = &v")
				w.P("}")
			} else {
				err = w.singular("x."+fd.GoName, fd)
			}
		default:
			err = w.field(fd)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fd.Desc.FullName(), err)
		}
	}
	g.P()
	g.P("// EscapeStrings replaces every string x holds, at any depth (fields,")
	g.P("// list elements, map keys and values), by esc of it; see package pbescape.")
	g.P("func (x *", m.GoIdent.GoName, ") EscapeStrings(esc func(string) string) {")
	g.P("if x == nil {")
	g.P("return")
	g.P("}")
	for _, line := range w.Lines {
		g.P(line)
	}
	g.P("}")
	return nil
}

// body collects a method's lines.
type body struct{ pbgen.Body }

func (w *body) helper(name string) string { return w.Ident(pbescapePkg, name) }

// field writes the escaping of a field that is neither a oneof member
// nor proto3 optional.
func (w *body) field(fd *protogen.Field) error {
	d := fd.Desc
	expr := "x." + fd.GoName
	switch {
	case d.IsMap():
		key, val := fd.Message.Fields[0], fd.Message.Fields[1]
		switch val.Desc.Kind() {
		case protoreflect.StringKind:
			w.P(w.helper("Values"), "(", expr, ", esc)")
		case protoreflect.MessageKind:
			ok, err := w.holdsStrings(val.Message)
			if err != nil {
				return err
			}
			if ok {
				w.P("for _, v := range ", expr, " {")
				w.P("v.EscapeStrings(esc)")
				w.P("}")
			}
		}
		// The keys, whatever the values hold.
		if key.Desc.Kind() == protoreflect.StringKind {
			w.P(w.helper("Keys"), "(", expr, ", esc)")
		}
		return nil
	case d.IsList():
		switch d.Kind() {
		case protoreflect.StringKind:
			w.P(w.helper("Strings"), "(", expr, ", esc)")
		case protoreflect.MessageKind:
			if ok, err := w.holdsStrings(fd.Message); err != nil || !ok {
				return err
			}
			w.P("for _, v := range ", expr, " {")
			w.P("v.EscapeStrings(esc)")
			w.P("}")
		}
		return nil
	}
	return w.singular(expr, fd)
}

// oneof writes the escaping of whichever member of o is set, for the
// members that hold strings.
func (w *body) oneof(o *protogen.Oneof) error {
	var cases [][]string
	for _, fd := range o.Fields {
		inner := &body{pbgen.Body{G: w.G, File: w.File}}
		if err := inner.singular("v."+fd.GoName, fd); err != nil {
			return fmt.Errorf("%s: %w", fd.Desc.FullName(), err)
		}
		if len(inner.Lines) > 0 {
			cases = append(cases, append([]string{"case *" + w.G.QualifiedGoIdent(fd.GoIdent) + ":"}, inner.Lines...))
		}
	}
	if len(cases) == 0 {
		return nil
	}
	w.P("switch v := x.", o.GoName, ".(type) {")
	for _, c := range cases {
		w.Lines = append(w.Lines, c...)
	}
	w.P("}")
	return nil
}

// singular writes the escaping of one value of fd's kind held in expr:
// a string is replaced, a message escaped in place (nil is left alone
// by its method), anything else left as it is.
func (w *body) singular(expr string, fd *protogen.Field) error {
	switch fd.Desc.Kind() {
	case protoreflect.StringKind:
		w.P(expr, " = esc(", expr, ")")
	case protoreflect.MessageKind:
		if ok, err := w.holdsStrings(fd.Message); err != nil || !ok {
			return err
		}
		w.P(expr, ".EscapeStrings(esc)")
	case protoreflect.GroupKind:
		return fmt.Errorf("groups are not supported")
	}
	return nil
}

// holdsStrings reports whether a message of m's type can hold a string.
// A message of this file's Go package always gets an EscapeStrings, so
// it is called whatever it holds; one of another package (Timestamp,
// Duration) has none, so it must hold no string.
func (w *body) holdsStrings(m *protogen.Message) (bool, error) {
	if m.GoIdent.GoImportPath == w.File.GoImportPath {
		return true, nil
	}
	if anyString(m.Desc, map[protoreflect.FullName]bool{}) {
		return false, fmt.Errorf("message %s is in another Go package, holds strings and has no EscapeStrings", m.Desc.FullName())
	}
	return false, nil
}

// anyString reports whether a message of m's type can hold a string at
// any depth; seen breaks recursive types.
func anyString(m protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[m.FullName()] {
		return false
	}
	seen[m.FullName()] = true
	fields := m.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.Kind() == protoreflect.StringKind:
			return true
		case fd.IsMap() && (fd.MapKey().Kind() == protoreflect.StringKind || fd.MapValue().Kind() == protoreflect.StringKind):
			return true
		case fd.IsMap() && fd.MapValue().Kind() == protoreflect.MessageKind:
			if anyString(fd.MapValue().Message(), seen) {
				return true
			}
		case fd.Message() != nil && !fd.IsMap():
			if anyString(fd.Message(), seen) {
				return true
			}
		}
	}
	return false
}
