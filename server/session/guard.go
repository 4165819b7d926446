package session

import (
	"context"
	"fmt"
	"runtime/debug"

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

func (s *live) runToolSafely(ctx context.Context, tool model.Tool, input any) (out any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("tool panicked", "tool", tool.Spec().Name, "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("the tool panicked: %v", r)
		}
	}()
	return tool.Run(ctx, input)
}
