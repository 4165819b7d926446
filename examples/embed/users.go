package main

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/agentsync/agentsync/server/auth"
)

// cookieName is the app's sign-in cookie; browsers send it on the
// WebSocket upgrade too, so the agent's subscriptions need no ?token=.
const cookieName = "app_session"

// users is the app's own sign-in: a name gets a random token (a bearer
// token for programs, a cookie for browsers). It is also the agent
// server's auth.Authorizer: the principal is the user's name, so each user
// owns the sessions they create and sees only those.
type users struct {
	mu     sync.Mutex
	tokens map[string]string // token -> name
}

var _ auth.Authorizer = (*users)(nil)

func newUsers() *users { return &users{tokens: map[string]string{}} }

// login: POST /api/login {"name": "alice"} answers {"token": "..."} and
// sets the cookie. A real app checks a password or an identity provider.
func (u *users) login(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Name string `json:"name"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&req); err != nil || req.Name == "" {
		http.Error(w, `want {"name": "..."}`, http.StatusBadRequest)
		return
	}
	token := rand.Text()
	u.mu.Lock()
	u.tokens[token] = req.Name
	u.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: cookieName, Value: token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	_ = json.NewEncoder(w).Encode(map[string]string{"token": token})
}

// Authorize resolves the bearer token (which the agent server reads from
// "Authorization: Bearer" or the subscribe URL's ?token=), else the
// cookie, to the user's name.
func (u *users) Authorize(r *http.Request, token string) (string, error) {
	if token == "" {
		if c, err := r.Cookie(cookieName); err == nil {
			token = c.Value
		}
	}
	u.mu.Lock()
	name, ok := u.tokens[token]
	u.mu.Unlock()
	if !ok {
		return "", errors.Join(auth.ErrUnauthorized, errors.New("not signed in"))
	}
	return name, nil
}

// bearer is the app's own reading of "Authorization: Bearer <token>".
func bearer(r *http.Request) string {
	tok, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return tok
}
