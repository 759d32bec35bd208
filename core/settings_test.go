package core

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestCheckRho(t *testing.T) {
	for _, rho := range []float64{0, 0.25, 1} {
		if err := CheckRho("qknobler_rho", rho); err != nil {
			t.Errorf("ρ %v refused: %v", rho, err)
		}
	}
	for _, rho := range []float64{-0.01, 1.5, math.NaN(), math.Inf(1)} {
		err := CheckRho("qknobler_rho", rho)
		if err == nil {
			t.Errorf("ρ %v accepted", rho)
			continue
		}
		// The message names the field as the caller gave it and says what
		// range to give.
		if !strings.HasPrefix(err.Error(), "qknobler_rho ") || !strings.Contains(err.Error(), "give a value in [0, 1]") {
			t.Errorf("ρ %v: %v", rho, err)
		}
	}
}

func TestCheckQuantum(t *testing.T) {
	if err := CheckQuantum(time.Minute); err != nil {
		t.Error(err)
	}
	for _, q := range []time.Duration{0, -time.Second} {
		if err := CheckQuantum(q); err == nil || !strings.Contains(err.Error(), "must be positive") {
			t.Errorf("quantum %v: %v", q, err)
		}
	}
}
