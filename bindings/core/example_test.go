package core_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentsync/agentsync/bindings/core"
	"github.com/agentsync/agentsync/synccore"
)

// Running the core without a server: feed it events, get commands.
func ExampleNewWasmCore() {
	ctx := context.Background()
	rt, err := core.NewRuntime(ctx, core.RuntimeConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer rt.Close(ctx)
	wc, err := core.NewWasmCore(ctx, rt)
	if err != nil {
		log.Fatal(err)
	}
	defer wc.Close()
	cmds, err := wc.Handle(synccore.Event{Type: synccore.EvStart, SessionID: "ses_1"})
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
