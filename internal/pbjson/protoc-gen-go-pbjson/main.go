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
	w := &body{Body: pbgen.Body{G: g, File: f}}
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
			w.P("if v, ok := x.", fd.Oneof.GoName, ".(*", g.QualifiedGoIdent(fd.GoIdent), "); ok {")
		case optional:
			w.P("if x.", fd.GoName, " != nil {")
		}
		if !written && maybe {
			w.P("if b[len(b)-1] != '{' {")
			w.P("b = append(b, ',')")
			w.P("}")
		}
		w.P("b = append(b, ", name, "...)")
		var err error
		switch {
		case member:
			err = w.singular("v."+fd.GoName, fd)
			w.P("}")
			maybe = true
		case optional:
			err = w.singular("*x."+fd.GoName, fd)
			w.P("}")
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
	for _, line := range w.Lines {
		g.P(line)
	}
	g.P("return append(b, '}'), nil")
	g.P("}")
	return nil
}

// body collects a method's lines, and whether they use err.
type body struct {
	pbgen.Body
	usesErr bool
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
		w.P("b = append(b, '{')")
		w.P("if len(", expr, ") > 0 {")
		w.P("var buf [8]string")
		w.P("for i, k := range ", w.Ident(pbjsonPkg, "SortedKeys"), "(", expr, ", buf[:]) {")
		w.P("if i > 0 {")
		w.P("b = append(b, ',')")
		w.P("}")
		w.P("if b, err = ", w.Ident(pbjsonPkg, "AppendString"), "(b, k); err != nil {")
		w.P("return b, err")
		w.P("}")
		w.P("b = append(b, ':')")
		if err := w.singular(expr+"[k]", val); err != nil {
			return err
		}
		w.P("}")
		w.P("}")
		w.P("b = append(b, '}')")
		return nil
	case d.IsList():
		w.P("b = append(b, '[')")
		w.P("for i, v := range ", expr, " {")
		w.P("if i > 0 {")
		w.P("b = append(b, ',')")
		w.P("}")
		if err := w.singular("v", fd); err != nil {
			return err
		}
		w.P("}")
		w.P("b = append(b, ']')")
		return nil
	case d.Kind() == protoreflect.MessageKind:
		w.P("if ", expr, " == nil {")
		w.P("b = append(b, \"null\"...)")
		w.P("} else {")
		if err := w.singular(expr, fd); err != nil {
			return err
		}
		w.P("}")
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
		w.P("if b, err = ", w.Ident(pbjsonPkg, helper), "(b, ", expr, ".GetSeconds(), ", expr, ".GetNanos()); err != nil {")
		w.P("return b, err")
		w.P("}")
		return nil
	}
	if msg.GoIdent.GoImportPath != w.File.GoImportPath {
		return fmt.Errorf("message %s is in another Go package and has no AppendProtoJSON", msg.Desc.FullName())
	}
	w.usesErr = true
	w.P("if b, err = ", expr, ".AppendProtoJSON(b); err != nil {")
	w.P("return b, err")
	w.P("}")
	return nil
}

// scalar writes one value of a scalar or enum kind.
func (w *body) scalar(expr string, fd *protogen.Field) error {
	switch k := fd.Desc.Kind(); k {
	case protoreflect.BoolKind:
		w.P("b = ", w.Ident(strconvPkg, "AppendBool"), "(b, ", expr, ")")
	case protoreflect.StringKind:
		w.usesErr = true
		w.P("if b, err = ", w.Ident(pbjsonPkg, "AppendString"), "(b, ", expr, "); err != nil {")
		w.P("return b, err")
		w.P("}")
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		w.P("b = ", w.Ident(strconvPkg, "AppendInt"), "(b, int64(", expr, "), 10)")
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		w.P("b = ", w.Ident(strconvPkg, "AppendUint"), "(b, uint64(", expr, "), 10)")
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		w.P("b = ", w.Ident(pbjsonPkg, "AppendQuotedInt"), "(b, ", expr, ")")
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		w.P("b = ", w.Ident(pbjsonPkg, "AppendQuotedUint"), "(b, ", expr, ")")
	case protoreflect.FloatKind:
		w.P("b = ", w.Ident(pbjsonPkg, "AppendFloat"), "(b, float64(", expr, "), 32)")
	case protoreflect.DoubleKind:
		w.P("b = ", w.Ident(pbjsonPkg, "AppendFloat"), "(b, ", expr, ", 64)")
	case protoreflect.BytesKind:
		w.P("b = ", w.Ident(pbjsonPkg, "AppendBytes"), "(b, ", expr, ")")
	case protoreflect.EnumKind:
		if fd.Enum.Desc.FullName() == "google.protobuf.NullValue" {
			w.P("b = append(b, \"null\"...)")
			return nil
		}
		names := w.G.QualifiedGoIdent(protogen.GoIdent{GoName: fd.Enum.GoIdent.GoName + "_name", GoImportPath: fd.Enum.GoIdent.GoImportPath})
		w.P("b = ", w.Ident(pbjsonPkg, "AppendEnum"), "(b, int32(", expr, "), ", names, ")")
	default:
		return fmt.Errorf("field kind %v is not supported", k)
	}
	return nil
}
