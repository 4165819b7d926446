package session

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"github.com/agentsync/agentsync/synccore"
)

// MaxIdempotencyKey bounds an Idempotency-Key, in bytes.
const MaxIdempotencyKey = 255

// A post with an idempotency key gets a message id derived from the session
// and the key, so the store itself holds what was posted under that key: a
// retry (the client's after a lost answer, or a node's after a forward
// whose owner died) finds the message already committed, by whichever node,
// and answers it instead of posting again. Under the session's lease the
// lookup and the commit cannot interleave with another post.

// userMessageID is the id of a new user message: random without a key, the
// key's own id with one.
func userMessageID(sessionID, key string) (string, error) {
	if key == "" {
		return newID("msg_"), nil
	}
	if len(key) > MaxIdempotencyKey {
		return "", synccore.Errorf(synccore.CodeBadRequest, "Idempotency-Key is %d bytes, over the limit of %d", len(key), MaxIdempotencyKey)
	}
	sum := sha256.Sum256([]byte(sessionID + "\x00" + key))
	return "msg_" + hex.EncodeToString(sum[:10]), nil
}

// posted returns the message a post with the same key committed, if any.
// Caller holds s.mu.
func (s *live) posted(ctx context.Context, msgID string) (synccore.Message, bool, error) {
	prev, err := s.m.store.Message(ctx, s.id, msgID)
	if err == nil {
		return prev, true, nil
	}
	if errors.Is(err, &synccore.Error{Code: synccore.CodeNotFound}) {
		return synccore.Message{}, false, nil
	}
	return synccore.Message{}, false, err
}
