package sim

import "fmt"

// InputError is a problem in a workload file: which file, which line, which
// field, and what is wrong with it.
type InputError struct {
	File  string
	Line  int // 1-based; 0 when the problem is not on one line
	Field string
	Msg   string
}

func (e *InputError) Error() string {
	switch {
	case e.Line > 0 && e.Field != "":
		return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Field, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	case e.Field != "":
		return fmt.Sprintf("%s: %s: %s", e.File, e.Field, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

func inputErrorf(file string, line int, field, format string, args ...any) *InputError {
	return &InputError{File: file, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
}
