package bindings_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
)

// A bot that asks for a tool loop and prints the answer once it is done.
// The client keeps the view exact through disconnects by itself.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	api := &bindings.API{BaseURL: "http://127.0.0.1:8080"}
	sess, err := api.CreateSession(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	c, err := bindings.Dial(ctx, bindings.Config{BaseURL: api.BaseURL, SessionID: sess.SessionID})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	stop := c.Subscribe(func(v synccore.View) { fmt.Println("status", v.Status, "messages", len(v.Messages)) })
	defer stop()

	sent, err := c.Send(ctx, synccore.Part{Type: synccore.PartText, Text: "scenario:tools city=Paris"})
	if err != nil {
		log.Fatal(err)
	}
	err = c.WaitFor(ctx, func(v synccore.View) bool {
		last := v.Messages[len(v.Messages)-1]
		return last.Sequence > sent.Sequence && last.State == synccore.MessageDone
	})
	if err != nil {
		log.Fatal(err)
	}
	v := c.View()
	for _, p := range v.Messages[len(v.Messages)-1].Parts {
		fmt.Println(p.Type, p.ToolName, p.Text)
	}
}

// Running the core without a server: feed it events, get commands.
func ExampleNewWasmCore() {
	ctx := context.Background()
	rt, err := bindings.NewRuntime(ctx, bindings.RuntimeConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	core, err := bindings.NewWasmCore(ctx, rt)
	if err != nil {
		log.Fatal(err)
	}
	defer core.Close()
	cmds, err := core.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "ses_1"})
	if err != nil {
		log.Fatal(err)
	}
	for _, cmd := range cmds {
		fmt.Printf("%s %s%s\n", cmd.Type, cmd.Status, cmd.SessionID)
	}
	// Output:
	// status connecting
	// open_subscription ses_1
}
