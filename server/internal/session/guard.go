package session

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"unicode/utf8"

	"github.com/agentsync/agentsync/server/model"
	"github.com/agentsync/agentsync/synccore"
)

// A provider or tool is code the engine does not control: a panic in one
// fails its turn (typed error, logged stack) instead of the whole server.

func (s *live) stream(ctx context.Context, p model.Provider, req model.Request, emit func(model.Event) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("model panicked", "model", req.Model, "panic", r, "stack", string(debug.Stack()))
			err = synccore.Errorf(synccore.CodeInternal, "the model %q panicked: %v", req.Model, r)
		}
	}()
	return p.Stream(ctx, req, emit)
}

// runToolSafely runs a tool with a deadline, in a goroutine of its own so
// that a tool ignoring its context cannot hold the turn: past the deadline
// the call is an error and the goroutine is left to finish (or leak, a
// tool bug the log names). A panic is an error too; the output is bounded.
func (s *live) runToolSafely(ctx context.Context, tool model.Tool, input any) (any, []model.File, error) {
	name := tool.Spec().Name
	ctx, cancel := context.WithTimeout(ctx, s.m.toolTime)
	defer cancel()
	type result struct {
		out any
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("tool panicked", "tool", name, "panic", r, "stack", string(debug.Stack()))
				done <- result{err: fmt.Errorf("the tool panicked: %v", r)}
			}
		}()
		out, err := tool.Run(ctx, input)
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return nil, nil, r.err
		}
		out, files := r.out, []model.File(nil)
		if tf, ok := out.(model.ToolFiles); ok {
			out, files = tf.Output, tf.Files
		}
		return boundOutput(out, s.m.toolOut), files, nil
	case <-ctx.Done():
		if ctx.Err() == context.DeadlineExceeded {
			s.log.Warn("tool timed out", "tool", name, "timeout", s.m.toolTime)
			return nil, nil, fmt.Errorf("the tool did not finish within %s", s.m.toolTime)
		}
		return nil, nil, context.Cause(ctx)
	}
}

// boundOutput keeps an output whose JSON fits max bytes as it is; a larger
// one becomes {truncated: true, bytes: N, head: the first max bytes of its
// JSON}, so neither the store, the clients nor the model's context take a
// tool's whole dump.
func boundOutput(out any, max int) any {
	b, err := json.Marshal(out)
	if err != nil {
		return map[string]any{"error": "the tool's output is not JSON: " + err.Error()}
	}
	if len(b) <= max {
		return out
	}
	head := b[:max]
	for len(head) > 0 && !utf8.Valid(head) {
		head = head[:len(head)-1]
	}
	return map[string]any{"truncated": true, "bytes": int64(len(b)), "head": string(head)}
}
