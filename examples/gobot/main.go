// Command gobot is the README's Go example: it creates a session on a
// running server, asks for a tool loop, waits for the answer and prints it.
//
//	go run ./examples/gobot -url http://127.0.0.1:8080
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080", "the server's base URL")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	api := &bindings.API{BaseURL: *url}
	sess, err := api.CreateSession(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	// Dial runs the WebAssembly core under wazero and returns once it is live.
	c, err := bindings.Dial(ctx, bindings.Config{BaseURL: *url, SessionID: sess.SessionID})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:tools"})
	if err != nil {
		log.Fatal(err)
	}
	// The view stays exact through disconnects; wait until the reply is done.
	err = c.WaitFor(ctx, func(v synccore.View) bool {
		n := len(v.Messages)
		return n > 0 && v.Messages[n-1].Sequence > sent.Sequence && v.Messages[n-1].Done()
	})
	if err != nil {
		log.Fatal(err)
	}
	v := c.View()
	for _, p := range v.Messages[len(v.Messages)-1].Parts {
		switch p.Type {
		case synccore.PartTool:
			fmt.Printf("tool %s: %s\n", p.ToolName, p.State)
		case synccore.PartText:
			fmt.Printf("text: %s\n", p.Text)
		}
	}
	digest, err := c.Digest(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("digest", digest)
}
