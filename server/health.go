package server

import (
	"context"
	"fmt"
	"time"
)

// healthInterval is how often the server checks that its FSM still
// applies entries.
const healthInterval = time.Second

// Failed delivers an error once the server can no longer do its job and
// must be restarted: its state store failed, so it stopped applying the
// log. A restart catches it up from the log. The channel is never closed.
func (s *Server) Failed() <-chan error { return s.failed }

// healthLoop watches the FSM and reports a failure once.
func (s *Server) healthLoop(ctx context.Context) {
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := s.fsm.Err(); err != nil {
			s.logger.Error("the state store failed and this server stopped applying the log; restart it", "error", err)
			s.failed <- fmt.Errorf("state store failed, restart the server to catch up from the log: %w", err)
			return
		}
	}
}
