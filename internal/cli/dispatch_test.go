package cli

import "io"

// dispatch runs the user and admin commands in the test's process, as the
// binary does.
func dispatch(args []string, stdout, stderr io.Writer) int {
	return Dispatch(Commands(), args, stdout, stderr)
}
