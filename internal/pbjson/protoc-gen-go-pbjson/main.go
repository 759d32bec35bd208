// Command protoc-gen-go-pbjson is a protoc plugin that generates, for every
// message of the files it is given, a method
//
//	func (x *M) AppendProtoJSON(b []byte) ([]byte, error)
//
// that appends the message as protojson.MarshalOptions{UseProtoNames:
// true, EmitUnpopulated: true} writes it: fields by proto name in
// declaration order, every field present (null for an unset message, []
// and {} for empty lists and maps) except unset oneof members and proto3
// optional fields, which are left out; 64-bit integers as strings, enums by name, map entries by
// key, timestamps and durations in their JSON forms. The helpers it calls
// are in package pbjson, whose doc says why this exists.
//
// It refuses to generate for what it does not know (a well-known type
// other than Timestamp and Duration, a message of another Go package, a
// map not keyed by string), so a proto that uses one fails `make proto` loudly
// instead of encoding wrongly.
package main

import (
	"fmt"
	"strconv"

	"google.golang.org/protobuf/compiler/protogen"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/longfair/longfair/internal/pbgen"
)

const (
	pbjsonPkg  = protogen.GoImportPath("github.com/longfair/longfair/internal/pbjson")
	strconvPkg = protogen.GoImportPath("strconv")
)

func main() {
	pbgen.Run("protoc-gen-go-pbjson", "pbjson", message)
}

// message writes m's AppendProtoJSON.
func message(g *protogen.GeneratedFile, f *protogen.File, m *protogen.Message) error {
	w := &body{g: g, file: f}
	// written: a field that is always written comes before this one, so
	// this one's comma is known. maybe: only fields written when set (oneof
	// members, optional fields) come before it, so its comma is decided
	// when it is written.
	written, maybe := false, false
	for _, fd := range m.Fields {
		// A oneof member is written only when set, and so is a proto3
		// optional field (protojson's EmitUnpopulated leaves out every
		// field of a oneof, the synthetic ones included).
		member := fd.Oneof != nil && !fd.Oneof.Desc.IsSynthetic()
		optional := fd.Oneof != nil && fd.Oneof.Desc.IsSynthetic()
		comma := ""
		if written {
			comma = ","
		}
		name := strconv.Quote(comma + strconv.Quote(string(fd.Desc.Name())) + ":")
		switch {
		case member:
			w.p("if v, ok := x.", fd.Oneof.GoName, ".(*", g.QualifiedGoIdent(fd.GoIdent), "); ok {")
		case optional:
			w.p("if x.", fd.GoName, " != nil {")
		}
		if !written && maybe {
			w.p("if b[len(b)-1] != '{' {")
			w.p("b = append(b, ',')")
			w.p("}")
		}
		w.p("b = append(b, ", name, "...)")
		var err error
		switch {
		case member:
			err = w.singular("v."+fd.GoName, fd)
			w.p("}")
			maybe = true
		case optional:
			err = w.singular("*x."+fd.GoName, fd)
			w.p("}")
			maybe = true
		default:
			err = w.field(fd)
			written = true
		}
		if err != nil {
			return fmt.Errorf("%s: %w", fd.Desc.FullName(), err)
		}
	}
	g.P()
	g.P("// AppendProtoJSON appends x as protojson writes it with UseProtoNames and")
	g.P("// EmitUnpopulated; on a value protojson refuses it returns an error (see")
	g.P("// package pbjson).")
	g.P("func (x *", m.GoIdent.GoName, ") AppendProtoJSON(b []byte) ([]byte, error) {")
	g.P("if x == nil {")
	g.P("x = &", m.GoIdent.GoName, "{}")
	g.P("}")
	if w.usesErr {
		g.P("var err error")
	}
	g.P("b = append(b, '{')")
	for _, line := range w.lines {
		g.P(line)
	}
	g.P("return append(b, '}'), nil")
	g.P("}")
	return nil
}

// body collects a method's lines, and whether they use err.
type body struct {
	g       *protogen.GeneratedFile
	file    *protogen.File
	lines   pbgen.Lines
	usesErr bool
}

func (w *body) p(parts ...any) { w.lines.P(parts...) }

func (w *body) ident(pkg protogen.GoImportPath, name string) string {
	return w.g.QualifiedGoIdent(pkg.Ident(name))
}

