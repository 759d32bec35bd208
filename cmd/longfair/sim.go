package main

import (
	"errors"
	"io"
)

// runSim is replaced by the simulator front end.
func runSim(args []string, stdout, stderr io.Writer) error {
	return errors.New("not built yet")
}
