// Command embed is an app that embeds the agent server: its own routes and
// its own sign-in, with the agentsync API mounted under /agent/ and each
// signed-in user seeing only their own sessions.
//
//	go run ./examples/embed -addr 127.0.0.1:8080 -db embed.db
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentsync/agentsync/server"
	"github.com/agentsync/agentsync/server/store/sqlite"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	db := flag.String("db", "embed.db", "SQLite file of the agent sessions")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	st, err := sqlite.Open(ctx, *db, sqlite.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	users := newUsers() // the app's own sign-in (users.go)
	agent, err := server.New(ctx, server.Config{Store: st, Authorizer: users})
	if err != nil {
		log.Fatal(err)
	}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "My app. Sign in: POST /api/login {\"name\": ...}; the agent is under /agent/.")
	})
	mux.HandleFunc("POST /api/login", users.login)
	mux.HandleFunc("GET /api/me", func(w http.ResponseWriter, r *http.Request) {
		name, err := users.Authorize(r, bearer(r))
		if err != nil {
			http.Error(w, "sign in first", http.StatusUnauthorized)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"name": name})
	})
	mux.Handle("/agent/", http.StripPrefix("/agent", agent))

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	fmt.Printf("listening on http://%s\n", ln.Addr())

	<-ctx.Done()
	// Drain the agent first (running turns close, subscribers get 1001),
	// then the app's server, then the store.
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := agent.Close(shutdown); err != nil {
		log.Print(err)
	}
	if err := hs.Shutdown(shutdown); err != nil {
		log.Print(err)
	}
}
