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
	err = c.WaitFor(ctx, func(v bindings.View) bool {
		last, ok := v.Messages.Last()
		return ok && last.Sequence > sent.Sequence && last.Done()
	})
	if err != nil {
		log.Fatal(err)
	}
	reply, _ := c.View().Messages.Last()
	for _, p := range reply.Parts {
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
