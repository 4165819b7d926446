package bindings_test

import (
	"context"
	"fmt"
	"log"

	"github.com/agentsync/agentsync/bindings"
	"github.com/agentsync/agentsync/synccore"
)

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
