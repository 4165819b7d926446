package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/httpwire"
	"github.com/agentsync/agentsync/synccore"
)

// printAnswer is -p: a new session, the prompt, the end of the turn. It
// returns the answer's final text (finalText), or why the turn did not end
// with one.
func printAnswer(ctx context.Context, o options, stderr io.Writer) (string, error) {
	api := o.api()
	sess, err := api.CreateSession(ctx, o.model)
	if err != nil {
		return "", fmt.Errorf("create a session on %s: %w", o.url, err)
	}
	c, err := bindings.Dial(ctx, o.clientConfig(sess.SessionID))
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", o.url, err)
	}
	defer c.Close()
	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: o.prompt})
	if err != nil {
		return "", fmt.Errorf("send the prompt: %w", err)
	}
	answered := map[string]bool{}
	for {
		var reply *synccore.Message
		var ask *synccore.Part
		err := c.WaitFor(ctx, func(v bindings.View) bool {
			reply, ask = turnState(v, sent.Sequence, answered)
			return ask != nil || (reply != nil && reply.Done())
		})
		if err != nil {
			if ctx.Err() != nil {
				// Interrupted: stop the turn on the server too.
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = c.Action(sctx, bindings.ActionStop, "")
				cancel()
				return "", errors.New("interrupted")
			}
			return "", err
		}
		if ask != nil {
			answered[ask.InteractionID] = true
			req, _ := httpwire.RequestOf(ask)
			if req.Kind != httpwire.KindApproval || !o.yes {
				_, _ = c.Action(ctx, bindings.ActionStop, "")
				if req.Kind == httpwire.KindApproval {
					return "", fmt.Errorf("the turn asks to approve %s (-yes approves tool calls)", req.ToolName)
				}
				return "", fmt.Errorf("the turn asks a question -p cannot answer: %s", req.Question)
			}
			if _, err := c.Answer(ctx, ask.InteractionID, bindings.Approval(true)); err != nil {
				return "", fmt.Errorf("approve %s: %w", req.ToolName, err)
			}
			continue
		}
		return turnResult(reply)
	}
}

// turnState finds the reply to the user message with sequence userSeq (the
// newest agent message after it, once the view is live) and an interaction
// of it still pending that answered does not hold.
func turnState(v bindings.View, userSeq int64, answered map[string]bool) (reply *synccore.Message, ask *synccore.Part) {
	last, ok := v.Messages.Last()
	if !ok || v.Status != synccore.StatusLive || last.Role != synccore.RoleAgent || last.Sequence <= userSeq {
		return nil, nil
	}
	for i := range last.Parts {
		p := &last.Parts[i]
		if p.Type == synccore.PartInteraction && p.Status == synccore.InteractionPending && !answered[p.InteractionID] {
			return last, p
		}
	}
	return last, nil
}

// turnResult is the final text of a finished reply, or the error it ended
// with.
func turnResult(reply *synccore.Message) (string, error) {
	for _, p := range reply.Parts {
		switch {
		case p.Type == synccore.PartError && p.Scope != synccore.ErrorScopeStep:
			return "", fmt.Errorf("the turn failed: %s: %s", p.Code, p.Message)
		case p.Type == synccore.PartAction && p.ActionType == string(bindings.ActionStop):
			return "", errors.New("the turn was stopped")
		}
	}
	return finalText(reply), nil
}

// finalText is the answer's final text: the text parts of the reply's last
// step that holds text (a tool loop's earlier steps say what they do next),
// joined with a blank line.
func finalText(reply *synccore.Message) string {
	last := -1
	for i, p := range reply.Parts {
		if p.Type == synccore.PartText {
			last = i
		}
	}
	if last < 0 {
		return ""
	}
	step := reply.Parts[last].StepID
	var texts []string
	for i, p := range reply.Parts {
		if p.Type != synccore.PartText {
			continue
		}
		if i == last || (step != "" && p.StepID == step) {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}