// field writes the value of a field that is not a oneof member.
func (w *body) field(fd *protogen.Field) error {
	d := fd.Desc
	expr := "x." + fd.GoName
	switch {
	case d.IsMap():
		key, val := fd.Message.Fields[0], fd.Message.Fields[1]
		if key.Desc.Kind() != protoreflect.StringKind {
			return fmt.Errorf("a map keyed by %v is not supported (the API's maps are keyed by string)", key.Desc.Kind())
		}
		w.usesErr = true
		w.p("b = append(b, '{')")
		w.p("if len(", expr, ") > 0 {")
		w.p("var buf [8]string")
		w.p("for i, k := range ", w.ident(pbjsonPkg, "SortedKeys"), "(", expr, ", buf[:]) {")
		w.p("if i > 0 {")
		w.p("b = append(b, ',')")
		w.p("}")
		w.p("if b, err = ", w.ident(pbjsonPkg, "AppendString"), "(b, k); err != nil {")
		w.p("return b, err")
		w.p("}")
		w.p("b = append(b, ':')")
		if err := w.singular(expr+"[k]", val); err != nil {
			return err
		}
		w.p("}")
		w.p("}")
		w.p("b = append(b, '}')")
		return nil
	case d.IsList():
		w.p("b = append(b, '[')")
		w.p("for i, v := range ", expr, " {")
		w.p("if i > 0 {")
		w.p("b = append(b, ',')")
		w.p("}")
		if err := w.singular("v", fd); err != nil {
			return err
		}
		w.p("}")
		w.p("b = append(b, ']')")
		return nil
	case d.Kind() == protoreflect.MessageKind:
		w.p("if ", expr, " == nil {")
		w.p("b = append(b, \"null\"...)")
		w.p("} else {")
		if err := w.singular(expr, fd); err != nil {
			return err
		}
		w.p("}")
		return nil
	}
	return w.singular(expr, fd)
}

// singular writes one value of fd's kind, held in expr. A message held
// in a list, a map or a oneof member is written even when nil, as
// protojson does: as the message with every field unset.
func (w *body) singular(expr string, fd *protogen.Field) error {
	if fd.Desc.Kind() != protoreflect.MessageKind {
		return w.scalar(expr, fd)
	}
	msg := fd.Message
	switch full := msg.Desc.FullName(); full {
	case "google.protobuf.Timestamp", "google.protobuf.Duration":
		helper := "AppendTimestamp"
		if full == "google.protobuf.Duration" {
			helper = "AppendDuration"
		}
		w.usesErr = true
		w.p("if b, err = ", w.ident(pbjsonPkg, helper), "(b, ", expr, ".GetSeconds(), ", expr, ".GetNanos()); err != nil {")
		w.p("return b, err")
		w.p("}")
		return nil
	}
	if msg.GoIdent.GoImportPath != w.file.GoImportPath {
		return fmt.Errorf("message %s is in another Go package and has no AppendProtoJSON", msg.Desc.FullName())
	}
	w.usesErr = true
	w.p("if b, err = ", expr, ".AppendProtoJSON(b); err != nil {")
	w.p("return b, err")
	w.p("}")
	return nil
}

// scalar writes one value of a scalar or enum kind.
func (w *body) scalar(expr string, fd *protogen.Field) error {
	switch k := fd.Desc.Kind(); k {
	case protoreflect.BoolKind:
		w.p("b = ", w.ident(strconvPkg, "AppendBool"), "(b, ", expr, ")")
	case protoreflect.StringKind:
		w.usesErr = true
		w.p("if b, err = ", w.ident(pbjsonPkg, "AppendString"), "(b, ", expr, "); err != nil {")
		w.p("return b, err")
		w.p("}")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		w.p("b = ", w.ident(strconvPkg, "AppendInt"), "(b, int64(", expr, "), 10)")
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		w.p("b = ", w.ident(strconvPkg, "AppendUint"), "(b, uint64(", expr, "), 10)")
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		w.p("b = ", w.ident(pbjsonPkg, "AppendQuotedInt"), "(b, ", expr, ")")
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		w.p("b = ", w.ident(pbjsonPkg, "AppendQuotedUint"), "(b, ", expr, ")")
	case protoreflect.FloatKind:
		w.p("b = ", w.ident(pbjsonPkg, "AppendFloat"), "(b, float64(", expr, "), 32)")
	case protoreflect.DoubleKind:
		w.p("b = ", w.ident(pbjsonPkg, "AppendFloat"), "(b, ", expr, ", 64)")
	case protoreflect.BytesKind:
		w.p("b = ", w.ident(pbjsonPkg, "AppendBytes"), "(b, ", expr, ")")
	case protoreflect.EnumKind:
		if fd.Enum.Desc.FullName() == "google.protobuf.NullValue" {
			w.p("b = append(b, \"null\"...)")
			return nil
		}
		names := w.g.QualifiedGoIdent(protogen.GoIdent{GoName: fd.Enum.GoIdent.GoName + "_name", GoImportPath: fd.Enum.GoIdent.GoImportPath})
		w.p("b = ", w.ident(pbjsonPkg, "AppendEnum"), "(b, int32(", expr, "), ", names, ")")
	default:
		return fmt.Errorf("field kind %v is not supported", k)
	}
	return nil
}
